// Reference convolution: direct loops over (N,K,P,Q) x (C/g,R,S) with
// stride, dilation, groups (depthwise included), asymmetric padding, bias
// the residual input (x1, added to the double sum before the activation;
// each element of x1 read before the same element of y is written, so y may
// be x1's buffer) and the activation epilogue (applied to the double sum,
// rounded once; in the backward passes dy is read masked by f'(y)).
#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/reference/common.h"
#include "kernels/reference/ops.h"

namespace cnnbench {
namespace reference {
namespace {

template <typename T>
class ConvKernel final : public ReferenceKernel {
 public:
  ConvKernel(const ConvDesc& d, KernelSignature signature)
      : ReferenceKernel(d.ToString(), std::move(signature)), d_(d) {}

 private:
  // The input row feeding output row `p` through kernel tap `r`, or -1 when
  // it falls in the padding.
  static int64_t InputIndex(const WindowDim& dim, int64_t out, int64_t tap) {
    int64_t i = out * dim.stride - dim.pad_before + tap * dim.dilation;
    return i >= 0 && i < dim.in ? i : -1;
  }

  absl::Status RunForward(const KernelArgs& a) override {
    const T* x = static_cast<const T*>(a.x[0]);                            // (N,C,H,W)
    const T* w = static_cast<const T*>(a.params[0]);                       // (K,C/g,R,S)
    const T* b = d_.bias ? static_cast<const T*>(a.params[1]) : nullptr;   // (K)
    const T* res = d_.residual ? static_cast<const T*>(a.x[1]) : nullptr;  // (N,K,P,Q)
    T* y = static_cast<T*>(a.y);                                           // (N,K,P,Q)
    const int64_t cg = d_.c / d_.groups, kg = d_.k / d_.groups;
    const int64_t kh = d_.h.kernel, kw = d_.w.kernel;
    for (int64_t n = 0; n < d_.n; ++n)
      for (int64_t k = 0; k < d_.k; ++k) {
        const int64_t c0 = k / kg * cg;  // first input channel of k's group
        for (int64_t p = 0; p < d_.h.out; ++p)
          for (int64_t q = 0; q < d_.w.out; ++q) {
            double acc = b ? static_cast<double>(b[k]) : 0.0;
            for (int64_t c = 0; c < cg; ++c)
              for (int64_t r = 0; r < kh; ++r) {
                const int64_t ih = InputIndex(d_.h, p, r);
                if (ih < 0) continue;
                for (int64_t s = 0; s < kw; ++s) {
                  const int64_t iw = InputIndex(d_.w, q, s);
                  if (iw < 0) continue;
                  acc +=
                      static_cast<double>(x[Offset4(d_.c, d_.h.in, d_.w.in, n, c0 + c, ih, iw)]) *
                      static_cast<double>(w[Offset4(cg, kh, kw, k, c, r, s)]);
                }
              }
            const int64_t out = Offset4(d_.k, d_.h.out, d_.w.out, n, k, p, q);
            if (res != nullptr) acc += static_cast<double>(res[out]);
            y[out] = static_cast<T>(ActivationForward(d_.activation, acc));
          }
      }
    return absl::OkStatus();
  }

  // The output index `o` whose window reads input `i` through tap `t`, or -1.
  static int64_t OutputIndex(const WindowDim& dim, int64_t i, int64_t tap) {
    const int64_t pos = i + dim.pad_before - tap * dim.dilation;
    if (pos < 0 || pos % dim.stride != 0) return -1;
    const int64_t o = pos / dim.stride;
    return o < dim.out ? o : -1;
  }

  // The output gradient at `i`: dy, or behind the activation epilogue dy
  // masked by f'(y) (`y` null without one).
  double GradAt(const T* dy, const T* y, int64_t i) const {
    const double g = static_cast<double>(dy[i]);
    if (y == nullptr) return g;
    return ActivationBackwardOfOutput(d_.activation, static_cast<double>(y[i]), g);
  }
  absl::StatusOr<const T*> EpilogueOutput(const KernelArgs& a) const {
    if (d_.activation == ActivationKind::kNone) return nullptr;
    if (a.y == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(
          desc(), ": the activation epilogue's backward reads y, which was not given"));
    return static_cast<const T*>(a.y);
  }

  // Gathers into each dx element (rather than scattering) so every sum is
  // accumulated in double.
  absl::Status RunBackwardData(const KernelArgs& a) override {
    if (a.dx[0] == nullptr) return absl::OkStatus();
    ASSIGN_OR_RETURN(const T* y, EpilogueOutput(a));  // (N,K,P,Q)
    const T* w = static_cast<const T*>(a.params[0]);  // (K,C/g,R,S)
    const T* dy = static_cast<const T*>(a.dy);        // (N,K,P,Q)
    T* dx = static_cast<T*>(a.dx[0]);                 // (N,C,H,W)
    const int64_t cg = d_.c / d_.groups, kg = d_.k / d_.groups;
    const int64_t kh = d_.h.kernel, kw = d_.w.kernel;
    for (int64_t n = 0; n < d_.n; ++n)
      for (int64_t c = 0; c < d_.c; ++c) {
        const int64_t k0 = c / cg * kg, cl = c % cg;  // c's group's outputs; c within it
        for (int64_t ih = 0; ih < d_.h.in; ++ih)
          for (int64_t iw = 0; iw < d_.w.in; ++iw) {
            double acc = 0.0;
            for (int64_t r = 0; r < kh; ++r) {
              const int64_t p = OutputIndex(d_.h, ih, r);
              if (p < 0) continue;
              for (int64_t s = 0; s < kw; ++s) {
                const int64_t q = OutputIndex(d_.w, iw, s);
                if (q < 0) continue;
                for (int64_t k = k0; k < k0 + kg; ++k)
                  acc += GradAt(dy, y, Offset4(d_.k, d_.h.out, d_.w.out, n, k, p, q)) *
                         static_cast<double>(w[Offset4(cg, kh, kw, k, cl, r, s)]);
              }
            }
            dx[Offset4(d_.c, d_.h.in, d_.w.in, n, c, ih, iw)] = static_cast<T>(acc);
          }
      }
    return absl::OkStatus();
  }

  absl::Status RunBackwardWeights(const KernelArgs& a) override {
    ASSIGN_OR_RETURN(const T* y, EpilogueOutput(a));  // (N,K,P,Q)
    const T* x = static_cast<const T*>(a.x[0]);       // (N,C,H,W)
    const T* dy = static_cast<const T*>(a.dy);        // (N,K,P,Q)
    T* dw = static_cast<T*>(a.dparams[0]);            // (K,C/g,R,S)
    const int64_t cg = d_.c / d_.groups, kg = d_.k / d_.groups;
    const int64_t kh = d_.h.kernel, kw = d_.w.kernel;
    for (int64_t k = 0; k < d_.k; ++k) {
      const int64_t c0 = k / kg * cg;
      for (int64_t c = 0; c < cg; ++c)
        for (int64_t r = 0; r < kh; ++r)
          for (int64_t s = 0; s < kw; ++s) {
            double acc = 0.0;
            for (int64_t n = 0; n < d_.n; ++n)
              for (int64_t p = 0; p < d_.h.out; ++p) {
                const int64_t ih = InputIndex(d_.h, p, r);
                if (ih < 0) continue;
                for (int64_t q = 0; q < d_.w.out; ++q) {
                  const int64_t iw = InputIndex(d_.w, q, s);
                  if (iw < 0) continue;
                  acc += GradAt(dy, y, Offset4(d_.k, d_.h.out, d_.w.out, n, k, p, q)) *
                         static_cast<double>(x[Offset4(d_.c, d_.h.in, d_.w.in, n, c0 + c, ih, iw)]);
                }
              }
            dw[Offset4(cg, kh, kw, k, c, r, s)] = static_cast<T>(acc);
          }
    }
    if (d_.bias) {
      T* db = static_cast<T*>(a.dparams[1]);  // (K)
      for (int64_t k = 0; k < d_.k; ++k) {
        double acc = 0.0;
        for (int64_t n = 0; n < d_.n; ++n)
          for (int64_t pq = 0; pq < d_.h.out * d_.w.out; ++pq)
            acc += GradAt(dy, y, (n * d_.k + k) * d_.h.out * d_.w.out + pq);
        db[k] = static_cast<T>(acc);
      }
    }
    return absl::OkStatus();
  }

  const ConvDesc d_;
};

}  // namespace

KernelOr CreateOp(ContextPtr, const ConvDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  const DType dtype = options.dtype;
  const std::string name = desc.ToString();
  KernelSignature sig;
  std::vector<TensorSpec> expected = {TensorSpec::Plain(dtype, desc.input().shape())};
  if (desc.residual) expected.push_back(TensorSpec::Plain(dtype, desc.output().shape()));
  auto resolved = ResolveInputs(name, inputs, expected);
  if (!resolved.ok()) return resolved.status();
  sig.inputs = *std::move(resolved);
  sig.output = TensorSpec::Plain(dtype, desc.output().shape());
  if (desc.residual) sig.output_over_input = 1;  // x1 read element by element before y's
  TensorSpec weights = TensorSpec::Plain(dtype, desc.weights_shape());
  weights.layout = Layout::kOIHW;
  sig.params.push_back(std::move(weights));
  if (desc.bias) sig.params.push_back(TensorSpec::Plain(dtype, Shape{desc.k}));
  sig.backward_reads_inputs = true;                                      // dw needs x
  sig.backward_reads_output = desc.activation != ActivationKind::kNone;  // mask f'(y)
  return MakeTyped<ConvKernel>(dtype, desc, std::move(sig));
}

}  // namespace reference
}  // namespace cnnbench
