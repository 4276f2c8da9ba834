// Which algorithm each oneDNN convolution pass runs (--cpu_conv_algorithm):
// oneDNN offers direct convolution everywhere and, for some shapes on some
// CPUs (3x3 stride 1 fp32 on AVX-512 in oneDNN 2.6), Winograd. With
// `timed`, each candidate the library can create for a descriptor and pass
// is run on random data when the kernel is created, the fastest kept, and
// the choice cached here by descriptor and pass (as the cuda backend's plan
// cache), so a model with repeated shapes measures each once, every replica
// of a process runs what the first one chose, and an MPI job can run rank
// 0's choices everywhere (Serialize on rank 0, Merge on the others).
#ifndef CNNBENCH_KERNELS_ONEDNN_CONV_CHOICES_H_
#define CNNBENCH_KERNELS_ONEDNN_CONV_CHOICES_H_

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cnnbench {

enum class CpuConvAlgorithm {
  kTimed,     // every candidate timed once, the fastest kept (the default)
  kDirect,    // direct convolution in every pass (the baseline)
  kWinograd,  // Winograd wherever oneDNN has it, else direct
  kAuto,      // oneDNN's own heuristic (convolution_auto)
};

// "timed", "direct", "winograd", "auto".
absl::string_view CpuConvAlgorithmName(CpuConvAlgorithm algorithm);
// The inverse; an error lists the known names.
absl::StatusOr<CpuConvAlgorithm> ParseCpuConvAlgorithm(absl::string_view name);

// One timed choice: the algorithm ("direct", "winograd") and, for the
// record, the seconds each candidate took (the chosen one's, and the
// direct one's).
struct ConvChoice {
  std::string algorithm;
  double seconds = 0;         // the chosen candidate's
  double direct_seconds = 0;  // direct's (the same when direct was chosen)
};

// A thread-safe cache of timed choices. Process() is the one every oneDNN
// backend uses unless given another (tests give their own).
class ConvChoices {
 public:
  static ConvChoices& Process();

  // The key of a pass: the descriptor string, the data type, the pass and
  // the OpenMP team size the timing ran with (a replica of two threads and
  // one of one choose separately).
  static std::string Key(absl::string_view desc, absl::string_view dtype, absl::string_view pass,
                         int threads);

  std::optional<ConvChoice> Find(const std::string& key) const;
  // Keeps the first choice made for a key (a later Set for it is ignored):
  // a process runs one algorithm per descriptor and pass.
  void Set(const std::string& key, const ConvChoice& choice);
  size_t size() const;
  // Held by a kernel while it times its candidates: one timing at a time in
  // the process, so replicas do not time beside each other.
  std::mutex& timing_mutex() { return timing_; }

  // Every choice as text, one "key\talgorithm\tseconds\tdirect_seconds"
  // line each; Merge takes such text (another rank's) and keeps its
  // choices, replacing this cache's for the same keys.
  std::string Serialize() const;
  absl::Status Merge(absl::string_view text);

 private:
  mutable std::mutex mutex_;
  std::mutex timing_;
  std::map<std::string, ConvChoice> choices_;
};

}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_ONEDNN_CONV_CHOICES_H_
