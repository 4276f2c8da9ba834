// The cuda backend's plan-choice file (--cuda_plan_cache=PATH, or
// CNNBENCH_CUDA_PLAN_CACHE): what the timed choice of each convolution pass
// and the build of each batch-norm graph settled on, kept across
// processes, so a later process of the same call builds the chosen engine
// alone instead of listing, building and timing candidates again.
//
// A choice is named by a key (the graph's problem and pass, e.g.
// "conv(...)/bf16/NHWC/fprop") and holds its engines as cuDNN numbers them
// (engine id and knob choices, replayed with cudnn-frontend's
// create_execution_plan) and, for batch norm, the graph's form. The file is
// bound to one identity (cuDNN's and cudnn-frontend's versions, the GPU's
// name and compute capability): choices read from a file of another
// identity are dropped, said in the compile log, and the file is written
// afresh. A choice that no longer builds is dropped and the normal search
// runs (engine_pick.h), said in the compile log too.
//
// The file is text, tab-separated, one line per choice; every new choice
// rewrites it (a temporary file renamed over it), so a process killed
// part way leaves what it had chosen. Plain C++, tested without a GPU.
#ifndef CNNBENCH_KERNELS_CUDA_PLAN_CHOICES_H_
#define CNNBENCH_KERNELS_CUDA_PLAN_CHOICES_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cnnbench::cuda {

// One engine configuration as cuDNN numbers it: the engine's global id and
// its knob choices (cudnn-frontend's KnobType_t as a number, the value).
struct RecordedEngine {
  int64_t engine_id = -1;
  std::vector<std::pair<int, int64_t>> knobs;  // sorted by knob type
  bool runtime_compiled = false;  // built by NVRTC (seconds, not free)
  bool relaxed = false;           // found under the relaxed numerics filter

  // "engine=12;knobs=2:1,3:0;rtc=0;relaxed=0"
  std::string ToText() const;
  // Whether create_execution_plan can build this engine again: every knob
  // has a type cudnn-frontend maps to one of cuDNN's. A knob of type 0
  // (NOT_SET) is one cuDNN reported but this cudnn-frontend has no name
  // for (seen on an H100 with cuDNN 9.19: an engine's k14); replayed
  // without it, the engine is another configuration or none. Types from
  // 1000 are cudnn-frontend's own, which cuDNN's engines never take.
  absl::Status CheckReplayable() const;
  static absl::StatusOr<RecordedEngine> Parse(absl::string_view text);
  bool operator==(const RecordedEngine& other) const {
    return engine_id == other.engine_id && knobs == other.knobs &&
           runtime_compiled == other.runtime_compiled && relaxed == other.relaxed;
  }
};

// One graph's (or pass's) choice.
struct PlanChoice {
  std::string form;  // batch norm: "<relu form>/<running stats yes|no>"; else empty
  std::vector<RecordedEngine> engines;  // a conv pass: one; a batch norm: forward, backward
  double milliseconds = 0;              // the chosen engine's best timed run (0: not timed)
  bool operator==(const PlanChoice& other) const {
    return form == other.form && engines == other.engines;
  }
};

class PlanChoices {
 public:
  // The process's: its path from CNNBENCH_CUDA_PLAN_CACHE unless Open is
  // called (//bench:all's --cuda_plan_cache does).
  static PlanChoices& Process();

  PlanChoices() = default;

  // Uses `path` from now on ("" turns the file off) and reads the choices
  // it holds. A missing file is an empty start; an unreadable or malformed
  // one is ignored (a compile log line says why) and written afresh on the
  // first new choice. Returns what was read, for messages.
  std::string Open(const std::string& path);
  bool enabled() const;
  std::string path() const;

  // The identity of the library and device the choices are made with. The
  // first Bind keeps it; choices read for another identity are dropped
  // (logged). A later Bind with another identity (a second GPU model in one
  // process) turns lookups off for that process: false.
  bool Bind(const std::string& identity);

  // The choice for `key`, if one was read or recorded under the bound
  // identity (none before Bind).
  std::optional<PlanChoice> Find(const std::string& key) const;
  // Keeps `choice` for `key` and rewrites the file. An error (the folder
  // is gone, the disk is full) is logged once and returned; the choice is
  // still kept for this process.
  absl::Status Record(const std::string& key, const PlanChoice& choice);
  // Drops `key`'s choice (it no longer builds).
  void Forget(const std::string& key);
  size_t size() const;
  // Lookups that found a choice, and recorded choices, in this process.
  int hits() const;
  int recorded() const;

  // The file's text for these choices, and the inverse (a line that does
  // not parse is an error naming its number).
  static std::string Serialize(const std::string& identity,
                               const std::map<std::string, PlanChoice>& choices);
  static absl::Status Parse(absl::string_view text, std::string* identity,
                            std::map<std::string, PlanChoice>* choices);

 private:
  absl::Status WriteLocked();

  mutable std::mutex mutex_;
  std::string path_;
  std::string file_identity_;  // as read
  std::string identity_;       // as bound
  bool bound_ = false;
  bool conflicted_ = false;  // bound twice with different identities
  bool write_error_logged_ = false;
  std::map<std::string, PlanChoice> choices_;
  mutable int hits_ = 0;
  int recorded_ = 0;
};

// The key of a convolution pass's choice: ConvProblem::key, the pass, and
// "/deterministic" where only deterministic engines may run.
std::string ConvChoiceKey(absl::string_view problem_key, absl::string_view pass,
                          bool deterministic);

}  // namespace cnnbench::cuda

#endif  // CNNBENCH_KERNELS_CUDA_PLAN_CHOICES_H_
