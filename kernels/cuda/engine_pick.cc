#include "kernels/cuda/engine_pick.h"

#include <atomic>
#include <chrono>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/compile_log.h"
#include "core/status.h"

namespace cnnbench::cuda {
namespace {

int EnvProcessBuilds() {
  const char* env = std::getenv("CNNBENCH_CUDA_RTC_PROCESS_BUILDS");
  int value = 0;
  if (env != nullptr && absl::SimpleAtoi(env, &value) && value >= 0) return value;
  return kDefaultRuntimeCompiledProcessBuilds;
}

std::atomic<int>& ProcessBuildsLeft() {
  static std::atomic<int> left{EnvProcessBuilds()};
  return left;
}

const char* StageName(const EngineStage& stage) {
  return stage.runtime_compiled ? (stage.relaxed ? "rtc relaxed" : "rtc")
                                 : (stage.relaxed ? "precompiled relaxed" : "precompiled");
}

}  // namespace

int RuntimeCompiledProcessBuildsLeft() { return ProcessBuildsLeft().load(); }

void SetRuntimeCompiledProcessBuilds(int builds) {
  ProcessBuildsLeft() = builds >= 0 ? builds : EnvProcessBuilds();
}

int DefaultRuntimeCompiledAttempts() {
  constexpr int kDefault = 2;
  const char* env = std::getenv("CNNBENCH_CUDA_RTC_ATTEMPTS");
  int value = 0;
  if (env != nullptr && absl::SimpleAtoi(env, &value) && value >= 0) return value;
  return kDefault;
}

std::string EnginePick::Tried() const {
  return absl::StrCat(precompiled_tried, " precompiled and ", runtime_compiled_tried,
                      " run-time compiled builds tried of ", listed, " listed");
}

absl::StatusOr<EnginePick> PickEngines(EngineListing& listing, int wanted,
                                       int runtime_compiled_attempts,
                                       RuntimeCompiledBudget* budget,
                                       const RecordedEngine* recorded) {
  EnginePick pick;
  if (wanted < 1) wanted = 1;
  int64_t next = 0;  // the first configuration of the next listing
  if (recorded != nullptr) {
    RETURN_IF_ERROR(CheckCompileDeadline("recorded engine", pick.Tried()));
    const bool rtc = recorded->runtime_compiled;
    if (rtc && ProcessBuildsLeft().fetch_sub(1) <= 0) {
      ProcessBuildsLeft().fetch_add(1);
      pick.record_error =
          "the process's bound on run-time compiled builds is spent (--cuda_rtc_process_builds)";
    } else {
      const absl::StatusOr<int64_t> count = listing.ListRecorded(*recorded);
      if (!count.ok()) {
        if (rtc) ProcessBuildsLeft().fetch_add(1);
        pick.record_error = std::string(count.status().message());
      } else {
        next = pick.listed = *count;
        const auto build_start = std::chrono::steady_clock::now();
        const EngineBuild built = listing.Build(*count - 1);
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - build_start)
                .count();
        if (built.result == EngineBuildResult::kBarred && rtc) ProcessBuildsLeft().fetch_add(1);
        if (built.result != EngineBuildResult::kBarred) {
          ++(rtc ? pick.runtime_compiled_tried : pick.precompiled_tried);
        }
        if (rtc && built.result != EngineBuildResult::kBarred) {
          pick.runtime_compiled_seconds += seconds;
          CompileLog({{"rtc_build", absl::StrCat(*count - 1, " (recorded)")},
                      {"result", built.result == EngineBuildResult::kBuilt ? "built" : "failed"},
                      {"seconds", CompileLogSeconds(seconds)},
                      {"process_rtc_builds_left", absl::StrCat(ProcessBuildsLeft().load())}});
        }
        if (built.result == EngineBuildResult::kBuilt) {
          pick.built.push_back(*count - 1);
          pick.from_record = true;
          pick.runtime_compiled = rtc;
          pick.relaxed = recorded->relaxed;
          return pick;
        }
        pick.record_error = built.result == EngineBuildResult::kBarred
                                ? "the library bars it now"
                                : built.message;
        if (rtc && budget != nullptr && built.result == EngineBuildResult::kFailed)
          budget->failures_left.fetch_sub(1);
      }
    }
  }
  for (bool relaxed : {false, true}) {
    if (relaxed && !listing.has_relaxed()) break;
    for (bool runtime_compiled : {false, true}) {
      if (runtime_compiled && pick.runtime_compiled_tried >= runtime_compiled_attempts) {
        pick.capped = true;  // not listed: the cap is spent (or 0)
        continue;
      }
      if (runtime_compiled && budget != nullptr && budget->failures_left.load() <= 0) {
        pick.budget_spent = true;
        continue;
      }
      if (runtime_compiled && ProcessBuildsLeft().load() <= 0) {
        pick.process_bound_spent = true;
        continue;
      }
      ASSIGN_OR_RETURN(const int64_t count, listing.List({runtime_compiled, relaxed}));
      pick.listed = count;
      const size_t want = runtime_compiled ? 1 : static_cast<size_t>(wanted);
      for (int64_t i = next; i < count && pick.built.size() < want; ++i) {
        if (runtime_compiled && pick.runtime_compiled_tried >= runtime_compiled_attempts) {
          pick.capped = true;
          break;
        }
        if (runtime_compiled && budget != nullptr && budget->failures_left.load() <= 0) {
          pick.budget_spent = true;
          break;
        }
        RETURN_IF_ERROR(
            CheckCompileDeadline(StageName({runtime_compiled, relaxed}), pick.Tried()));
        if (runtime_compiled && ProcessBuildsLeft().fetch_sub(1) <= 0) {
          ProcessBuildsLeft().fetch_add(1);  // none was left: nothing spent
          pick.process_bound_spent = true;
          break;
        }
        const auto build_start = std::chrono::steady_clock::now();
        const EngineBuild built = listing.Build(i);
        if (built.result == EngineBuildResult::kBarred) {
          if (runtime_compiled) ProcessBuildsLeft().fetch_add(1);  // not a build
          continue;
        }
        ++(runtime_compiled ? pick.runtime_compiled_tried : pick.precompiled_tried);
        if (runtime_compiled) {
          const double seconds =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - build_start)
                  .count();
          pick.runtime_compiled_seconds += seconds;
          CompileLog({{"rtc_build", absl::StrCat(i)},
                      {"result", built.result == EngineBuildResult::kBuilt ? "built" : "failed"},
                      {"seconds", CompileLogSeconds(seconds)},
                      {"process_rtc_builds_left", absl::StrCat(ProcessBuildsLeft().load())}});
        }
        if (built.result == EngineBuildResult::kBuilt) {
          pick.built.push_back(i);
        } else {
          pick.last_error = built.message;
          if (runtime_compiled && budget != nullptr) budget->failures_left.fetch_sub(1);
        }
      }
      next = count;
      if (!pick.built.empty()) {
        pick.runtime_compiled = runtime_compiled;
        pick.relaxed = relaxed;
        return pick;
      }
    }
  }
  return pick;
}

std::string NoEngineReason(const EnginePick& pick, int runtime_compiled_attempts) {
  return absl::StrCat(
      "none of cuDNN's engine configurations builds (", pick.Tried(),
      pick.capped ? absl::StrCat("; the cap of ", runtime_compiled_attempts,
                                 " run-time compiled builds was reached: --cuda_rtc_attempts")
                  : "",
      pick.budget_spent ? "; the backend's budget of failed run-time compiled builds is spent "
                          "(4 x --cuda_rtc_attempts): no more are tried"
                        : "",
      pick.process_bound_spent
          ? "; the process's bound on run-time compiled builds is spent "
            "(--cuda_rtc_process_builds): no more are tried"
          : "",
      ")", pick.last_error.empty() ? "" : absl::StrCat(" (last: ", pick.last_error, ")"));
}

}  // namespace cnnbench::cuda
