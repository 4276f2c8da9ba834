// How the cuda backend's cuDNN graphs (convolution, batch norm) pick engine
// configurations, with the library behind an interface so the rules run
// and are tested without a GPU or cuDNN:
//
//   1. the heuristics' precompiled engines under the strict numerics filter;
//   2. where none builds, engines compiled at run time (NVRTC, seconds each)
//      under that filter, at most `runtime_compiled_attempts` builds of them
//      for the whole graph (one success or that many failures);
//   3. where still none builds and the graph has a relaxed filter (the
//      convolution's: reduced-precision reductions allowed, as PyTorch does
//      by default), steps 1 and 2 again under it, the run-time compiled
//      builds counted against the same cap.
//
// Run-time compiled builds are also bounded per process, successes
// counted too (RuntimeCompiledProcessBuilds), and each is logged with its
// seconds; the compile deadline (core/compile_log.h) is checked before each
// build. A configuration the filter bars costs nothing to skip and is not an
// attempt.
//
// Given a recorded choice (plan_choices.h: the plan-choice file), that one
// configuration is listed and built first; when it builds it is the only
// one (nothing else is listed, built or timed), and when it does not the
// search above runs as if there had been none. The result says what was tried, for the compile log and for the
// error when nothing builds.
#ifndef CNNBENCH_KERNELS_CUDA_ENGINE_PICK_H_
#define CNNBENCH_KERNELS_CUDA_ENGINE_PICK_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/cuda/plan_choices.h"

namespace cnnbench::cuda {

// The default cap on run-time compiled builds per graph: CudaBackendOptions'
// default, overridden by CNNBENCH_CUDA_RTC_ATTEMPTS (a number >= 0) in the
// environment, and by //bench:all's --cuda_rtc_attempts.
int DefaultRuntimeCompiledAttempts();
// `option` when >= 0, else the default.
inline int ResolveRuntimeCompiledAttempts(int option) {
  return option >= 0 ? option : DefaultRuntimeCompiledAttempts();
}

// Failed run-time compiled builds one backend may still spend, over all its
// graphs: once a backend has seen this many fail (each costs seconds),
// later graphs try none, so a cuDNN that compiles nothing for this GPU
// costs a bounded time per process, not seconds per layer.
struct RuntimeCompiledBudget {
  explicit RuntimeCompiledBudget(int failures) : failures_left(failures) {}
  std::atomic<int> failures_left;
};
// A backend's budget: this many times the per-graph cap (at least 4).
inline int RuntimeCompiledFailureBudget(int runtime_compiled_attempts) {
  return 4 * (runtime_compiled_attempts > 1 ? runtime_compiled_attempts : 1);
}

// Run-time compiled builds the whole process may still make, successes and
// failures alike (each costs seconds): //bench:all's
// --cuda_rtc_process_builds, else CNNBENCH_CUDA_RTC_PROCESS_BUILDS, else
// kDefaultRuntimeCompiledProcessBuilds. Once spent, no graph of the process
// tries another, and its error says so.
inline constexpr int kDefaultRuntimeCompiledProcessBuilds = 24;
int RuntimeCompiledProcessBuildsLeft();
// Sets what is left (a count >= 0); -1 reads the environment again.
void SetRuntimeCompiledProcessBuilds(int builds);

// One listing's filters.
struct EngineStage {
  bool runtime_compiled = false;  // the listing keeps only run-time compiled engines
  bool relaxed = false;           // the relaxed numerics filter
};

enum class EngineBuildResult { kBuilt, kBarred, kFailed };

struct EngineBuild {
  EngineBuildResult result = EngineBuildResult::kFailed;
  std::string message;  // kFailed: the library's
};

// The library's side: a graph whose engine configurations are listed (each
// listing appended after the ones before) and built by index.
class EngineListing {
 public:
  virtual ~EngineListing() = default;
  // Appends the heuristics' configurations under `stage`'s filters (a
  // configuration outside them is barred); returns the total count listed.
  virtual absl::StatusOr<int64_t> List(const EngineStage& stage) = 0;
  virtual EngineBuild Build(int64_t index) = 0;
  // Appends `engine` (a recorded choice) as one configuration, outside the
  // heuristics' listing and its filters; returns the total count listed.
  virtual absl::StatusOr<int64_t> ListRecorded(const RecordedEngine& engine) = 0;
  // Whether the graph has a relaxed filter that differs from the strict one.
  virtual bool has_relaxed() const { return false; }
};

struct EnginePick {
  std::vector<int64_t> built;  // indices that built, in the heuristics' order
  bool runtime_compiled = false;  // they came from a run-time compiled listing
  bool relaxed = false;           // ... under the relaxed filter
  int64_t listed = 0;             // configurations listed, every stage
  int precompiled_tried = 0;      // builds attempted (barred ones are not)
  int runtime_compiled_tried = 0;
  bool capped = false;  // the run-time compiled cap stopped the search
  bool budget_spent = false;  // ... or the backend's budget of failures was spent
  bool process_bound_spent = false;  // ... or the process's bound on all such builds
  double runtime_compiled_seconds = 0;  // spent building them
  std::string last_error;
  // With a recorded choice: it is what was built (built holds it alone), or
  // why it was not (it no longer builds) and the search ran.
  bool from_record = false;
  std::string record_error;

  // "3 precompiled and 2 run-time compiled builds tried of 41 listed"
  std::string Tried() const;
};

// Builds configurations as the header says, keeping up to `wanted`
// precompiled ones of one stage (or one run-time compiled one). With a
// `budget`, a run-time compiled build is tried only while it has failures
// left, and each failure spends one.
absl::StatusOr<EnginePick> PickEngines(EngineListing& listing, int wanted,
                                       int runtime_compiled_attempts,
                                       RuntimeCompiledBudget* budget = nullptr,
                                       const RecordedEngine* recorded = nullptr);

// "none of cuDNN's engine configurations builds (<Tried()>; the cap of N
// run-time compiled builds was reached: --cuda_rtc_attempts) (last: ...)".
std::string NoEngineReason(const EnginePick& pick, int runtime_compiled_attempts);

}  // namespace cnnbench::cuda

#endif  // CNNBENCH_KERNELS_CUDA_ENGINE_PICK_H_
