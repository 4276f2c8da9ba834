#include "models/net_builder.h"

#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status.h"

namespace cnnbench {

std::vector<std::vector<int>> Graph::Consumers() const {
  std::vector<std::vector<int>> consumers(nodes.size());
  for (int i = 0; i < static_cast<int>(nodes.size()); ++i)
    for (int in : nodes[i].inputs) consumers[in].push_back(i);
  return consumers;
}

std::vector<bool> Graph::NeedsGradient() const {
  std::vector<bool> needs(nodes.size(), false);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].kind != Node::Kind::kOp) continue;
    bool grad = HasParameters(nodes[i].op);
    for (int in : nodes[i].inputs)
      if (in >= 0 && static_cast<size_t>(in) < i) grad = grad || needs[in];
    needs[i] = grad;
  }
  return needs;
}

std::string Graph::DebugString() const {
  std::string out;
  for (const Node& n : nodes) {
    std::string op = n.kind == Node::Kind::kImages   ? "images"
                     : n.kind == Node::Kind::kLabels ? "labels"
                                                     : OpDescToString(n.op);
    absl::StrAppend(&out, n.name, "  ", op, "  [", absl::StrJoin(n.inputs, ","), "] -> ",
                    n.output.ToString(), "\n");
  }
  return out;
}

NetBuilder::NetBuilder(int64_t batch, int64_t channels, int64_t height, int64_t width,
                       int64_t classes, bool batch_norm_by_default)
    : batch_norm_by_default_(batch_norm_by_default) {
  graph_.batch = batch;
  graph_.classes = classes;
  Node images;
  images.kind = Node::Kind::kImages;
  images.name = "images";
  images.output = Shape{batch, channels, height, width};
  graph_.nodes.push_back(images);
  graph_.images = 0;
  Node labels;
  labels.kind = Node::Kind::kLabels;
  labels.name = "labels";
  labels.output = Shape{batch};
  graph_.nodes.push_back(labels);
  graph_.labels = 1;
  top_ = 0;
  if (batch <= 0 || channels <= 0 || height <= 0 || width <= 0 || classes <= 0)
    status_ = absl::InvalidArgumentError(
        absl::StrCat("network input must have positive sizes: batch ", batch, ", image ", channels,
                     "x", height, "x", width, ", classes ", classes));
}

const Shape& NetBuilder::shape(int node) const { return graph_.nodes[node].output; }

std::string NetBuilder::NextName(const std::string& kind) {
  for (auto& [k, count] : counters_)
    if (k == kind) return absl::StrCat(scope_, kind, count++);
  counters_.push_back({kind, 1});
  return absl::StrCat(scope_, kind, 0);
}

int NetBuilder::Fail(const std::string& kind, const absl::Status& status) {
  if (status_.ok())
    status_ =
        absl::Status(status.code(), absl::StrCat("layer ", NextName(kind), " (", kind, " on ",
                                                 top_shape().ToString(), "): ", status.message()));
  return top_;
}

int NetBuilder::AddOp(const std::string& kind, OpDesc op, std::vector<int> inputs, Shape output) {
  Node node;
  node.kind = Node::Kind::kOp;
  node.name = NextName(kind);
  node.op = std::move(op);
  node.inputs = std::move(inputs);
  node.output = std::move(output);
  graph_.nodes.push_back(std::move(node));
  top_ = static_cast<int>(graph_.nodes.size()) - 1;
  return top_;
}

absl::StatusOr<Dims4> NetBuilder::Dims(int node, const std::string& layer) const {
  const Shape& s = shape(node);
  if (s.rank() != 4)
    return absl::InvalidArgumentError(
        absl::StrCat(layer, " needs a 4-D (N,C,H,W) input, got ", s.ToString()));
  return Dims4{s[0], s[1], s[2], s[3]};
}

int NetBuilder::Conv(int64_t filters, Window kernel, ConvOptions options) {
  if (!status_.ok()) return top_;
  auto dims = Dims(top_, "conv");
  if (!dims.ok()) return Fail("conv", dims.status());
  const bool bn = options.batch_norm < 0 ? batch_norm_by_default_ : options.batch_norm > 0;
  const int64_t sh = options.stride_h > 0 ? options.stride_h : options.stride;
  const int64_t sw = options.stride_w > 0 ? options.stride_w : options.stride;
  auto h = MakeWindowDim(dims->h, kernel.h, sh, options.padding, options.dilation, options.pad_h,
                         options.pad_h);
  if (!h.ok()) return Fail("conv", h.status());
  auto w = MakeWindowDim(dims->w, kernel.w, sw, options.padding, options.dilation, options.pad_w,
                         options.pad_w);
  if (!w.ok()) return Fail("conv", w.status());
  ConvDesc desc;
  desc.n = dims->n;
  desc.c = dims->c;
  desc.k = filters;
  desc.groups = options.groups;
  desc.h = *h;
  desc.w = *w;
  desc.bias = !bn && options.bias;
  if (absl::Status s = desc.Validate(); !s.ok()) return Fail("conv", s);
  AddOp("conv", desc, {top_}, desc.output().shape());
  if (bn) BatchNorm(conv_batch_norm_);
  if (options.activation != Activation::kNone) Activate(options.activation);
  return top_;
}

int NetBuilder::Pool(PoolAlgorithm algorithm, Window window, PoolOptions options) {
  const std::string kind = algorithm == PoolAlgorithm::kMax ? "maxpool" : "avgpool";
  if (!status_.ok()) return top_;
  auto dims = Dims(top_, kind);
  if (!dims.ok()) return Fail(kind, dims.status());
  auto h = MakeWindowDim(dims->h, window.h, options.stride, options.padding);
  if (!h.ok()) return Fail(kind, h.status());
  auto w = MakeWindowDim(dims->w, window.w, options.stride, options.padding);
  if (!w.ok()) return Fail(kind, w.status());
  PoolDesc desc;
  desc.algorithm = algorithm;
  desc.n = dims->n;
  desc.c = dims->c;
  desc.h = *h;
  desc.w = *w;
  if (absl::Status s = desc.Validate(); !s.ok()) return Fail(kind, s);
  return AddOp(kind, desc, {top_}, desc.output().shape());
}

int NetBuilder::MaxPool(Window window, PoolOptions options) {
  return Pool(PoolAlgorithm::kMax, window, options);
}

int NetBuilder::AvgPool(Window window, PoolOptions options) {
  return Pool(options.exclude_padding ? PoolAlgorithm::kAvgExcludePad : PoolAlgorithm::kAvg, window,
              options);
}

int NetBuilder::SpatialMean() {
  if (!status_.ok()) return top_;
  auto dims = Dims(top_, "avgpool");
  if (!dims.ok()) return Fail("avgpool", dims.status());
  return AvgPool({dims->h, dims->w}, {.stride = 1, .padding = Padding::kValid});
}

int NetBuilder::Fc(int64_t units, FcOptions options) {
  if (!status_.ok()) return top_;
  const Shape& in = top_shape();
  if (in.rank() < 2) return Fail("fc", absl::InvalidArgumentError("fc needs a batch of vectors"));
  FcDesc desc;
  desc.n = in[0];
  desc.ic = in.num_elements() / in[0];
  desc.oc = units;
  desc.bias = options.bias;
  if (absl::Status s = desc.Validate(); !s.ok()) return Fail("fc", s);
  AddOp("fc", desc, {top_}, Shape{desc.n, desc.oc});
  if (options.activation != Activation::kNone) Activate(options.activation);
  return top_;
}

int NetBuilder::BatchNorm(BatchNormOptions options) {
  if (!status_.ok()) return top_;
  auto dims = Dims(top_, "batchnorm");
  if (!dims.ok()) return Fail("batchnorm", dims.status());
  BatchNormDesc desc;
  desc.dims = *dims;
  desc.epsilon = options.epsilon;
  desc.momentum = options.momentum;
  desc.scale = options.scale;
  if (absl::Status s = desc.Validate(); !s.ok()) return Fail("batchnorm", s);
  return AddOp("batchnorm", desc, {top_}, top_shape());
}

int NetBuilder::LayerNorm(double epsilon) {
  if (!status_.ok()) return top_;
  auto dims = Dims(top_, "lnorm");
  if (!dims.ok()) return Fail("lnorm", dims.status());
  LayerNormDesc desc;
  desc.dims = *dims;
  desc.epsilon = epsilon;
  if (absl::Status s = desc.Validate(); !s.ok()) return Fail("lnorm", s);
  return AddOp("lnorm", desc, {top_}, top_shape());
}

// Elementwise ops on a 2-D (N,C) input use H = W = 1.
static Dims4 AsDims4(const Shape& s) {
  Dims4 d{s[0], s.rank() > 1 ? s[1] : 1, s.rank() > 2 ? s[2] : 1, s.rank() > 3 ? s[3] : 1};
  return d;
}

int NetBuilder::Relu() { return Activate(Activation::kRelu); }

int NetBuilder::Activate(Activation kind) {
  if (!status_.ok()) return top_;
  ReluDesc desc;
  desc.dims = AsDims4(top_shape());
  desc.kind = kind;
  if (absl::Status s = desc.Validate(); !s.ok()) return Fail("activation", s);
  // The layer is named for its kind: "relu", "relu6".
  return AddOp(std::string(absl::string_view(ActivationSuffix(kind)).substr(1)), desc, {top_},
               top_shape());
}

int NetBuilder::Lrn(int64_t depth_radius, double bias, double alpha, double beta) {
  if (!status_.ok()) return top_;
  auto dims = Dims(top_, "lrn");
  if (!dims.ok()) return Fail("lrn", dims.status());
  LrnDesc desc;
  desc.dims = *dims;
  desc.depth_radius = depth_radius;
  desc.bias = bias;
  desc.alpha = alpha;
  desc.beta = beta;
  if (absl::Status s = desc.Validate(); !s.ok()) return Fail("lrn", s);
  return AddOp("lrn", desc, {top_}, top_shape());
}

int NetBuilder::Dropout(double rate) {
  if (!status_.ok()) return top_;
  DropoutDesc desc;
  desc.dims = AsDims4(top_shape());
  desc.rate = rate;
  if (absl::Status s = desc.Validate(); !s.ok()) return Fail("dropout", s);
  return AddOp("dropout", desc, {top_}, top_shape());
}

int NetBuilder::PadChannels(int64_t before, int64_t after) {
  if (!status_.ok()) return top_;
  auto dims = Dims(top_, "chpad");
  if (!dims.ok()) return Fail("chpad", dims.status());
  ChannelPadDesc desc;
  desc.dims = *dims;
  desc.before = before;
  desc.after = after;
  if (absl::Status s = desc.Validate(); !s.ok()) return Fail("chpad", s);
  return AddOp("chpad", desc, {top_}, desc.output().shape());
}

int NetBuilder::SpatialPad(int64_t top, int64_t bottom, int64_t left, int64_t right) {
  if (!status_.ok()) return top_;
  auto dims = Dims(top_, "spad");
  if (!dims.ok()) return Fail("spad", dims.status());
  SpatialPadDesc desc;
  desc.dims = *dims;
  desc.top = top;
  desc.bottom = bottom;
  desc.left = left;
  desc.right = right;
  if (absl::Status s = desc.Validate(); !s.ok()) return Fail("spad", s);
  return AddOp("spad", desc, {top_}, desc.output().shape());
}

int NetBuilder::DropPath(double keep, int64_t ramp_steps) {
  if (!status_.ok()) return top_;
  auto dims = Dims(top_, "droppath");
  if (!dims.ok()) return Fail("droppath", dims.status());
  DropPathDesc desc;
  desc.dims = *dims;
  desc.keep = keep;
  desc.ramp_steps = ramp_steps;
  if (absl::Status s = desc.Validate(); !s.ok()) return Fail("droppath", s);
  return AddOp("droppath", desc, {top_}, top_shape());
}

int NetBuilder::Concat(const std::vector<int>& inputs) {
  if (!status_.ok()) return top_;
  if (inputs.empty()) return Fail("concat", absl::InvalidArgumentError("no inputs"));
  ConcatDesc desc;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto dims = Dims(inputs[i], "concat");
    if (!dims.ok()) return Fail("concat", dims.status());
    if (i == 0) {
      desc.n = dims->n;
      desc.h = dims->h;
      desc.w = dims->w;
    } else if (dims->n != desc.n || dims->h != desc.h || dims->w != desc.w) {
      return Fail("concat",
                  absl::InvalidArgumentError(absl::StrCat(
                      "input ", i, " (", graph_.nodes[inputs[i]].name, ") is ",
                      shape(inputs[i]).ToString(), " but input 0 (", graph_.nodes[inputs[0]].name,
                      ") is ", shape(inputs[0]).ToString(), ": N, H and W must match")));
    }
    desc.channels.push_back(dims->c);
  }
  if (absl::Status s = desc.Validate(); !s.ok()) return Fail("concat", s);
  return AddOp("concat", desc, inputs, desc.output().shape());
}

int NetBuilder::Add(int a, int b) {
  if (!status_.ok()) return top_;
  if (shape(a) != shape(b))
    return Fail("add", absl::InvalidArgumentError(
                           absl::StrCat(graph_.nodes[a].name, " is ", shape(a).ToString(), " but ",
                                        graph_.nodes[b].name, " is ", shape(b).ToString())));
  AddDesc desc;
  desc.dims = AsDims4(shape(a));
  return AddOp("add", desc, {a, b}, shape(a));
}

int NetBuilder::ChannelMul(int x, int scale) {
  if (!status_.ok()) return top_;
  auto dims = Dims(x, "chmul");
  if (!dims.ok()) return Fail("chmul", dims.status());
  ChannelMulDesc desc;
  desc.dims = *dims;
  if (!desc.IsScaleShape(shape(scale)))
    return Fail("chmul", absl::InvalidArgumentError(absl::StrCat(
                             graph_.nodes[scale].name, " is ", shape(scale).ToString(), " but ",
                             graph_.nodes[x].name, " (", shape(x).ToString(), ") needs (", dims->n,
                             ",", dims->c, ",1,1) or (", dims->n, ",", dims->c, ")")));
  return AddOp("chmul", desc, {x, scale}, shape(x));
}

int NetBuilder::Logits() {
  if (!status_.ok()) return top_;
  const std::string saved_scope = scope_;
  scope_.clear();
  Fc(graph_.classes, {.activation = Activation::kNone});
  scope_ = saved_scope;
  if (!status_.ok()) return top_;
  graph_.logits = top_;
  SoftmaxXentDesc desc;
  desc.n = graph_.batch;
  desc.classes = graph_.classes;
  graph_.loss = AddOp("loss", desc, {graph_.logits, graph_.labels}, Shape{});
  return top_;
}

absl::StatusOr<Graph> NetBuilder::Build() && {
  RETURN_IF_ERROR(status_);
  if (graph_.loss < 0) return absl::FailedPreconditionError("the network has no Logits() layer");
  return std::move(graph_);
}

}  // namespace cnnbench
