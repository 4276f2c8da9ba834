// Values of //bench:all's flags that several families read the same way.
#ifndef CNNBENCH_BENCH_FLAG_VALUES_H_
#define CNNBENCH_BENCH_FLAG_VALUES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cnnbench::bench {

// A byte count as nccl-tests' -b and -e read one: decimal digits,
// optionally followed by K, M or G (1024, 1024^2, 1024^3; either case), no
// spaces (flag_read.h's rule). An error says what does not parse, or that
// the count is "too large (at most N)" with N in the text's own unit.
absl::StatusOr<int64_t> ParseByteCount(absl::string_view text);

// Every name in `models` is a zoo model or another name of one
// (mobilenet_v2), which becomes the model's own name (mobilenet: case names
// use it); else an error naming `flag` ("--models"), the name, the known
// ones and the other names. One model under two names is an error too.
absl::Status CanonicalizeModelNames(absl::string_view flag, std::vector<std::string>* models);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_FLAG_VALUES_H_
