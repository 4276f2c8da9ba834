#include "kernels/cuda/engine_pick.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/status.h"

namespace cnnbench::cuda {

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
                                       RuntimeCompiledBudget* budget) {
  EnginePick pick;
  if (wanted < 1) wanted = 1;
  int64_t next = 0;  // the first configuration of the next listing
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
        const EngineBuild built = listing.Build(i);
        if (built.result == EngineBuildResult::kBarred) continue;
        ++(runtime_compiled ? pick.runtime_compiled_tried : pick.precompiled_tried);
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
      ")", pick.last_error.empty() ? "" : absl::StrCat(" (last: ", pick.last_error, ")"));
}

}  // namespace cnnbench::cuda
