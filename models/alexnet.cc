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
