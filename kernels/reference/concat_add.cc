// Reference channel concatenation, y(N, sum C_i, H, W) from x_i(N, C_i, H,
// W), whose backward hands each input its slice of dy; and the residual add
// (with its fused ReLU), whose inputs share one gradient.
#include <cstdint>

#include "kernels/reference/common.h"
#include "kernels/reference/ops.h"

namespace cnnbench {
namespace reference {
namespace {

template <typename T>
class ConcatKernel final : public ReferenceKernel {
 public:
  ConcatKernel(const ConcatDesc& d, KernelSignature signature)
      : ReferenceKernel(d.ToString(), std::move(signature)), d_(d), total_(d.output().c) {}

 private:
  absl::Status RunForward(const KernelArgs& a) override {
    T* y = static_cast<T*>(a.y);
    const int64_t hw = d_.h * d_.w;
    int64_t offset = 0;  // first output channel of input i
    for (size_t i = 0; i < d_.channels.size(); ++i) {
      const T* x = static_cast<const T*>(a.x[i]);
      const int64_t ci = d_.channels[i];
      // Already in place: the plan made x a view of y (input_views).
      const bool in_place = x == y + offset * hw && d_.n == 1;
      for (int64_t n = 0; n < d_.n && !in_place; ++n)
        for (int64_t j = 0; j < ci * hw; ++j)
          y[(n * total_ + offset) * hw + j] = x[n * ci * hw + j];
      offset += ci;
    }
    return absl::OkStatus();
  }

  absl::Status RunBackwardData(const KernelArgs& a) override {
    const T* dy = static_cast<const T*>(a.dy);
    const int64_t hw = d_.h * d_.w;
    int64_t offset = 0;
    for (size_t i = 0; i < d_.channels.size(); ++i) {
      const int64_t ci = d_.channels[i];
      if (T* dx = static_cast<T*>(a.dx[i]); dx != nullptr)
        for (int64_t n = 0; n < d_.n; ++n)
          for (int64_t j = 0; j < ci * hw; ++j)
            dx[n * ci * hw + j] = dy[(n * total_ + offset) * hw + j];
      offset += ci;
    }
    return absl::OkStatus();
  }

  const ConcatDesc d_;
  const int64_t total_;  // output channels
};

template <typename T>
class AddKernel final : public ReferenceKernel {
 public:
  AddKernel(const AddDesc& d, KernelSignature signature)
      : ReferenceKernel(d.ToString(), std::move(signature)),
        count_(d.dims.elements()),
        activation_(d.activation) {}

 private:
  absl::Status RunForward(const KernelArgs& a) override {
    const T* x0 = static_cast<const T*>(a.x[0]);
    const T* x1 = static_cast<const T*>(a.x[1]);
    T* y = static_cast<T*>(a.y);
    for (int64_t i = 0; i < count_; ++i) {
      const double sum = static_cast<double>(x0[i]) + static_cast<double>(x1[i]);
      y[i] = static_cast<T>(ActivationForward(activation_, sum));
    }
    return absl::OkStatus();
  }

  // dx = (dy or the sum of dy_parts), masked by y > 0 with a fused ReLU;
  // written once when the executor hands both inputs one buffer.
  absl::Status RunBackwardData(const KernelArgs& a) override {
    const T* y = static_cast<const T*>(a.y);
    T* first = nullptr;
    for (void* dx : a.dx) {
      if (dx == nullptr || dx == first) continue;
      T* out = static_cast<T*>(dx);
      if (first != nullptr) {
        for (int64_t i = 0; i < count_; ++i) out[i] = first[i];
        continue;
      }
      first = out;
      for (int64_t i = 0; i < count_; ++i) {
        double g = 0;
        if (a.dy_parts.empty()) {
          g = static_cast<double>(static_cast<const T*>(a.dy)[i]);
        } else {
          for (const void* part : a.dy_parts)
            g += static_cast<double>(static_cast<const T*>(part)[i]);
        }
        out[i] = static_cast<T>(
            activation_ == ActivationKind::kNone
                ? g
                : ActivationBackwardOfOutput(activation_, static_cast<double>(y[i]), g));
      }
    }
    return absl::OkStatus();
  }

  const int64_t count_;
  const ActivationKind activation_;
};

// Zeros, with x in channels [before, before + C).
template <typename T>
class ChannelPadKernel final : public ReferenceKernel {
 public:
  ChannelPadKernel(const ChannelPadDesc& d, KernelSignature signature)
      : ReferenceKernel(d.ToString(), std::move(signature)), d_(d) {}

 private:
  absl::Status RunForward(const KernelArgs& a) override {
    const T* x = static_cast<const T*>(a.x[0]);
    T* y = static_cast<T*>(a.y);
    const int64_t hw = d_.dims.h * d_.dims.w, c = d_.dims.c, k = d_.output().c;
    for (int64_t n = 0; n < d_.dims.n; ++n)
      for (int64_t j = 0; j < k; ++j)
        for (int64_t i = 0; i < hw; ++i) {
          const int64_t from = j - d_.before;
          y[(n * k + j) * hw + i] = from >= 0 && from < c ? x[(n * c + from) * hw + i] : T(0);
        }
    return absl::OkStatus();
  }

  absl::Status RunBackwardData(const KernelArgs& a) override {
    T* dx = static_cast<T*>(a.dx[0]);
    if (dx == nullptr) return absl::OkStatus();
    const T* dy = static_cast<const T*>(a.dy);
    const int64_t hw = d_.dims.h * d_.dims.w, c = d_.dims.c, k = d_.output().c;
    for (int64_t n = 0; n < d_.dims.n; ++n)
      for (int64_t j = 0; j < c * hw; ++j) dx[n * c * hw + j] = dy[(n * k + d_.before) * hw + j];
    return absl::OkStatus();
  }

  const ChannelPadDesc d_;
};

}  // namespace

KernelOr CreateOp(ContextPtr, const ChannelPadDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  const DType dtype = options.dtype;
  KernelSignature sig;
  auto resolved =
      ResolveInputs(desc.ToString(), inputs, {TensorSpec::Plain(dtype, desc.dims.shape())});
  if (!resolved.ok()) return resolved.status();
  sig.inputs = *std::move(resolved);
  sig.output = TensorSpec::Plain(dtype, desc.output().shape());
  sig.backward_reads_inputs = false;
  sig.backward_reads_output = false;
  return MakeTyped<ChannelPadKernel>(dtype, desc, std::move(sig));
}

KernelOr CreateOp(ContextPtr, const ConcatDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  const DType dtype = options.dtype;
  KernelSignature sig;
  std::vector<TensorSpec> expected;
  for (int64_t c : desc.channels)
    expected.push_back(TensorSpec::Plain(dtype, Shape{desc.n, c, desc.h, desc.w}));
  auto resolved = ResolveInputs(desc.ToString(), inputs, expected);
  if (!resolved.ok()) return resolved.status();
  sig.inputs = *std::move(resolved);
  sig.output = TensorSpec::Plain(dtype, desc.output().shape());
  sig.backward_reads_inputs = false;
  sig.backward_reads_output = false;
  // At batch 1 each input is one run of y (plain NCHW): it may be a view.
  if (desc.n == 1) {
    size_t offset = 0;
    for (const TensorSpec& in : sig.inputs) {
      sig.input_views.push_back(offset);
      offset += in.bytes;
    }
  }
  return MakeTyped<ConcatKernel>(dtype, desc, std::move(sig));
}

KernelOr CreateOp(ContextPtr, const AddDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  const DType dtype = options.dtype;
  KernelSignature sig;
  const TensorSpec plain = TensorSpec::Plain(dtype, desc.dims.shape());
  auto resolved = ResolveInputs(desc.ToString(), inputs, {plain, plain});
  if (!resolved.ok()) return resolved.status();
  sig.inputs = *std::move(resolved);
  sig.output = plain;
  sig.backward_reads_inputs = false;  // dx0 = dx1 = dy (masked by y > 0 with a ReLU)
  sig.backward_reads_output = desc.activation != ActivationKind::kNone;
  sig.shared_input_gradient = true;
  sig.sums_output_gradient = true;
  return MakeTyped<AddKernel>(dtype, desc, std::move(sig));
}

}  // namespace reference
}  // namespace cnnbench
