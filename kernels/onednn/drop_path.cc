// Drop-path (oneDNN has no primitive): per example one scale, 1 / p or 0
// (kernels/drop_path.h, keyed by (seed, node, step) over the example's
// global index, so every backend drops the same examples), applied to the
// example's stored run. Any layout whose examples are dense runs (plain,
// NHWC, channel-blocked) is taken as given, padding included (a scaled 0
// stays 0); others are read plain. fp32 arithmetic, vectorised per ISA
// (masked_sum.h's ScaleRun), the tensor split evenly over the team.
#include "kernels/drop_path.h"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/random.h"
#include "core/status.h"
#include "kernels/onednn/loop_util.h"
#include "kernels/onednn/masked_sum.h"
#include "kernels/onednn/ops.h"

namespace cnnbench {
namespace onednn {
namespace {

using dnnl::memory;

// out = in * scale[n] over each example's `run` stored elements: the
// team splits the whole tensor (whole cache lines each), each thread's
// part scaled example by example in fp32 (bf16 rounded once).
void Scale(DType dtype, const void* in, const double* scale, int64_t examples, int64_t run,
           void* out) {
  const int64_t count = examples * run;
#pragma omp parallel
  {
    const auto [begin, end] = ThreadChunk(count, 32, omp_get_thread_num(), omp_get_num_threads());
    for (int64_t i = begin; i < end;) {
      const int64_t n = i / run;
      const int64_t stop = std::min(end, (n + 1) * run);
      ScaleRun(dtype, in, static_cast<float>(scale[n]), out, i, stop);
      i = stop;
    }
  }
}

// Whether each example of `md` is one dense run of its stored elements.
bool ExamplesAreRuns(const memory::desc& md, int64_t n) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.format_kind != dnnl_blocked || d.padded_dims[0] != n || d.offset0 != 0) return false;
  const dnnl_blocking_desc_t& b = d.format_desc.blocking;
  for (int i = 0; i < b.inner_nblks; ++i)
    if (b.inner_idxs[i] == 0) return false;
  const int64_t elements =
      static_cast<int64_t>(md.get_size() / memory::data_type_size(md.data_type()));
  return b.strides[0] * n == elements;
}

class DropPathKernel : public OneDnnKernel {
 public:
  DropPathKernel(std::shared_ptr<Context> context, const DropPathDesc& desc,
                 const KernelOptions& options)
      : OneDnnKernel(std::move(context), desc.ToString()),
        desc_(desc),
        seed_(options.seed),
        node_(options.node),
        first_example_(static_cast<uint64_t>(options.batch_offset)) {}

  absl::Status Init(const DropPathDesc& d, const KernelOptions& options, const Inputs& inputs) {
    RETURN_IF_ERROR(CheckInputCount(inputs, 1, what_));
    ASSIGN_OR_RETURN(const TensorSpec* given,
                     GivenInput(inputs, 0, options.dtype, d.dims.shape(), what_));
    TensorSpec input = TensorSpec::Plain(options.dtype, d.dims.shape());
    const memory::dims dims = ToDims(d.dims.shape());
    if (given != nullptr) {
      ASSIGN_OR_RETURN(memory::desc md, DescFromSpec(*given, dims, "input 0", what_));
      if (ExamplesAreRuns(md, d.dims.n)) input = *given;
    }
    ASSIGN_OR_RETURN(memory::desc data_md, DescFromSpec(input, dims, "input 0", what_));
    dtype_ = options.dtype;
    data_bytes_ = data_md.get_size();
    run_ = static_cast<int64_t>(data_bytes_ / SizeOf(dtype_)) / d.dims.n;
    signature_.inputs = {input};
    signature_.output = input;
    signature_.saved_bytes = static_cast<size_t>(d.dims.n) * sizeof(double);  // the scales
    signature_.backward_reads_inputs = false;
    signature_.backward_reads_output = false;
    implementation_ = "cnnbench:droppath";
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.y, "y"));
    if (!args.training) {
      if (args.y != x) std::memcpy(args.y, x, data_bytes_);
      return absl::OkStatus();
    }
    RETURN_IF_ERROR(RequireSaved(args));
    double* scale = static_cast<double*>(args.saved);
    const uint64_t step = args.step != nullptr ? *args.step : calls_;
    const double p = DropPathKeepAt(desc_.keep, desc_.ramp_steps, step);
    const uint64_t key = DropoutKey(seed_, node_, step);
    for (int64_t n = 0; n < desc_.dims.n; ++n)
      scale[n] = DropPathScale(key, first_example_ + static_cast<uint64_t>(n), p);
    ++calls_;
    Apply(x, scale, args.y);
    return absl::OkStatus();
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    if (!args.training) {  // the forward was the identity
      if (args.dx[0] != args.dy) std::memcpy(args.dx[0], args.dy, data_bytes_);
      return absl::OkStatus();
    }
    RETURN_IF_ERROR(RequireSaved(args));
    Apply(args.dy, static_cast<const double*>(args.saved), args.dx[0]);
    return absl::OkStatus();
  }

 private:
  void Apply(const void* in, const double* scale, void* out) const {
    Scale(dtype_, in, scale, desc_.dims.n, run_, out);
  }

  const DropPathDesc desc_;
  const uint64_t seed_, node_;
  const uint64_t first_example_;  // global index of this batch's first example
  DType dtype_ = DType::kF32;
  size_t data_bytes_ = 0;
  int64_t run_ = 0;     // stored elements per example
  uint64_t calls_ = 0;  // training forwards so far: the step when none is given
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const DropPathDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<DropPathKernel>(std::move(context), desc, options, inputs);
}

}  // namespace onednn
}  // namespace cnnbench
