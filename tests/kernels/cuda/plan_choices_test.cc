// The plan-choice file (kernels/cuda/plan_choices.h): written, read back in
// another process's object, bound to one identity, and a missing, corrupt
// or foreign file ignored with a compile-log line. No GPU, no cuDNN: the
// replay of a recorded engine is engine_pick_test's.
#include "kernels/cuda/plan_choices.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/compile_log.h"
#include "gtest/gtest.h"

namespace cnnbench::cuda {
namespace {

class PlanChoicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* dir = std::getenv("TEST_TMPDIR");
    path_ = std::string(dir != nullptr ? dir : "/tmp") + "/plan_choices_" +
            std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".tsv";
    std::remove(path_.c_str());
    SetCompileLog(true);
    SetCompileLogSink([this](absl::string_view line) { log_.emplace_back(line); });
  }
  void TearDown() override {
    SetCompileLogSink(nullptr);
    SetCompileLog(false);
    std::remove(path_.c_str());
  }
  bool Logged(absl::string_view what) const {
    for (const std::string& line : log_)
      if (absl::StrContains(line, "plan_cache") && absl::StrContains(line, what)) return true;
    return false;
  }
  std::string Read() const {
    std::ifstream in(path_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  static PlanChoice Choice(int64_t engine, std::string form = "") {
    RecordedEngine e;
    e.engine_id = engine;
    e.knobs = {{2, 1}, {3, 0}};
    e.runtime_compiled = engine % 2 == 1;
    PlanChoice c;
    c.form = std::move(form);
    c.engines = {e};
    c.milliseconds = 0.25;
    return c;
  }

  std::string path_;
  std::vector<std::string> log_;
};

TEST_F(PlanChoicesTest, AnEngineRoundTripsAsText) {
  RecordedEngine e;
  e.engine_id = 12;
  e.knobs = {{3, 0}, {2, -1}};
  e.runtime_compiled = true;
  e.relaxed = true;
  auto back = RecordedEngine::Parse(e.ToText());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->engine_id, 12);
  EXPECT_EQ(back->knobs, (std::vector<std::pair<int, int64_t>>{{2, -1}, {3, 0}})) << "sorted";
  EXPECT_TRUE(back->runtime_compiled && back->relaxed);
  for (const char* bad : {"", "engine=x;knobs=;rtc=0;relaxed=0", "engine=1;knobs=2;rtc=0;relaxed=0",
                          "engine=1;knobs=;rtc=2;relaxed=0", "engine=1;knobs=;rtc=0",
                          "engine=1;engine=2;knobs=;rtc=0;relaxed=0", "engine=-3;knobs=;rtc=0;relaxed=0"})
    EXPECT_FALSE(RecordedEngine::Parse(bad).ok()) << bad;
}

// A knob cudnn-frontend cannot name comes back as type 0 (NOT_SET); an
// engine with one cannot be built again from its id and knobs, so it is
// neither recorded nor replayed (seen on an H100: the replay built another
// configuration or failed as stale).
TEST_F(PlanChoicesTest, AnEngineWithAKnobTheFrontendCannotNameIsNotReplayable) {
  RecordedEngine e;
  e.engine_id = 57;
  e.knobs = {{3, 7}, {6, 3}};
  EXPECT_TRUE(e.CheckReplayable().ok());
  e.knobs = {{0, 5}, {3, 7}, {6, 3}};
  const absl::Status unnamed = e.CheckReplayable();
  EXPECT_EQ(unnamed.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(unnamed.message(), "engine 57")) << unnamed;
  EXPECT_TRUE(absl::StrContains(unnamed.message(), "does not name")) << unnamed;
  e.knobs = {{3, 7}, {1002, 2}};
  EXPECT_EQ(e.CheckReplayable().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(PlanChoicesTest, RecordedChoicesAreReadByTheNextProcess) {
  {
    PlanChoices first;
    EXPECT_TRUE(absl::StrContains(first.Open(path_), "starting empty"));
    EXPECT_TRUE(Logged("starting empty"));
    EXPECT_FALSE(first.Find("a").has_value()) << "nothing before Bind";
    EXPECT_TRUE(first.Bind("cudnn 9.1 / H200 sm_90"));
    ASSERT_TRUE(first.Record("conv(a)/bf16/NHWC/fprop", Choice(5)).ok());
    ASSERT_TRUE(first.Record("bn(b)/bf16", Choice(8, "mask/no")).ok());
    EXPECT_EQ(first.recorded(), 2);
  }
  EXPECT_TRUE(absl::StrContains(Read(), "identity\tcudnn 9.1 / H200 sm_90")) << Read();
  PlanChoices second;
  EXPECT_TRUE(absl::StrContains(second.Open(path_), "2 choices read"));
  EXPECT_FALSE(second.Find("conv(a)/bf16/NHWC/fprop").has_value()) << "not before Bind";
  EXPECT_TRUE(second.Bind("cudnn 9.1 / H200 sm_90"));
  auto conv = second.Find("conv(a)/bf16/NHWC/fprop");
  ASSERT_TRUE(conv.has_value());
  EXPECT_EQ(*conv, Choice(5));
  EXPECT_EQ(conv->milliseconds, 0.25);
  auto bn = second.Find("bn(b)/bf16");
  ASSERT_TRUE(bn.has_value());
  EXPECT_EQ(bn->form, "mask/no");
  EXPECT_EQ(second.hits(), 2);
  EXPECT_FALSE(second.Find("conv(c)/bf16/NHWC/fprop").has_value());
  // Forgotten (it no longer builds): gone from the file too.
  second.Forget("bn(b)/bf16");
  PlanChoices third;
  third.Open(path_);
  third.Bind("cudnn 9.1 / H200 sm_90");
  EXPECT_FALSE(third.Find("bn(b)/bf16").has_value());
  EXPECT_TRUE(third.Find("conv(a)/bf16/NHWC/fprop").has_value());
}

TEST_F(PlanChoicesTest, AnotherIdentitysChoicesAreDroppedAndSaid) {
  {
    PlanChoices first;
    first.Open(path_);
    first.Bind("cudnn 9.1 / H100 sm_90");
    ASSERT_TRUE(first.Record("k", Choice(1)).ok());
  }
  PlanChoices second;
  second.Open(path_);
  EXPECT_TRUE(second.Bind("cudnn 9.2 / H200 sm_90"));
  EXPECT_FALSE(second.Find("k").has_value());
  EXPECT_TRUE(Logged("not cudnn 9.2 / H200 sm_90")) << "the log says why";
  EXPECT_EQ(second.size(), 0u);
  ASSERT_TRUE(second.Record("j", Choice(2)).ok());
  EXPECT_TRUE(absl::StrContains(Read(), "cudnn 9.2")) << "written afresh";
  EXPECT_FALSE(absl::StrContains(Read(), "H100"));
  // A second identity in one process turns the cache off there.
  EXPECT_FALSE(second.Bind("cudnn 9.2 / B200 sm_100"));
  EXPECT_FALSE(second.Find("j").has_value());
  EXPECT_FALSE(second.enabled());
  EXPECT_TRUE(Logged("a second identity"));
}

TEST_F(PlanChoicesTest, ACorruptFileIsIgnoredWithItsLineAndWrittenAfresh) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not a plan file\n", "not a plan-choice file"},
      {"# cnnbench cuda plan choices v1\nidentity\tx\nchoice\tk\t-\tfast\tengine=1;knobs=;rtc=0;relaxed=0\n",
       "line 3"},
      {"# cnnbench cuda plan choices v1\nidentity\tx\nchoice\tk\t-\t1\tengine=1\n", "line 3"},
      {"# cnnbench cuda plan choices v1\nchoice\tk\t-\t1\tengine=1;knobs=;rtc=0;relaxed=0\n",
       "no identity"},
      {"# cnnbench cuda plan choices v1\nidentity\tx\nplan\tk\n", "unknown record"},
  };
  for (const auto& [text, why] : cases) {
    log_.clear();
    { std::ofstream(path_) << text; }
    PlanChoices choices;
    const std::string read = choices.Open(path_);
    EXPECT_TRUE(absl::StrContains(read, "ignored")) << read;
    EXPECT_TRUE(absl::StrContains(read, why)) << read;
    EXPECT_TRUE(Logged(why)) << why;
    choices.Bind("x");
    EXPECT_EQ(choices.size(), 0u);
    ASSERT_TRUE(choices.Record("k", Choice(4)).ok());
    PlanChoices again;
    EXPECT_TRUE(absl::StrContains(again.Open(path_), "1 choices read")) << text;
  }
}

TEST_F(PlanChoicesTest, AnUnwritableFileIsAnErrorLoggedOnceAndTheChoiceKept) {
  PlanChoices choices;
  choices.Open("/nonexistent-folder/plans.tsv");
  choices.Bind("x");
  const absl::Status first = choices.Record("k", Choice(1));
  EXPECT_FALSE(first.ok());
  EXPECT_TRUE(absl::StrContains(first.message(), "/nonexistent-folder")) << first;
  EXPECT_FALSE(choices.Record("j", Choice(2)).ok());
  int lines = 0;
  for (const std::string& line : log_) lines += absl::StrContains(line, "cannot write") ? 1 : 0;
  EXPECT_EQ(lines, 1);
  EXPECT_TRUE(choices.Find("k").has_value()) << "kept for this process";
  EXPECT_FALSE(choices.Record("a\tb", Choice(1)).ok()) << "a tab would break the file";
  EXPECT_FALSE(choices.Record("", Choice(1)).ok());
}

TEST_F(PlanChoicesTest, NoPathNoCache) {
  PlanChoices choices;
  EXPECT_EQ(choices.Open(""), "off");
  EXPECT_FALSE(choices.enabled());
  choices.Bind("x");
  EXPECT_TRUE(choices.Record("k", Choice(1)).ok());
  EXPECT_FALSE(choices.Find("k").has_value());
  EXPECT_EQ(ConvChoiceKey("conv(a)/bf16/NHWC", "fprop", false), "conv(a)/bf16/NHWC/fprop");
  EXPECT_EQ(ConvChoiceKey("conv(a)/bf16/NHWC", "dgrad", true),
            "conv(a)/bf16/NHWC/dgrad/deterministic");
}

}  // namespace
}  // namespace cnnbench::cuda
