// The shared run-time half of pooling and LRN: a training forward that may
// write a oneDNN workspace into `saved`, an inference forward, and a backward
// pass that reads that workspace (and, for LRN, the input).
#ifndef CNNBENCH_KERNELS_ONEDNN_WINDOW_KERNEL_H_
#define CNNBENCH_KERNELS_ONEDNN_WINDOW_KERNEL_H_

#include <memory>
#include <string>
#include <utility>

#include "kernels/onednn/common.h"

namespace cnnbench {
namespace onednn {

class WindowKernel : public OneDnnKernel {
 public:
  absl::Status Forward(const KernelArgs& args) override {
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.y, "y"));
    RETURN_IF_ERROR(RequireScratch(args));
    if (args.training) RETURN_IF_ERROR(RequireSaved(args));
    BoundPrimitive& primitive = args.training ? forward_ : inference_;
    return Guarded(what_, [&]() -> absl::Status {
      primitive.Set(DNNL_ARG_SRC, x);
      primitive.Set(DNNL_ARG_DST, args.y);
      if (args.training && workspace_) primitive.Set(DNNL_ARG_WORKSPACE, args.saved);
      primitive.SetScratchpad(args.scratch);
      primitive.Execute(context_->stream);
      return absl::OkStatus();
    });
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    const void* x = nullptr;
    if (backward_reads_src_) {
      ASSIGN_OR_RETURN(x, Input(args, 0));
    }
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    RETURN_IF_ERROR(RequireSaved(args));
    RETURN_IF_ERROR(RequireScratch(args));
    return Guarded(what_, [&]() -> absl::Status {
      if (backward_reads_src_) backward_.Set(DNNL_ARG_SRC, x);
      backward_.Set(DNNL_ARG_DIFF_DST, args.dy);
      backward_.Set(DNNL_ARG_DIFF_SRC, args.dx[0]);
      if (workspace_) backward_.Set(DNNL_ARG_WORKSPACE, args.saved);
      backward_.SetScratchpad(args.scratch);
      backward_.Execute(context_->stream);
      return absl::OkStatus();
    });
  }

 protected:
  WindowKernel(std::shared_ptr<Context> context, std::string what, bool backward_reads_src)
      : OneDnnKernel(std::move(context), std::move(what)),
        backward_reads_src_(backward_reads_src) {}

  bool workspace_ = false;  // the training forward writes a workspace into `saved`
  BoundPrimitive forward_;
  BoundPrimitive inference_;
  BoundPrimitive backward_;

 private:
  bool backward_reads_src_;
};

}  // namespace onednn
}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_ONEDNN_WINDOW_KERNEL_H_
