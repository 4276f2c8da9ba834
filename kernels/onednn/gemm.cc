// GEMM as an op on oneDNN's matmul: C = op(A) op(B), and for backward
// dA = dC op(B)^T, dB = op(A)^T dC. Transposed storage is expressed with
// strides, so no operand is ever copied; inputs and output are plain.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/onednn/ops.h"

namespace cnnbench {
namespace onednn {
namespace {

using dnnl::memory;

// A rows x cols view of a row-major matrix, or of the transpose of one
// (a cols x rows row-major matrix read column by column).
memory::desc MatrixView(int64_t rows, int64_t cols, bool transposed, memory::data_type type) {
  return transposed ? memory::desc({rows, cols}, type, {1, rows})
                    : memory::desc({rows, cols}, type, {cols, 1});
}

class GemmKernel : public OneDnnKernel {
 public:
  GemmKernel(std::shared_ptr<Context> context, const GemmDesc& desc)
      : OneDnnKernel(std::move(context), desc.ToString()), d_(desc) {}

  absl::Status Init(const GemmDesc&, const KernelOptions& options, const Inputs& inputs) {
    const DType dtype = options.dtype;
    RETURN_IF_ERROR(CheckInputCount(inputs, 2, what_));
    ASSIGN_OR_RETURN(memory::data_type type, ToDnnlType(dtype));
    const int64_t m = d_.m, n = d_.n, k = d_.k;
    const bool ta = d_.transpose_a, tb = d_.transpose_b;
    const Shape a_shape = ta ? Shape{k, m} : Shape{m, k};
    const Shape b_shape = tb ? Shape{n, k} : Shape{k, n};
    for (size_t i = 0; i < 2; ++i) {
      const Shape& shape = i == 0 ? a_shape : b_shape;
      ASSIGN_OR_RETURN(const TensorSpec* given, GivenInput(inputs, i, dtype, shape, what_));
      if (given != nullptr && !given->is_plain())
        return absl::UnimplementedError(
            absl::StrCat("unsupported: ", what_, " reads plain row-major operands only"));
      signature_.inputs.push_back(TensorSpec::Plain(dtype, shape));
    }
    const memory::desc op_a = MatrixView(m, k, ta, type);
    const memory::desc op_b = MatrixView(k, n, tb, type);
    const memory::desc op_b_t = MatrixView(n, k, !tb, type);  // op(B)^T over B's storage
    const memory::desc op_a_t = MatrixView(k, m, !ta, type);  // op(A)^T over A's storage
    const memory::desc c = MatrixView(m, n, false, type);
    const dnnl::primitive_attr attr = UserScratchpadAttr();
    const dnnl::engine& engine = context_->engine;
    auto make = [&](const memory::desc& src, const memory::desc& weights, const memory::desc& dst) {
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, weights, dst), attr, engine);
      return BoundPrimitive(pd, dnnl::matmul(pd), {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST},
                            engine);
    };
    forward_ = make(op_a, op_b, c);
    grad_a_ = make(c, op_b_t, op_a);
    grad_b_ = make(op_a_t, c, op_b);
    signature_.output = TensorSpec::Plain(dtype, Shape{m, n});
    signature_.scratch_bytes = std::max(
        {forward_.scratchpad_bytes(), grad_a_.scratchpad_bytes(), grad_b_.scratchpad_bytes()});
    signature_.backward_reads_inputs = true;
    signature_.backward_reads_output = false;
    implementation_ = forward_.implementation();
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    ASSIGN_OR_RETURN(const void* a, Input(args, 0));
    ASSIGN_OR_RETURN(const void* b, Input(args, 1));
    RETURN_IF_ERROR(Require(args.y, "y"));
    RETURN_IF_ERROR(RequireScratch(args));
    return Run(forward_, a, b, args.y, args.scratch);
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    RETURN_IF_ERROR(RequireScratch(args));
    if (args.dx.size() > 0 && args.dx[0] != nullptr) {
      ASSIGN_OR_RETURN(const void* b, Input(args, 1));
      RETURN_IF_ERROR(Run(grad_a_, args.dy, b, args.dx[0], args.scratch));
    }
    if (args.dx.size() > 1 && args.dx[1] != nullptr) {
      ASSIGN_OR_RETURN(const void* a, Input(args, 0));
      RETURN_IF_ERROR(Run(grad_b_, a, args.dy, args.dx[1], args.scratch));
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Run(BoundPrimitive& p, const void* src, const void* weights, void* dst,
                   void* scratch) {
    return Guarded(what_, [&]() -> absl::Status {
      p.Set(DNNL_ARG_SRC, src);
      p.Set(DNNL_ARG_WEIGHTS, weights);
      p.Set(DNNL_ARG_DST, dst);
      p.SetScratchpad(scratch);
      p.Execute(context_->stream);
      return absl::OkStatus();
    });
  }

  const GemmDesc d_;
  BoundPrimitive forward_, grad_a_, grad_b_;
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const GemmDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<GemmKernel>(std::move(context), desc, options, inputs);
}

}  // namespace onednn
}  // namespace cnnbench
