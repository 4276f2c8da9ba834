// How the cuDNN graphs pick engines (kernels/cuda/engine_pick.h), against a
// fake listing: no GPU, no cuDNN.
#include "kernels/cuda/engine_pick.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/compile_log.h"
#include "gtest/gtest.h"

namespace cnnbench::cuda {
namespace {

// Each stage lists `per_listing` configurations (appended, as cudnn-frontend
// does); whether one builds is given per stage by a predicate on its
// position within its listing. Records every Build call.
struct FakeEngine {
  bool runtime_compiled = false;
  bool strict_ok = true;  // passes the strict numerics filter
  bool builds = true;
};

class FakeListing : public EngineListing {
 public:
  explicit FakeListing(std::vector<FakeEngine> engines, bool relaxed = false)
      : engines_(std::move(engines)), relaxed_(relaxed) {}

  absl::StatusOr<int64_t> List(const EngineStage& stage) override {
    stages.push_back(stage);
    for (const FakeEngine& e : engines_) {
      const bool barred =
          e.runtime_compiled != stage.runtime_compiled || (!stage.relaxed && !e.strict_ok);
      listed_.push_back({e, barred});
    }
    return static_cast<int64_t>(listed_.size());
  }

  EngineBuild Build(int64_t index) override {
    builds.push_back(index);
    const auto& [engine, barred] = listed_.at(static_cast<size_t>(index));
    if (barred) return {EngineBuildResult::kBarred, ""};
    attempts.push_back(index);
    if (engine.builds) return {EngineBuildResult::kBuilt, ""};
    return {EngineBuildResult::kFailed, "CUDNN_STATUS_NOT_SUPPORTED at " + std::to_string(index)};
  }

  bool has_relaxed() const override { return relaxed_; }

  // A recorded engine is the fake engine `recordable[engine_id]`, appended
  // unfiltered; an id not there is refused as cuDNN refuses an unknown one.
  absl::StatusOr<int64_t> ListRecorded(const RecordedEngine& engine) override {
    recorded_listings.push_back(engine.engine_id);
    auto found = recordable.find(engine.engine_id);
    if (found == recordable.end())
      return absl::InvalidArgumentError("CUDNN_STATUS_BAD_PARAM: no engine " +
                                        std::to_string(engine.engine_id));
    listed_.push_back({found->second, false});
    return static_cast<int64_t>(listed_.size());
  }

  std::map<int64_t, FakeEngine> recordable;
  std::vector<int64_t> recorded_listings;

  bool IsRuntimeCompiled(int64_t index) const {
    return listed_.at(static_cast<size_t>(index)).first.runtime_compiled;
  }

  std::vector<EngineStage> stages;
  std::vector<int64_t> builds, attempts;

 private:
  std::vector<FakeEngine> engines_;
  bool relaxed_;
  std::vector<std::pair<FakeEngine, bool>> listed_;
};

TEST(EnginePickTest, PrecompiledEnginesComeFirstAndRuntimeCompiledAreNotListed) {
  FakeListing listing({{true, true, true}, {false, true, true}, {false, true, true}});
  auto pick = PickEngines(listing, /*wanted=*/4, /*runtime_compiled_attempts=*/2);
  ASSERT_TRUE(pick.ok()) << pick.status();
  EXPECT_EQ(pick->built, (std::vector<int64_t>{1, 2}));
  EXPECT_FALSE(pick->runtime_compiled);
  EXPECT_FALSE(pick->relaxed);
  EXPECT_EQ(pick->runtime_compiled_tried, 0);
  ASSERT_EQ(listing.stages.size(), 1u);  // no run-time compiled listing was needed
  EXPECT_FALSE(listing.stages[0].runtime_compiled);
}

TEST(EnginePickTest, StopsAtWantedCandidates) {
  FakeListing listing(std::vector<FakeEngine>(10, {false, true, true}));
  auto pick = PickEngines(listing, 3, 2);
  ASSERT_TRUE(pick.ok());
  EXPECT_EQ(pick->built.size(), 3u);
  EXPECT_EQ(listing.attempts.size(), 3u);
}

TEST(EnginePickTest, RuntimeCompiledBuildsStopAtTheCapAndTheReasonCountsThem) {
  // No precompiled engine builds; five run-time compiled ones would all fail.
  std::vector<FakeEngine> engines = {{false, true, false}, {false, true, false}};
  for (int i = 0; i < 5; ++i) engines.push_back({true, true, false});
  FakeListing listing(engines);
  auto pick = PickEngines(listing, 4, /*runtime_compiled_attempts=*/2);
  ASSERT_TRUE(pick.ok());
  EXPECT_TRUE(pick->built.empty());
  EXPECT_EQ(pick->precompiled_tried, 2);
  EXPECT_EQ(pick->runtime_compiled_tried, 2);  // not 5: the cap
  EXPECT_TRUE(pick->capped);
  int runtime_attempts = 0;
  for (int64_t i : listing.attempts) runtime_attempts += listing.IsRuntimeCompiled(i) ? 1 : 0;
  EXPECT_EQ(runtime_attempts, 2);
  const std::string reason = NoEngineReason(*pick, 2);
  EXPECT_TRUE(absl::StrContains(reason, "2 precompiled and 2 run-time compiled builds tried"))
      << reason;
  EXPECT_TRUE(absl::StrContains(reason, "--cuda_rtc_attempts")) << reason;
  EXPECT_TRUE(absl::StrContains(reason, "CUDNN_STATUS_NOT_SUPPORTED")) << reason;
}

TEST(EnginePickTest, OneRuntimeCompiledSuccessIsEnough) {
  std::vector<FakeEngine> engines = {{false, true, false}, {true, true, false},
                                     {true, true, true}, {true, true, true}};
  FakeListing listing(engines);
  auto pick = PickEngines(listing, 4, 2);
  ASSERT_TRUE(pick.ok());
  ASSERT_EQ(pick->built.size(), 1u);
  EXPECT_TRUE(pick->runtime_compiled);
  EXPECT_TRUE(listing.IsRuntimeCompiled(pick->built[0]));
  EXPECT_EQ(pick->runtime_compiled_tried, 2);
  EXPECT_FALSE(pick->capped);
}

TEST(EnginePickTest, ACapOfZeroNeverBuildsRuntimeCompiledEngines) {
  FakeListing listing({{false, true, false}, {true, true, true}});
  auto pick = PickEngines(listing, 1, 0);
  ASSERT_TRUE(pick.ok());
  EXPECT_TRUE(pick->built.empty());
  EXPECT_EQ(pick->runtime_compiled_tried, 0);
  for (int64_t i : listing.attempts) EXPECT_FALSE(listing.IsRuntimeCompiled(i)) << i;
}

TEST(EnginePickTest, BarredConfigurationsAreNotAttempts) {
  // Three configurations the strict filter bars, then one that builds.
  FakeListing listing(
      {{false, false, true}, {false, false, true}, {false, false, true}, {false, true, true}});
  auto pick = PickEngines(listing, 1, 2);
  ASSERT_TRUE(pick.ok());
  EXPECT_EQ(pick->built, (std::vector<int64_t>{3}));
  EXPECT_EQ(pick->precompiled_tried, 1);
}

TEST(EnginePickTest, TheRelaxedFilterOnlyWhereTheStrictOneLeavesNothing) {
  // Only engines with a reduced-precision reduction build (the first
  // convolution's bf16 weight gradient, say).
  FakeListing relaxed_listing({{false, false, true}, {false, false, true}}, /*relaxed=*/true);
  auto pick = PickEngines(relaxed_listing, 4, 2);
  ASSERT_TRUE(pick.ok());
  EXPECT_FALSE(pick->built.empty());
  EXPECT_TRUE(pick->relaxed);
  EXPECT_FALSE(pick->runtime_compiled);

  // Where a strict engine builds, the relaxed filter is never listed.
  FakeListing strict_listing({{false, false, true}, {false, true, true}}, /*relaxed=*/true);
  pick = PickEngines(strict_listing, 4, 2);
  ASSERT_TRUE(pick.ok());
  EXPECT_FALSE(pick->relaxed);
  EXPECT_EQ(pick->built, (std::vector<int64_t>{1}));
  for (const EngineStage& stage : strict_listing.stages) EXPECT_FALSE(stage.relaxed);

  // Without a relaxed filter, nothing builds and the reason says so.
  FakeListing none({{false, false, true}}, /*relaxed=*/false);
  pick = PickEngines(none, 4, 2);
  ASSERT_TRUE(pick.ok());
  EXPECT_TRUE(pick->built.empty());
}

TEST(EnginePickTest, TheCapCoversBothFilters) {
  // Every run-time compiled engine fails, under either filter: two pass
  // the strict filter, two only the relaxed one.
  FakeListing listing({{true, true, false}, {true, true, false}, {true, false, false},
                       {true, false, false}},
                      /*relaxed=*/true);
  auto pick = PickEngines(listing, 1, 3);
  ASSERT_TRUE(pick.ok());
  EXPECT_EQ(pick->runtime_compiled_tried, 3);  // two strict, then one relaxed
  EXPECT_EQ(listing.attempts.size(), 3u);
  EXPECT_TRUE(pick->capped);
  bool relaxed_listed = false;
  for (const EngineStage& stage : listing.stages) relaxed_listed = relaxed_listed || stage.relaxed;
  EXPECT_TRUE(relaxed_listed);
}

TEST(EnginePickTest, TheBackendsBudgetOfFailuresStopsLaterGraphs) {
  // Every graph has only run-time compiled engines, and none builds.
  std::vector<FakeEngine> engines(6, {true, true, false});
  RuntimeCompiledBudget budget(RuntimeCompiledFailureBudget(2));
  ASSERT_EQ(budget.failures_left.load(), 8);
  int tried = 0;
  for (int graph = 0; graph < 10; ++graph) {
    FakeListing listing(engines);
    auto pick = PickEngines(listing, 1, 2, &budget);
    ASSERT_TRUE(pick.ok());
    EXPECT_TRUE(pick->built.empty());
    tried += pick->runtime_compiled_tried;
    if (graph >= 4) {
      EXPECT_EQ(pick->runtime_compiled_tried, 0) << graph;
      EXPECT_TRUE(pick->budget_spent) << graph;
      EXPECT_TRUE(absl::StrContains(NoEngineReason(*pick, 2), "budget")) << graph;
    }
  }
  EXPECT_EQ(tried, 8);  // 4 graphs of 2, then none: 10 graphs cost 8 builds, not 20
  // A success spends nothing.
  RuntimeCompiledBudget fresh(1);
  FakeListing builds({{true, true, true}});
  auto pick = PickEngines(builds, 1, 2, &fresh);
  ASSERT_TRUE(pick.ok());
  EXPECT_EQ(pick->built.size(), 1u);
  EXPECT_EQ(fresh.failures_left.load(), 1);
}

TEST(EnginePickTest, TheProcessBoundCountsSuccessesToo) {
  // Every graph has only run-time compiled engines, and each builds.
  SetRuntimeCompiledProcessBuilds(3);
  std::vector<FakeEngine> engines(4, {true, true, true});
  int built = 0;
  for (int graph = 0; graph < 5; ++graph) {
    RuntimeCompiledBudget budget(RuntimeCompiledFailureBudget(2));  // a backend per graph
    FakeListing listing(engines);
    auto pick = PickEngines(listing, 1, 2, &budget);
    ASSERT_TRUE(pick.ok()) << pick.status();
    built += static_cast<int>(pick->built.size());
    if (graph >= 3) {
      EXPECT_TRUE(pick->built.empty()) << graph;
      EXPECT_TRUE(pick->process_bound_spent) << graph;
      EXPECT_TRUE(absl::StrContains(NoEngineReason(*pick, 2), "--cuda_rtc_process_builds"))
          << NoEngineReason(*pick, 2);
    }
  }
  EXPECT_EQ(built, 3) << "three successful builds spend the process's three";
  EXPECT_EQ(RuntimeCompiledProcessBuildsLeft(), 0);
  // Precompiled engines are not bounded by it.
  FakeListing precompiled({{false, true, true}});
  auto pick = PickEngines(precompiled, 1, 2);
  ASSERT_TRUE(pick.ok());
  EXPECT_EQ(pick->built.size(), 1u);
  SetRuntimeCompiledProcessBuilds(-1);
  EXPECT_EQ(RuntimeCompiledProcessBuildsLeft(), kDefaultRuntimeCompiledProcessBuilds);
}

TEST(EnginePickTest, APassedCompileDeadlineStopsBeforeTheNextBuild) {
  SetCompileDeadline(1e-9);  // long past
  FakeListing listing({{false, true, true}, {false, true, true}});
  absl::StatusOr<EnginePick> pick;
  {
    CompileLogLayer layer("res2a_branch2b");
    pick = PickEngines(listing, 4, 2);
  }
  SetCompileDeadline(0);
  ASSERT_FALSE(pick.ok());
  EXPECT_TRUE(IsCompileDeadline(pick.status())) << pick.status();
  EXPECT_TRUE(absl::StrContains(pick.status().message(), "res2a_branch2b")) << pick.status();
  EXPECT_TRUE(absl::StrContains(pick.status().message(), "0 precompiled")) << pick.status();
  EXPECT_TRUE(listing.builds.empty()) << "nothing is built past the deadline";
  // Without a deadline the same listing builds.
  FakeListing again({{false, true, true}});
  EXPECT_TRUE(PickEngines(again, 4, 2).ok());
}

TEST(EnginePickTest, TheDefaultCapReadsTheEnvironment) {
  unsetenv("CNNBENCH_CUDA_RTC_ATTEMPTS");
  EXPECT_EQ(DefaultRuntimeCompiledAttempts(), 2);
  setenv("CNNBENCH_CUDA_RTC_ATTEMPTS", "5", 1);
  EXPECT_EQ(DefaultRuntimeCompiledAttempts(), 5);
  EXPECT_EQ(ResolveRuntimeCompiledAttempts(-1), 5);
  EXPECT_EQ(ResolveRuntimeCompiledAttempts(1), 1);
  setenv("CNNBENCH_CUDA_RTC_ATTEMPTS", "lots", 1);
  EXPECT_EQ(DefaultRuntimeCompiledAttempts(), 2);
  unsetenv("CNNBENCH_CUDA_RTC_ATTEMPTS");
}

// The plan-choice file's replay (plan_choices.h): a recorded engine that
// builds is the only one built, with nothing listed or built beside it.
TEST(EnginePickTest, ARecordedEngineThatBuildsIsTheOnlyOneBuilt) {
  FakeListing listing(std::vector<FakeEngine>(6, {false, true, true}));
  listing.recordable[41] = {false, true, true};
  RecordedEngine recorded;
  recorded.engine_id = 41;
  recorded.relaxed = true;
  auto pick = PickEngines(listing, /*wanted=*/4, 2, nullptr, &recorded);
  ASSERT_TRUE(pick.ok()) << pick.status();
  EXPECT_TRUE(pick->from_record);
  EXPECT_EQ(pick->built, (std::vector<int64_t>{0}));
  EXPECT_TRUE(pick->relaxed) << "the recorded filter is kept, for the plan's name";
  EXPECT_TRUE(listing.stages.empty()) << "the heuristics were not asked";
  EXPECT_EQ(listing.builds, (std::vector<int64_t>{0}));
  EXPECT_TRUE(pick->record_error.empty());
}

TEST(EnginePickTest, ARecordedEngineThatNoLongerBuildsFallsBackToTheSearch) {
  for (bool known : {true, false}) {
    FakeListing listing({{false, true, true}, {false, true, true}});
    if (known) listing.recordable[7] = {false, true, /*builds=*/false};
    RecordedEngine recorded;
    recorded.engine_id = 7;
    auto pick = PickEngines(listing, 4, 2, nullptr, &recorded);
    ASSERT_TRUE(pick.ok()) << pick.status();
    EXPECT_FALSE(pick->from_record) << known;
    EXPECT_FALSE(pick->record_error.empty()) << known;
    EXPECT_TRUE(absl::StrContains(pick->record_error, known ? "NOT_SUPPORTED" : "BAD_PARAM"))
        << pick->record_error;
    // The search's candidates, after the recorded one's position where it was listed.
    EXPECT_EQ(pick->built, known ? (std::vector<int64_t>{1, 2}) : (std::vector<int64_t>{0, 1}));
    EXPECT_EQ(listing.stages.size(), 1u) << known;
  }
}

TEST(EnginePickTest, ARecordedRuntimeCompiledEngineSpendsTheProcessBound) {
  SetRuntimeCompiledProcessBuilds(1);
  RecordedEngine recorded;
  recorded.engine_id = 3;
  recorded.runtime_compiled = true;
  FakeListing first({{false, true, false}});
  first.recordable[3] = {true, true, true};
  auto pick = PickEngines(first, 1, 2, nullptr, &recorded);
  ASSERT_TRUE(pick.ok()) << pick.status();
  EXPECT_TRUE(pick->from_record);
  EXPECT_TRUE(pick->runtime_compiled);
  EXPECT_EQ(pick->runtime_compiled_tried, 1);
  EXPECT_EQ(RuntimeCompiledProcessBuildsLeft(), 0);
  // Spent: the next graph's recorded run-time compiled engine is not built.
  FakeListing second({{false, true, true}});
  second.recordable[3] = {true, true, true};
  pick = PickEngines(second, 1, 2, nullptr, &recorded);
  ASSERT_TRUE(pick.ok()) << pick.status();
  EXPECT_FALSE(pick->from_record);
  EXPECT_TRUE(absl::StrContains(pick->record_error, "--cuda_rtc_process_builds"))
      << pick->record_error;
  EXPECT_TRUE(second.recorded_listings.empty());
  EXPECT_EQ(pick->built, (std::vector<int64_t>{0})) << "the precompiled search still runs";
  SetRuntimeCompiledProcessBuilds(-1);
}

TEST(EnginePickTest, APassedDeadlineStopsBeforeTheRecordedEngine) {
  SetCompileDeadline(1e-9);
  FakeListing listing({{false, true, true}});
  listing.recordable[1] = {false, true, true};
  RecordedEngine recorded;
  recorded.engine_id = 1;
  auto pick = PickEngines(listing, 1, 2, nullptr, &recorded);
  SetCompileDeadline(0);
  ASSERT_FALSE(pick.ok());
  EXPECT_TRUE(IsCompileDeadline(pick.status())) << pick.status();
  EXPECT_TRUE(listing.recorded_listings.empty());
}

}  // namespace
}  // namespace cnnbench::cuda
