// Reference pooling: max (argmax saved for backward), average with padded
// elements counted, and average over the in-bounds elements only.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "kernels/reference/common.h"
#include "kernels/reference/ops.h"

namespace cnnbench {
namespace reference {
namespace {

// The in-bounds input range [begin, end) of output `o`'s window.
struct Span {
  int64_t begin, end;
};
Span WindowSpan(const WindowDim& d, int64_t o) {
  const int64_t start = o * d.stride - d.pad_before;
  return {std::max<int64_t>(start, 0), std::min<int64_t>(start + d.kernel, d.in)};
}

// The outputs [begin, end) whose windows contain input `i`.
Span OutputsReading(const WindowDim& d, int64_t i) {
  const int64_t lo = i + d.pad_before - (d.kernel - 1);  // smallest window start covering i
  const int64_t begin = lo <= 0 ? 0 : (lo + d.stride - 1) / d.stride;
  const int64_t end = std::min<int64_t>((i + d.pad_before) / d.stride + 1, d.out);
  return {begin, end};
}

template <typename T>
class PoolKernel final : public ReferenceKernel {
 public:
  PoolKernel(const PoolDesc& d, KernelSignature signature)
      : ReferenceKernel(d.ToString(), std::move(signature)), d_(d) {}

 private:
  double Divisor(int64_t p, int64_t q) const {
    if (d_.algorithm == PoolAlgorithm::kAvg) return static_cast<double>(d_.h.kernel * d_.w.kernel);
    const Span hs = WindowSpan(d_.h, p), ws = WindowSpan(d_.w, q);
    return static_cast<double>((hs.end - hs.begin) * (ws.end - ws.begin));
  }

  absl::Status RunForward(const KernelArgs& a) override {
    const T* x = static_cast<const T*>(a.x[0]);  // (N,C,H,W)
    T* y = static_cast<T*>(a.y);                 // (N,C,P,Q)
    // (N,C,P,Q) argmax as an offset within the input plane (max only).
    int32_t* argmax = static_cast<int32_t*>(a.saved);
    const int64_t planes = d_.n * d_.c, hw = d_.h.in * d_.w.in, pq = d_.h.out * d_.w.out;
    for (int64_t plane = 0; plane < planes; ++plane) {
      const T* xp = x + plane * hw;
      for (int64_t p = 0; p < d_.h.out; ++p)
        for (int64_t q = 0; q < d_.w.out; ++q) {
          const Span hs = WindowSpan(d_.h, p), ws = WindowSpan(d_.w, q);
          const int64_t out = plane * pq + p * d_.w.out + q;
          if (d_.algorithm == PoolAlgorithm::kMax) {
            // The first maximum in row-major order takes the gradient.
            int64_t best = hs.begin * d_.w.in + ws.begin;
            for (int64_t ih = hs.begin; ih < hs.end; ++ih)
              for (int64_t iw = ws.begin; iw < ws.end; ++iw)
                if (xp[ih * d_.w.in + iw] > xp[best]) best = ih * d_.w.in + iw;
            y[out] = xp[best];
            if (argmax != nullptr) argmax[out] = static_cast<int32_t>(best);
          } else {
            double sum = 0.0;
            for (int64_t ih = hs.begin; ih < hs.end; ++ih)
              for (int64_t iw = ws.begin; iw < ws.end; ++iw) sum += xp[ih * d_.w.in + iw];
            y[out] = static_cast<T>(sum / Divisor(p, q));
          }
        }
    }
    return absl::OkStatus();
  }

  // Gathers, per input element, the windows that read it.
  absl::Status RunBackwardData(const KernelArgs& a) override {
    if (a.dx[0] == nullptr) return absl::OkStatus();
    const T* dy = static_cast<const T*>(a.dy);  // (N,C,P,Q)
    T* dx = static_cast<T*>(a.dx[0]);           // (N,C,H,W)
    const int32_t* argmax = static_cast<const int32_t*>(a.saved);
    const int64_t planes = d_.n * d_.c, hw = d_.h.in * d_.w.in, pq = d_.h.out * d_.w.out;
    for (int64_t plane = 0; plane < planes; ++plane)
      for (int64_t ih = 0; ih < d_.h.in; ++ih) {
        const Span ps = OutputsReading(d_.h, ih);
        for (int64_t iw = 0; iw < d_.w.in; ++iw) {
          const Span qs = OutputsReading(d_.w, iw);
          double acc = 0.0;
          for (int64_t p = ps.begin; p < ps.end; ++p)
            for (int64_t q = qs.begin; q < qs.end; ++q) {
              const int64_t out = plane * pq + p * d_.w.out + q;
              if (d_.algorithm == PoolAlgorithm::kMax) {
                if (argmax[out] == ih * d_.w.in + iw) acc += static_cast<double>(dy[out]);
              } else {
                acc += static_cast<double>(dy[out]) / Divisor(p, q);
              }
            }
          dx[plane * hw + ih * d_.w.in + iw] = static_cast<T>(acc);
        }
      }
    return absl::OkStatus();
  }

  const PoolDesc d_;
};

}  // namespace

KernelOr CreateOp(ContextPtr, const PoolDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  const DType dtype = options.dtype;
  const std::string name = desc.ToString();
  if (desc.h.in * desc.w.in > std::numeric_limits<int32_t>::max())
    return absl::UnimplementedError(
        absl::StrCat("unsupported: ", name, ": planes over 2^31 elements"));
  KernelSignature sig;
  auto resolved = ResolveInputs(name, inputs, {TensorSpec::Plain(dtype, desc.input().shape())});
  if (!resolved.ok()) return resolved.status();
  sig.inputs = *std::move(resolved);
  sig.output = TensorSpec::Plain(dtype, desc.output().shape());
  if (desc.algorithm == PoolAlgorithm::kMax)
    sig.saved_bytes = static_cast<size_t>(desc.output().elements()) * sizeof(int32_t);
  // The argmax (max) or the window arithmetic (avg) is all backward needs.
  sig.backward_reads_inputs = false;
  sig.backward_reads_output = false;
  return MakeTyped<PoolKernel>(dtype, desc, std::move(sig));
}

}  // namespace reference
}  // namespace cnnbench
