// AlexNet as in Krizhevsky's "One weird trick" (one tower, no LRN), the
// variant tf_cnn_benchmarks runs: 227x227 so the first VALID conv gives 55x55.
#include "models/zoo_models.h"

namespace cnnbench {

void AlexNet(NetBuilder& b) {
  b.Conv(64, {11, 11}, {.stride = 4, .padding = Padding::kValid});  // 55 x 55 x 64
  b.MaxPool({3, 3}, {.stride = 2});                                 // 27 x 27 x 64
  b.Conv(192, {5, 5});
  b.MaxPool({3, 3}, {.stride = 2});  // 13 x 13 x 192
  b.Conv(384, {3, 3});
  b.Conv(384, {3, 3});
  b.Conv(256, {3, 3});
  b.MaxPool({3, 3}, {.stride = 2});  // 6 x 6 x 256
  b.Fc(4096);
  b.Dropout(0.5);
  b.Fc(4096);
  b.Dropout(0.5);
}

}  // namespace cnnbench

namespace cnnbench {

// tf_cnn_benchmarks' AlexnetCifar10Model: TensorFlow's CIFAR-10 tutorial
// network (Krizhevsky's cuda-convnet layers-18pct), on 32x32: two 5x5 convs
// of 64 with LRN (radius 4, bias 1, alpha 0.001/9, beta 0.75) and SAME 3x3/2
// max pools, then fc 384 and fc 192. The convs follow the builder-wide
// batch-norm switch, as tf_cnn_benchmarks' do.
void AlexNetCifar(NetBuilder& b) {
  constexpr double kAlpha = 0.001 / 9.0;
  b.Conv(64, {5, 5});                                           // 32 x 32 x 64
  b.MaxPool({3, 3}, {.stride = 2, .padding = Padding::kSame});  // 16 x 16 x 64
  b.Lrn(4, 1.0, kAlpha, 0.75);
  b.Conv(64, {5, 5});
  b.Lrn(4, 1.0, kAlpha, 0.75);
  b.MaxPool({3, 3}, {.stride = 2, .padding = Padding::kSame});  // 8 x 8 x 64
  b.Fc(384);
  b.Fc(192);
}

}  // namespace cnnbench
