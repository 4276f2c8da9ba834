// Runs one layer operation's pass through a backend's Kernel interface, on
// buffers made once: what a per-layer kernel case times, and what tests
// compare against the training step's per-layer profile. Buffers live where
// the backend runs (host memory, or device memory on a GPU).
#ifndef CNNBENCH_BENCH_KERNEL_RUNNER_H_
#define CNNBENCH_BENCH_KERNEL_RUNNER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/cases/kernel/layer_cases.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "kernels/kernel.h"

namespace cnnbench::bench {

class KernelRunner {
 public:
  // The op's input gets the layout a convolution of the backend would hand
  // it (as inside a network), so the case times what the step runs;
  // `network_input` is the logical shape of that input in the network (an
  // fc's descriptor does not say whether it reads a 4D activation or a
  // matrix), empty when unknown. One forward runs here, so the backward
  // passes find their saved data.
  static absl::StatusOr<std::unique_ptr<KernelRunner>> Create(Backend* backend, const OpDesc& desc,
                                                              Precision precision,
                                                              const Shape& network_input = {});
  // Enqueues one call of the pass on stream(); batch norm's kBackwardData
  // runs both of its backward passes, as the training step does.
  absl::Status Run(Pass pass);
  // The backend's stream, where every call is enqueued.
  const Stream& stream() const { return backend_->stream(); }
  // What runs in `pass` (a oneDNN convolution's passes may differ).
  std::string implementation(Pass pass) const { return kernel_->pass_implementation(pass); }
  const KernelSignature& signature() const { return kernel_->signature(); }

 private:
  KernelRunner() = default;
  Backend* backend_ = nullptr;
  OpDesc desc_;
  std::unique_ptr<Kernel> kernel_;
  std::vector<Buffer> buffers_;
  KernelArgs args_;
};

// FLOPs of one call (conv, fc; 0 for other ops): each pass costs the
// forward's. The bytes a memory-bound pass moves are PassBytes(desc, pass,
// dtype) of kernels/op_traits.h (pool, batch norm, ReLU; 0 for others).
double PassFlops(const OpDesc& desc);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_KERNEL_RUNNER_H_
