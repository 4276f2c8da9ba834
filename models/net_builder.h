// NetBuilder: writes a network as a flat sequence of layer calls while it
// tracks the current shape (in the spirit of tf_cnn_benchmarks'
// ConvNetBuilder), e.g.
//   b.Conv(64, {11, 11}, {.stride = 4, .padding = Padding::kValid});
//   b.MaxPool({3, 3}, {.stride = 2});
//   b.Fc(4096); b.Dropout(0.5); b.Logits();
// The first error (a shape that does not fit, a channel mismatch) is kept,
// names the layer, and is returned by Build(); later calls do nothing.
#ifndef CNNBENCH_MODELS_NET_BUILDER_H_
#define CNNBENCH_MODELS_NET_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/graph.h"

namespace cnnbench {

// A layer's activation: kernels/activation.h's kinds (kNone: none).
using Activation = ActivationKind;

struct Window {
  int64_t h = 1, w = 1;
};

struct ConvOptions {
  int64_t stride = 1;  // both dimensions, unless stride_h/stride_w > 0
  int64_t stride_h = 0, stride_w = 0;
  Padding padding = Padding::kSame;
  int64_t pad_h = 0, pad_w = 0;  // symmetric explicit padding with Padding::kExplicit
  int64_t dilation = 1;
  int64_t groups = 1;
  Activation activation = Activation::kRelu;
  // -1: the builder's default (set in the constructor); 0: off; 1: on.
  // With batch norm the conv has no bias: conv -> bn -> activation.
  int batch_norm = -1;
  // Without batch norm: whether the conv adds a bias (tf_cnn_benchmarks'
  // `bias=None` turns it off, as in ResNet v2's last conv of a block).
  bool bias = true;
};

struct PoolOptions {
  int64_t stride = 1;
  Padding padding = Padding::kValid;
  bool exclude_padding = true;  // average pooling: TensorFlow excludes padded elements
};

struct FcOptions {
  Activation activation = Activation::kRelu;
  bool bias = true;
};

struct BatchNormOptions {
  double epsilon = 1e-3;
  double momentum = 0.997;
  bool scale = true;
};

class NetBuilder {
 public:
  // Images are (batch, channels, height, width); labels have `classes` values.
  NetBuilder(int64_t batch, int64_t channels, int64_t height, int64_t width, int64_t classes,
             bool batch_norm_by_default = false);

  // Each layer reads the current top and makes its output the new top; the
  // returned index names that output for branches.
  int Conv(int64_t filters, Window kernel, ConvOptions options = {});
  int MaxPool(Window window, PoolOptions options = {});
  int AvgPool(Window window, PoolOptions options = {});
  int Fc(int64_t units, FcOptions options = {});
  int BatchNorm(BatchNormOptions options = {});
  // Layer norm over the channels at each position (LayerNormDesc:
  // ConvNeXt's LayerNorm2d), with gamma and beta.
  int LayerNorm(double epsilon = 1e-6);
  int Relu();
  // The activation layer of `kind` (not kNone); Relu() is Activate(kRelu).
  int Activate(Activation kind);
  // Average over the whole remaining height and width (tf_cnn_benchmarks'
  // spatial_mean): (N,C,H,W) -> (N,C,1,1), whatever the image size.
  int SpatialMean();
  int Lrn(int64_t depth_radius, double bias, double alpha, double beta);
  int Dropout(double rate);
  // Zero channels before and after the top's (ChannelPadDesc).
  int PadChannels(int64_t before, int64_t after);
  // Zero rows and columns per side of the top, a negative amount crops
  // (SpatialPadDesc): NASNet's one-pixel shift is SpatialPad(-1, 1, -1, 1).
  int SpatialPad(int64_t top, int64_t bottom, int64_t left, int64_t right);
  // Drop-path on the top (DropPathDesc): in training each example is kept
  // with a probability ramping from 1 down to `keep` over `ramp_steps`
  // steps, or zeroed; the identity in inference.
  int DropPath(double keep, int64_t ramp_steps);
  // Channel concat of the given outputs; becomes the top.
  int Concat(const std::vector<int>& inputs);
  // Channel multiply x * scale (ChannelMulDesc: squeeze-and-excitation's
  // scale): `scale` holds one value per example and channel of `x`,
  // (N,C,1,1) or an fc's (N,C); becomes the top.
  int ChannelMul(int x, int scale);
  // Elementwise a + b (residual); becomes the top.
  int Add(int a, int b);
  // Fc to the class count with no activation, then the softmax cross-entropy loss.
  int Logits();

  int top() const { return top_; }
  void set_top(int node) { top_ = node; }
  const Shape& shape(int node) const;  // logical output shape of a node
  const Shape& top_shape() const { return shape(top_); }
  // Prefix for the names of the layers that follow ("block2/unit1/").
  void set_scope(std::string scope) { scope_ = std::move(scope); }
  bool batch_norm_by_default() const { return batch_norm_by_default_; }
  // The batch norm that Conv adds (tf_cnn_benchmarks' batch_norm_config);
  // explicit BatchNorm() calls take their own options.
  void set_conv_batch_norm(BatchNormOptions options) { conv_batch_norm_ = options; }
  const BatchNormOptions& conv_batch_norm() const { return conv_batch_norm_; }
  int64_t batch() const { return graph_.batch; }
  int64_t classes() const { return graph_.classes; }
  const absl::Status& status() const { return status_; }

  absl::StatusOr<Graph> Build() &&;

 private:
  int AddOp(const std::string& kind, OpDesc op, std::vector<int> inputs, Shape output);
  int Fail(const std::string& kind, const absl::Status& status);
  int Pool(PoolAlgorithm algorithm, Window window, PoolOptions options);
  // (N, C, H, W) of a node, or an error naming `layer` when it is not 4-D.
  absl::StatusOr<Dims4> Dims(int node, const std::string& layer) const;
  std::string NextName(const std::string& kind);

  Graph graph_;
  int top_ = -1;
  std::string scope_;
  bool batch_norm_by_default_;
  BatchNormOptions conv_batch_norm_;
  absl::Status status_;
  std::vector<std::pair<std::string, int>> counters_;
};

}  // namespace cnnbench

#endif  // CNNBENCH_MODELS_NET_BUILDER_H_
