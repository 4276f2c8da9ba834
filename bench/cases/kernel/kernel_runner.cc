#include "bench/cases/kernel/kernel_runner.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "core/random.h"
#include "core/status.h"

namespace cnnbench::bench {
namespace {

// The one place the runner creates kernels: how a case's precision reaches
// the backend.
absl::StatusOr<std::unique_ptr<Kernel>> CreateKernel(Backend* backend, const OpDesc& desc,
                                                     Precision precision,
                                                     const std::vector<TensorSpec>& inputs) {
  return backend->Create(desc, KernelOptions::ForPrecision(precision), inputs);
}

absl::StatusOr<Buffer> FilledBuffer(size_t bytes, DType dtype, Rng& rng, float scale) {
  ASSIGN_OR_RETURN(Buffer b, Buffer::Allocate(Device::Cpu(), std::max<size_t>(bytes, 64)));
  std::memset(b.data(), 0, b.size());  // int32 labels: class 0 is always valid
  if (scale == 0) return b;
  auto value = [&] { return static_cast<float>((rng.Uniform() * 2 - 1) * scale); };
  if (dtype == DType::kF32) {
    float* f = static_cast<float*>(b.data());
    for (size_t i = 0; i < bytes / sizeof(float); ++i) f[i] = value();
  } else if (dtype == DType::kBF16) {
    BFloat16* h = static_cast<BFloat16*>(b.data());
    for (size_t i = 0; i < bytes / sizeof(BFloat16); ++i) h[i] = FloatToBFloat16(value());
  } else if (dtype == DType::kF16) {
    Half* h = static_cast<Half*>(b.data());
    for (size_t i = 0; i < bytes / sizeof(Half); ++i) h[i] = FloatToHalf(value());
  }
  return b;
}

// `host` as the backend's device holds it: itself on the CPU, else a copy
// in device memory (the values are layout-agnostic, so raw bytes do).
absl::StatusOr<Buffer> OnDevice(Buffer host, const Device& device) {
  if (!device.is_cuda()) return host;
  ASSIGN_OR_RETURN(Buffer b, Buffer::Allocate(device, host.size()));
  RETURN_IF_ERROR(CopyBytes(b.data(), device, host.data(), Device::Cpu(), host.size()));
  return b;
}

// The (N,C,H,W) input of ops that read one activation.

// The layout a 3x3 convolution producing the op's input would write. An fc
// takes its input's shape from the network: after a pooling layer it reads
// that 4D activation (in the backend's layout), after another fc a plain matrix.
absl::StatusOr<std::vector<TensorSpec>> NetworkInputs(Backend* backend, const OpDesc& desc,
                                                      Precision precision,
                                                      const Shape& network_input) {
  std::optional<Dims4> dims = ActivationInput(desc);
  if (std::holds_alternative<FcDesc>(desc) && network_input.rank() == 4)
    dims = Dims4{network_input[0], network_input[1], network_input[2], network_input[3]};
  else if (!dims || std::holds_alternative<ConvDesc>(desc) || dims->h * dims->w == 1)
    return std::vector<TensorSpec>{};  // convs pick their own; vectors stay plain
  ConvDesc probe;
  probe.n = dims->n;
  probe.c = dims->c;
  probe.k = dims->c;
  ASSIGN_OR_RETURN(probe.h, MakeWindowDim(dims->h, 3, 1, Padding::kSame));
  ASSIGN_OR_RETURN(probe.w, MakeWindowDim(dims->w, 3, 1, Padding::kSame));
  auto kernel = CreateKernel(backend, probe, precision, {});
  if (absl::IsUnimplemented(kernel.status())) {
    // No such convolution on this backend: take the layout its ReLU keeps.
    kernel = CreateKernel(backend, ReluDesc{*dims}, precision, {});
  }
  RETURN_IF_ERROR(kernel.status());
  return std::vector<TensorSpec>{(*kernel)->signature().output};
}

}  // namespace

absl::StatusOr<std::unique_ptr<KernelRunner>> KernelRunner::Create(Backend* backend,
                                                                   const OpDesc& desc,
                                                                   Precision precision,
                                                                   const Shape& network_input) {
  std::unique_ptr<KernelRunner> r(new KernelRunner());
  r->backend_ = backend;
  r->desc_ = desc;
  ASSIGN_OR_RETURN(std::vector<TensorSpec> inputs,
                   NetworkInputs(backend, desc, precision, network_input));
  ASSIGN_OR_RETURN(r->kernel_, CreateKernel(backend, desc, precision, inputs));
  const KernelSignature& sig = r->kernel_->signature();
  Rng rng(99);
  const Device device = backend->device();
  auto add = [&](size_t bytes, DType type, float scale) -> absl::StatusOr<void*> {
    ASSIGN_OR_RETURN(Buffer host, FilledBuffer(bytes, type, rng, scale));
    ASSIGN_OR_RETURN(Buffer b, OnDevice(std::move(host), device));
    r->buffers_.push_back(std::move(b));
    return r->buffers_.back().data();
  };
  KernelArgs& a = r->args_;
  for (const TensorSpec& in : sig.inputs) {
    ASSIGN_OR_RETURN(void* x, add(in.bytes, in.dtype, 1.0f));
    a.x.push_back(x);
    ASSIGN_OR_RETURN(void* dx, add(in.bytes, in.dtype, 0.0f));
    a.dx.push_back(in.dtype == DType::kI32 ? nullptr : dx);  // labels get no gradient
  }
  ASSIGN_OR_RETURN(a.y, add(sig.output.bytes, sig.output.dtype, 0.0f));
  ASSIGN_OR_RETURN(void* dy, add(sig.output.bytes, sig.output.dtype, 1.0f));
  a.dy = dy;
  for (const TensorSpec& p : sig.params) {
    ASSIGN_OR_RETURN(void* w, add(p.bytes, p.dtype, 0.1f));
    a.params.push_back(w);
    ASSIGN_OR_RETURN(void* dw, add(p.bytes, p.dtype, 0.0f));
    a.dparams.push_back(dw);
  }
  for (const TensorSpec& s : sig.state) {
    ASSIGN_OR_RETURN(Buffer host, FilledBuffer(s.bytes, s.dtype, rng, 0.0f));
    float* f = static_cast<float*>(host.data());
    for (size_t i = 0; i < s.bytes / sizeof(float); ++i) f[i] = 1.0f;  // positive variances
    ASSIGN_OR_RETURN(Buffer b, OnDevice(std::move(host), device));
    a.state.push_back(b.data());
    r->buffers_.push_back(std::move(b));
  }
  ASSIGN_OR_RETURN(a.saved, add(sig.saved_bytes, DType::kU8, 0));
  ASSIGN_OR_RETURN(a.scratch, add(sig.scratch_bytes, DType::kU8, 0));
  a.training = true;
  RETURN_IF_ERROR(r->kernel_->Forward(a));
  RETURN_IF_ERROR(backend->stream().Synchronize());
  return r;
}

absl::Status KernelRunner::Run(Pass pass) {
  switch (pass) {
    case Pass::kForward:
      return kernel_->Forward(args_);
    case Pass::kBackwardData:
      RETURN_IF_ERROR(kernel_->BackwardData(args_));
      if (std::holds_alternative<BatchNormDesc>(desc_)) return kernel_->BackwardWeights(args_);
      return absl::OkStatus();
    case Pass::kBackwardWeights:
      return kernel_->BackwardWeights(args_);
  }
  return absl::OkStatus();
}

double PassFlops(const OpDesc& desc) { return ForwardFlops(desc); }

}  // namespace cnnbench::bench
