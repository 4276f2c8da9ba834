// Plain descriptors of the layer operations. Each has a canonical one-line
// string that parses back to the same descriptor (benchdnn style):
//   conv:mb64_ic256oc512_ih56oh28kh1sh2ph0_iw56ow28kw1sw2pw0
// The string is a benchmark name's shape part, a failure's reproduction line
// and a line of a shape file.
#ifndef CNNBENCH_KERNELS_DESC_H_
#define CNNBENCH_KERNELS_DESC_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/shape.h"
#include "kernels/activation.h"

namespace cnnbench {

// How a window op pads, as TensorFlow defines it: SAME gives ceil(in/stride)
// outputs and puts the odd padding element at the end (bottom/right); VALID
// pads nothing; kExplicit uses the given pads.
enum class Padding { kSame, kValid, kExplicit };

// Activation dims shared by most descriptors: (n, c, h, w).
struct Dims4 {
  int64_t n = 1, c = 1, h = 1, w = 1;
  Shape shape() const { return Shape{n, c, h, w}; }
  int64_t elements() const { return n * c * h * w; }
  bool operator==(const Dims4& o) const { return n == o.n && c == o.c && h == o.h && w == o.w; }
};

// Padding and output size of one spatial dimension.
struct WindowDim {
  int64_t in = 1, out = 1, kernel = 1, stride = 1, pad_before = 0, pad_after = 0, dilation = 1;
  bool operator==(const WindowDim& o) const;
};

// Computes pads and output size for `padding` (SAME/VALID as TensorFlow);
// for kExplicit, `pad_before`/`pad_after` are used. Errors when the window
// does not fit.
absl::StatusOr<WindowDim> MakeWindowDim(int64_t in, int64_t kernel, int64_t stride, Padding padding,
                                        int64_t dilation = 1, int64_t pad_before = 0,
                                        int64_t pad_after = 0);

struct ConvDesc {
  int64_t n = 1, c = 1, k = 1, groups = 1;
  WindowDim h, w;
  bool bias = false;
  // An activation applied to the output as the convolution's epilogue
  // (`_relu`, `_relu6`, after `_bias`): y = f(conv(x) + b). Plans fuse it
  // (train/fusion.h). In training, both backward passes take dy masked by
  // f'(y) (the CPU backends; the cuda backend runs it in forward-only
  // kernels alone).
  ActivationKind activation = ActivationKind::kNone;
  // A second input, the output's shape, added before the activation
  // (`_add`): y = f(conv(x0) + b + x1), the residual add of a ResNet block
  // in one pass. Forward only (inference plans fuse it: train/fusion.h
  // FuseResidualAdd); a kernel may write y over x1 (KernelSignature::
  // output_over_input).
  bool residual = false;

  Dims4 input() const { return {n, c, h.in, w.in}; }
  Dims4 output() const { return {n, k, h.out, w.out}; }
  Shape weights_shape() const { return Shape{k, c / groups, h.kernel, w.kernel}; }  // (K,C/g,R,S)
  double ForwardFlops() const;                                                      // 2 * MACs
  absl::Status Validate() const;
  std::string ToString() const;  // conv:mb..._ic..oc.._<h>_<w>[_bias][_add][_relu|_relu6]
  static absl::StatusOr<ConvDesc> Parse(absl::string_view text);
  bool operator==(const ConvDesc& o) const;
};

enum class PoolAlgorithm { kMax, kAvg /* padded elements counted */, kAvgExcludePad };

struct PoolDesc {
  PoolAlgorithm algorithm = PoolAlgorithm::kMax;
  int64_t n = 1, c = 1;
  WindowDim h, w;

  Dims4 input() const { return {n, c, h.in, w.in}; }
  Dims4 output() const { return {n, c, h.out, w.out}; }
  absl::Status Validate() const;
  std::string ToString() const;  // pool:max_mb32ic64_ih112oh56kh3sh2ph0_iw...
  static absl::StatusOr<PoolDesc> Parse(absl::string_view text);
  bool operator==(const PoolDesc& o) const;
};

// y(M,N) = op(a)(M,K) * op(b)(K,N), row-major.
struct GemmDesc {
  int64_t m = 1, n = 1, k = 1;
  bool transpose_a = false, transpose_b = false;
  double Flops() const { return 2.0 * m * n * k; }
  absl::Status Validate() const;
  std::string ToString() const;  // gemm:m2048n2048k2048[_ta][_tb]
  static absl::StatusOr<GemmDesc> Parse(absl::string_view text);
  bool operator==(const GemmDesc& o) const;
};

// Fully connected: y(N,OC) = x(N,IC) * W(OC,IC)^T + b(OC). A 4D input is
// flattened to IC = C*H*W.
struct FcDesc {
  int64_t n = 1, ic = 1, oc = 1;
  bool bias = true;
  GemmDesc AsGemm() const { return {n, oc, ic, false, true}; }
  double ForwardFlops() const { return 2.0 * n * ic * oc; }
  absl::Status Validate() const;
  std::string ToString() const;  // fc:mb32ic2048oc1001[_nobias]
  static absl::StatusOr<FcDesc> Parse(absl::string_view text);
  bool operator==(const FcDesc& o) const;
};

// Training-mode batch normalization over (N,H,W) per channel, with running
// statistics updated as r = momentum * r + (1 - momentum) * batch.
struct BatchNormDesc {
  Dims4 dims;
  double epsilon = 1e-3;
  double momentum = 0.997;
  bool scale = true;  // gamma present (tf_cnn_benchmarks' scale=True)
  // An activation fused after the normalisation (`_relu`, `_relu6`):
  // y = f(bn(x)), and the backward passes see dy masked by f'(y). The
  // executor fuses a batch norm whose only consumer is an activation when
  // the backend runs the fused form.
  ActivationKind activation = ActivationKind::kNone;
  absl::Status Validate() const;
  std::string ToString() const;  // bn:mb32ic64ih56iw56_eps0.001mom0.997[_noscale][_relu|_relu6]
  static absl::StatusOr<BatchNormDesc> Parse(absl::string_view text);
  bool operator==(const BatchNormDesc& o) const;
};

// The standalone activation op (its kind and family keep ReLU's name):
// y = f(x), dx = dy * f'(x). ReLU prints no suffix (relu:mb32ic64ih56iw56),
// every other kind its own (relu:mb32ic64ih56iw56_relu6).
struct ReluDesc {
  Dims4 dims;
  ActivationKind kind = ActivationKind::kRelu;  // never kNone
  absl::Status Validate() const;
  std::string ToString() const;  // relu:mb32ic64ih56iw56[_relu6]
  static absl::StatusOr<ReluDesc> Parse(absl::string_view text);
  bool operator==(const ReluDesc& o) const { return dims == o.dims && kind == o.kind; }
};

// Across-channel LRN as TensorFlow defines it:
// y = x / (bias + alpha * sum_{|j-c|<=radius} x_j^2)^beta.
struct LrnDesc {
  Dims4 dims;
  int64_t depth_radius = 5;
  double bias = 1.0, alpha = 1e-4, beta = 0.75;
  absl::Status Validate() const;
  std::string ToString() const;  // lrn:mb..ic..ih..iw.._r5k1a0.0001b0.75
  static absl::StatusOr<LrnDesc> Parse(absl::string_view text);
  bool operator==(const LrnDesc& o) const;
};

// Inverted dropout: keeps each element with probability 1 - rate and scales
// it by 1 / (1 - rate).
struct DropoutDesc {
  Dims4 dims;
  double rate = 0.5;
  absl::Status Validate() const;
  std::string ToString() const;  // dropout:mb32ic4096ih1iw1_p0.5
  static absl::StatusOr<DropoutDesc> Parse(absl::string_view text);
  bool operator==(const DropoutDesc& o) const;
};

// Channel concatenation of inputs that share n, h, w.
struct ConcatDesc {
  int64_t n = 1, h = 1, w = 1;
  std::vector<int64_t> channels;
  Dims4 output() const;
  absl::Status Validate() const;
  std::string ToString() const;  // concat:mb32ih28iw28_ic64:128:32:32
  static absl::StatusOr<ConcatDesc> Parse(absl::string_view text);
  bool operator==(const ConcatDesc& o) const;
};

// Elementwise sum of two equal-shape tensors (residual connections).
struct AddDesc {
  Dims4 dims;
  // An activation fused after the sum (`_relu`, `_relu6`): y = f(x0 + x1);
  // both inputs' gradients are dy masked by f'(y).
  ActivationKind activation = ActivationKind::kNone;
  absl::Status Validate() const;
  std::string ToString() const;  // add:mb32ic256ih56iw56[_relu|_relu6]
  static absl::StatusOr<AddDesc> Parse(absl::string_view text);
  bool operator==(const AddDesc& o) const { return dims == o.dims && activation == o.activation; }
};

// Zero channels around the input's: y(N, before + C + after, H, W) holds
// x in channels [before, before + C) and zeros elsewhere (tf.pad on the
// channel axis: the CIFAR ResNets' shortcut where the depth grows); the
// backward hands x its slice of dy.
struct ChannelPadDesc {
  Dims4 dims;  // the input
  int64_t before = 0, after = 0;
  Dims4 output() const { return {dims.n, before + dims.c + after, dims.h, dims.w}; }
  absl::Status Validate() const;
  std::string ToString() const;  // chpad:mb32ic16ih16iw16_b8a8
  static absl::StatusOr<ChannelPadDesc> Parse(absl::string_view text);
  bool operator==(const ChannelPadDesc& o) const {
    return dims == o.dims && before == o.before && after == o.after;
  }
};

// Zero rows and columns around the input's spatial dims, or rows and
// columns removed where an amount is negative (a crop), per side:
// y(N, C, top + H + bottom, left + W + right), y(n, c, i, j) =
// x(n, c, i - top, j - left) where that lies in x, else 0; the backward
// hands x its window of dy. NASNet's factorized reduction shifts its
// second path by one pixel as spad:..._t-1b1l-1r1 (tf.pad by one at the
// bottom and right, then the first row and column dropped).
struct SpatialPadDesc {
  Dims4 dims;  // the input
  int64_t top = 0, bottom = 0, left = 0, right = 0;
  Dims4 output() const { return {dims.n, dims.c, top + dims.h + bottom, left + dims.w + right}; }
  absl::Status Validate() const;
  std::string ToString() const;  // spad:mb32ic16ih83iw83_t-1b1l-1r1
  static absl::StatusOr<SpatialPadDesc> Parse(absl::string_view text);
  bool operator==(const SpatialPadDesc& o) const {
    return dims == o.dims && top == o.top && bottom == o.bottom && left == o.left &&
           right == o.right;
  }
};

// Drop-path (NASNet's): in training each example is kept whole with
// probability p and scaled by 1 / p, or zeroed, where
// p = 1 - min(1, step / ramp_steps) * (1 - keep) ramps from 1 down to
// `keep` over the first ramp_steps training steps (ramp_steps 0: p = keep
// from the first step); the backward scales dy by the same mask. The
// identity in inference. kernels/drop_path.h holds the arithmetic.
struct DropPathDesc {
  Dims4 dims;
  double keep = 1.0;       // in (0, 1]
  int64_t ramp_steps = 0;  // >= 0
  absl::Status Validate() const;
  std::string ToString() const;  // droppath:mb16ic168ih42iw42_k0.7r250000
  static absl::StatusOr<DropPathDesc> Parse(absl::string_view text);
  bool operator==(const DropPathDesc& o) const {
    return dims == o.dims && keep == o.keep && ramp_steps == o.ramp_steps;
  }
};

// Channel multiply (squeeze-and-excitation's scale): y = x0 * x1 with x1
// one value per example and channel, (N,C,1,1) (or the (N,C) of an fc),
// broadcast over (H,W). Backward: dx0 = dy * x1, dx1 = the sum over (H,W)
// of dy * x0. kernels/channel_mul.h holds the index arithmetic.
struct ChannelMulDesc {
  Dims4 dims;  // x0's and y's
  // Whether a producer's shape holds x1: (N,C,1,1), or (N,C) from an fc.
  bool IsScaleShape(const Shape& shape) const;
  absl::Status Validate() const;
  std::string ToString() const;  // chmul:mb32ic96ih56iw56
  static absl::StatusOr<ChannelMulDesc> Parse(absl::string_view text);
  bool operator==(const ChannelMulDesc& o) const { return dims == o.dims; }
};

// Layer normalisation over the channels of each example's every position
// (ConvNeXt's LayerNorm2d: PyTorch's layer_norm over C of a channels-last
// tensor): y = (x - mean) / sqrt(var + epsilon) * gamma[c] + beta[c], mean
// and (biased) variance over C at each (n, h, w). Parameters gamma and beta
// (C). kernels/layer_norm.h holds the arithmetic.
struct LayerNormDesc {
  Dims4 dims;
  double epsilon = 1e-6;  // > 0
  int64_t positions() const { return dims.n * dims.h * dims.w; }
  absl::Status Validate() const;
  std::string ToString() const;  // lnorm:mb32ic96ih56iw56_eps1e-06
  static absl::StatusOr<LayerNormDesc> Parse(absl::string_view text);
  bool operator==(const LayerNormDesc& o) const {
    return dims == o.dims && epsilon == o.epsilon;
  }
};

// Mean softmax cross-entropy of logits (N, classes) against int32 labels.
struct SoftmaxXentDesc {
  int64_t n = 1, classes = 1;
  absl::Status Validate() const;
  std::string ToString() const;  // softmax_xent:mb32ic1001
  static absl::StatusOr<SoftmaxXentDesc> Parse(absl::string_view text);
  bool operator==(const SoftmaxXentDesc& o) const { return n == o.n && classes == o.classes; }
};

// SGD with momentum over `count` parameters (tf.train.MomentumOptimizer):
//   g' = g + weight_decay * w;  v = momentum * v + g';  w -= learning_rate * v.
// momentum 0 is plain SGD.
struct SgdDesc {
  int64_t count = 1;
  double learning_rate = 0.1, momentum = 0.9, weight_decay = 0.0;
  absl::Status Validate() const;
  std::string ToString() const;  // sgd:n25557032_lr0.1m0.9wd0.0001
  static absl::StatusOr<SgdDesc> Parse(absl::string_view text);
  bool operator==(const SgdDesc& o) const;
};

// Any layer operation (everything but the optimizer).
// A GemmDesc as an op: inputs A (m,k) and B (k,n) (stored transposed with
// _ta/_tb), output C = op(A) op(B) (m,n); backward gives dA and dB.
using OpDesc =
    std::variant<ConvDesc, PoolDesc, FcDesc, BatchNormDesc, ReluDesc, LrnDesc, DropoutDesc,
                 ConcatDesc, AddDesc, SoftmaxXentDesc, GemmDesc, ChannelPadDesc,
                 SpatialPadDesc, DropPathDesc, ChannelMulDesc, LayerNormDesc>;

std::string OpDescToString(const OpDesc& desc);
// The activation fused into the op (conv, bn, add); kNone for the others
// and for the activation op itself.
ActivationKind FusedActivation(const OpDesc& desc);
// Whether the op has trainable parameters (conv, fc, batch norm).
bool HasParameters(const OpDesc& desc);
// Dispatches on the prefix before ':' ("conv", "pool", "fc", ...).
absl::StatusOr<OpDesc> ParseOpDesc(absl::string_view text);
// The descriptor's name prefix: "conv", "pool", "fc", "bn", ... (OpKinds()).
absl::string_view OpKind(const OpDesc& desc);
// Every kind, in OpDesc's order. Each op's facts: kernels/op_traits.h.
std::vector<absl::string_view> OpKinds();
// Every op's small sample descriptor (OpTraits<T>::kSample), in OpDesc's
// order: what the tests that cover every op iterate.
std::vector<absl::string_view> OpSamples();

}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_DESC_H_
