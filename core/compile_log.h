// The compile log: what building a plan does, one line at a time on stderr,
// while it happens. Off unless asked for (`--verbose` on //bench:all and
// //tools:step_breakdown, or CNNBENCH_VERBOSE=1 in the environment, which
// the test main and the GPU check honour), so a timeout inside a trainer's
// compile shows how far it got. One line per layer (the executor) and, for
// kernels that choose per pass (the cuda backend's convolution and batch
// norm graphs), one line per pass:
//
//   compile 20:15:16.123 +3.402s layer=res2a_branch2a op=conv:... pass=fprop
//       engine=eng0_k... rtc=no tried=4 build=0.512s
//
// `compile`, the UTC wall time, the seconds since the first line of the
// process, then key=value fields (values without spaces are bare; others
// are quoted). docs/kernels.md ("The compile log") describes the fields.
#ifndef CNNBENCH_CORE_COMPILE_LOG_H_
#define CNNBENCH_CORE_COMPILE_LOG_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace cnnbench {

// Whether lines are written. First call reads CNNBENCH_VERBOSE (1, true,
// yes: on); SetCompileLog overrides it.
bool CompileLogEnabled();
void SetCompileLog(bool enabled);

// Where lines go (stderr by default); tests capture them. Not thread-safe
// against concurrent logging: set it before anything compiles.
void SetCompileLogSink(std::function<void(absl::string_view line)> sink);

// One line of key=value fields, prefixed with the time and the current
// layer (CompileLogLayer) when there is one. Thread-safe.
using CompileLogFields = std::vector<std::pair<std::string, std::string>>;
void CompileLog(const CompileLogFields& fields);

// While alive, this thread's compile-log lines carry layer=<name> first.
class CompileLogLayer {
 public:
  explicit CompileLogLayer(std::string layer);
  ~CompileLogLayer();
  CompileLogLayer(const CompileLogLayer&) = delete;
  CompileLogLayer& operator=(const CompileLogLayer&) = delete;

  // The innermost layer of this thread ("" outside any).
  static const std::string& Current();

 private:
  std::string previous_;
};

// "0.512s": seconds as the log writes them.
std::string CompileLogSeconds(double seconds);

// The compile deadline: a moment, counted in seconds from the start of the
// process, past which building plans stops, so that a compile cut short
// by a caller's time limit still ends with a result (the case's error,
// naming the layer and pass, in the results file) instead of nothing.
// Set by //bench:all's --compile_deadline_s; else read once from
// CNNBENCH_COMPILE_DEADLINE_S (seconds, decimals allowed; the device
// bundle's gpu_check.sh sets it per step to the step's limit less a
// margin). Zero or unset: no deadline.
void SetCompileDeadline(double seconds_from_process_start);
// Seconds from the start of the process to the deadline (0: none).
double CompileDeadlineSeconds();
// OK before the deadline. Past it: an error whose message starts with
// kCompileDeadlinePrefix and names the layer (CompileLogLayer::Current()),
// `pass` and what `tried` says was built or tried so far, with the time
// since the process started. Checked between layers (the executor) and
// between the passes and candidates of kernels that build several.
absl::Status CheckCompileDeadline(absl::string_view pass, absl::string_view tried = "");
// The reason kind of a passed compile deadline, as SkipMessage prints it:
// the case could not be built in the time given, which is not a failure of
// the code (//bench:all does not exit 3 for it; gpu_check.sh says out of
// time).
inline constexpr char kCompileDeadlinePrefix[] = "deadline: ";
// Whether `status` is a passed compile deadline (kernels that turn their
// own build failures into "unsupported" or a fallback let it through).
bool IsCompileDeadline(const absl::Status& status);

}  // namespace cnnbench

#endif  // CNNBENCH_CORE_COMPILE_LOG_H_
