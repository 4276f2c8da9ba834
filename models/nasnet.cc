// NASNet-A (Zoph et al. 2018, "Learning Transferable Architectures for
// Scalable Image Recognition"), as tf_cnn_benchmarks' nasnet_model.py and
// nasnet_utils.py build it: a stem, then stacks of normal cells with a
// reduction cell before the second and third stacks. Both cells are data
// (kNasNetANormalCell, kNasNetAReductionCell: five combinations of two
// (operation, hidden state) pairs each) shared by the mobile, large and
// CIFAR networks, which differ only in their NasNetConfig. Convolutions
// have no bias and no activation (TF-slim's NASNet arg_scope); every
// separable convolution is ReLU -> depthwise -> pointwise -> batch norm,
// twice.
#include <vector>

#include "absl/strings/str_cat.h"
#include "models/zoo_models.h"

namespace cnnbench {

const NasNetCell kNasNetANormalCell = {
    .ops = {{{{{NasNetOp::kSeparable5x5, 0}, {NasNetOp::kSeparable3x3, 1}}},
             {{{NasNetOp::kSeparable5x5, 1}, {NasNetOp::kSeparable3x3, 1}}},
             {{{NasNetOp::kAvgPool3x3, 0}, {NasNetOp::kIdentity, 1}}},
             {{{NasNetOp::kAvgPool3x3, 1}, {NasNetOp::kAvgPool3x3, 1}}},
             {{{NasNetOp::kSeparable3x3, 0}, {NasNetOp::kIdentity, 0}}}}},
    .used = {true, false, false, false, false, false, false},
};

const NasNetCell kNasNetAReductionCell = {
    .ops = {{{{{NasNetOp::kSeparable5x5, 0}, {NasNetOp::kSeparable7x7, 1}}},
             {{{NasNetOp::kMaxPool3x3, 0}, {NasNetOp::kSeparable7x7, 1}}},
             {{{NasNetOp::kAvgPool3x3, 0}, {NasNetOp::kSeparable5x5, 1}}},
             {{{NasNetOp::kIdentity, 3}, {NasNetOp::kAvgPool3x3, 2}}},
             {{{NasNetOp::kSeparable3x3, 2}, {NasNetOp::kMaxPool3x3, 0}}}}},
    .used = {true, true, true, false, false, false, false},
};

double NasNetCellKeep(double keep, int cell_num, int total_cells) {
  const double layer_ratio = static_cast<double>(cell_num + 1) / total_cells;
  return 1.0 - layer_ratio * (1.0 - keep);
}

std::vector<int> NasNetReductionIndices(int num_cells) {
  return {num_cells / 3, 2 * num_cells / 3};  // calc_reduction_layers with two
}

int64_t NasNetOpKernel(NasNetOp op) {
  switch (op) {
    case NasNetOp::kSeparable3x3: return 3;
    case NasNetOp::kSeparable5x5: return 5;
    case NasNetOp::kSeparable7x7: return 7;
    case NasNetOp::kAvgPool3x3: return 3;
    case NasNetOp::kMaxPool3x3: return 3;
    case NasNetOp::kIdentity: return 1;
  }
  return 1;
}

namespace {

int64_t Channels(const NetBuilder& b, int node) { return b.shape(node)[1]; }
int64_t Height(const NetBuilder& b, int node) { return b.shape(node)[2]; }

// A 1x1 convolution and batch norm of `input` (no activation).
int Project(NetBuilder& b, int input, int64_t filters, int64_t stride = 1) {
  b.set_top(input);
  return b.Conv(filters, {1, 1},
                {.stride = stride, .padding = Padding::kValid,
                 .activation = Activation::kNone, .batch_norm = 1});
}

// nasnet_utils' factorized_reduction: at stride 1 a 1x1 conv and batch
// norm; at stride 2 two half-width 1x1 convs of stride 2, the second on the
// input shifted by one pixel (spad t-1b1l-1r1), concatenated, then batch
// norm. The 1x1 average pool of stride 2 before each conv is the conv's
// own stride.
int FactorizedReduction(NetBuilder& b, int input, int64_t filters, int64_t stride) {
  if (stride == 1) return Project(b, input, filters);
  const ConvOptions half = {.stride = 2, .padding = Padding::kValid,
                            .activation = Activation::kNone, .batch_norm = 0, .bias = false};
  b.set_top(input);
  const int path1 = b.Conv(filters / 2, {1, 1}, half);
  b.set_top(input);
  b.SpatialPad(-1, 1, -1, 1);
  const int path2 = b.Conv(filters / 2, {1, 1}, half);
  b.Concat({path1, path2});
  return b.BatchNorm(b.conv_batch_norm());
}

// ReLU, depthwise kxk (stride), pointwise to `filters`, batch norm; twice
// (slim's stacked separable conv: the stride in the first only).
int StackedSeparable(NetBuilder& b, int input, int64_t kernel, int64_t stride, int64_t filters) {
  b.set_top(input);
  for (int layer = 0; layer < 2; ++layer) {
    b.Relu();
    const int64_t channels = b.top_shape()[1];
    b.Conv(channels, {kernel, kernel},
           {.stride = layer == 0 ? stride : 1, .groups = channels,
            .activation = Activation::kNone, .batch_norm = 0, .bias = false});
    b.Conv(filters, {1, 1}, {.activation = Activation::kNone, .batch_norm = 1});
  }
  return b.top();
}

struct CellPlace {
  int64_t filters = 1;
  int64_t stride = 1;
  int cell_num = 0;  // counting the stem cells: drop-path's layer ratio
};

// nasnet_utils' _apply_conv_operation: only the cell's two inputs are
// strided; an op other than the identity is followed by drop-path.
int ApplyOp(NetBuilder& b, NasNetOp op, int input, int64_t stride, const CellPlace& at,
            const NasNetConfig& config) {
  int out = input;
  switch (op) {
    case NasNetOp::kSeparable3x3:
    case NasNetOp::kSeparable5x5:
    case NasNetOp::kSeparable7x7:
      out = StackedSeparable(b, input, NasNetOpKernel(op), stride, at.filters);
      break;
    case NasNetOp::kIdentity:
      if (stride > 1 || Channels(b, input) != at.filters) {
        b.set_top(input);
        b.Relu();
        out = Project(b, b.top(), at.filters, stride);
      }
      return out;
    case NasNetOp::kAvgPool3x3:
    case NasNetOp::kMaxPool3x3: {
      b.set_top(input);
      const PoolOptions pool = {.stride = stride, .padding = Padding::kSame};
      out = op == NasNetOp::kMaxPool3x3 ? b.MaxPool({3, 3}, pool) : b.AvgPool({3, 3}, pool);
      if (Channels(b, input) != at.filters) out = Project(b, out, at.filters);
      break;
    }
  }
  if (config.drop_path_keep < 1.0) {
    const int total = config.num_cells + 2 + (config.imagenet_stem ? 2 : 0);
    b.set_top(out);
    out = b.DropPath(NasNetCellKeep(config.drop_path_keep, at.cell_num, total),
                     config.total_training_steps);
  }
  return out;
}

// One cell (NasNetABaseCell.__call__) on `net` with the previous output
// `prev` (-1: none): its output concat.
int NasNetCellLayer(NetBuilder& b, const NasNetCell& cell, int net, int prev,
                    int64_t filters, int64_t stride, int cell_num, const NasNetConfig& config) {
  const CellPlace at{filters, stride, cell_num};
  // _reduce_prev_layer: the previous output matched to this cell's size.
  if (prev < 0) {
    prev = net;
  } else if (Height(b, prev) != Height(b, net)) {
    b.set_top(prev);
    prev = FactorizedReduction(b, b.Relu(), filters, 2);
  } else if (Channels(b, prev) != filters) {
    b.set_top(prev);
    prev = Project(b, b.Relu(), filters);
  }
  b.set_top(net);
  b.Relu();
  std::vector<int> hidden = {Project(b, b.top(), filters), prev};
  for (const auto& combination : cell.ops) {
    int branch[2];
    for (int side = 0; side < 2; ++side) {
      const NasNetCell::Input& in = combination[side];
      branch[side] = ApplyOp(b, in.op, hidden[in.state], in.state < 2 ? stride : 1, at, config);
    }
    hidden.push_back(b.Add(branch[0], branch[1]));
  }
  // _combine_unused_states: the unused states, matched to the last one.
  std::vector<int> outputs;
  for (size_t i = 0; i < hidden.size(); ++i) {
    if (cell.used[i]) continue;
    int state = hidden[i];
    const bool other_height = Height(b, state) != Height(b, hidden.back());
    if (other_height || Channels(b, state) != Channels(b, hidden.back()))
      state = FactorizedReduction(b, state, Channels(b, hidden.back()), other_height ? 2 : 1);
    outputs.push_back(state);
  }
  return b.Concat(outputs);
}

}  // namespace

void NasNet(NetBuilder& b, const NasNetConfig& config) {
  b.set_conv_batch_norm(config.batch_norm);
  const int64_t stem_filters = static_cast<int64_t>(config.stem_multiplier * 32);
  std::vector<int> outputs = {-1};  // cell_outputs: none before the stem
  int cell_num = 0;
  if (config.imagenet_stem) {  // conv 3x3 stride 2 VALID, then two reduction cells
    b.set_scope("stem/");
    outputs.push_back(b.Conv(stem_filters, {3, 3},
                             {.stride = 2, .padding = Padding::kValid,
                              .activation = Activation::kNone, .batch_norm = 1}));
    for (int64_t scaling : {4, 2}) {
      b.set_scope(absl::StrCat("stem_cell", cell_num, "/"));
      outputs.push_back(NasNetCellLayer(b, kNasNetAReductionCell, outputs.back(),
                                        outputs[outputs.size() - 2],
                                        config.filters / scaling, 2, cell_num++, config));
    }
  } else {  // CIFAR: conv 3x3 and batch norm
    b.set_scope("stem/");
    outputs.push_back(
        b.Conv(config.filters * static_cast<int64_t>(config.stem_multiplier), {3, 3},
               {.activation = Activation::kNone, .batch_norm = 1}));
  }
  const std::vector<int> reductions = NasNetReductionIndices(config.num_cells);
  int64_t filters = config.filters;
  int prev = -1;
  for (int cell = 0; cell < config.num_cells; ++cell) {
    if (config.skip_reduction_layer_input) prev = outputs[outputs.size() - 2];
    if (cell == reductions[0] || cell == reductions[1]) {
      filters *= 2;
      b.set_scope(absl::StrCat("reduction_cell", cell == reductions[0] ? 0 : 1, "/"));
      outputs.push_back(NasNetCellLayer(b, kNasNetAReductionCell, outputs.back(),
                                        outputs[outputs.size() - 2], filters, 2, cell_num++,
                                        config));
    }
    if (!config.skip_reduction_layer_input) prev = outputs[outputs.size() - 2];
    b.set_scope(absl::StrCat("cell", cell, "/"));
    outputs.push_back(NasNetCellLayer(b, kNasNetANormalCell, outputs.back(), prev, filters, 1,
                                      cell_num++, config));
  }
  b.set_scope("final/");
  b.set_top(outputs.back());
  b.Relu();
  b.SpatialMean();
  b.set_scope("");
}

}  // namespace cnnbench
