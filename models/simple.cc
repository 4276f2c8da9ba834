// The small models of tf_cnn_benchmarks: trivial (input-bound), LeNet-5 and
// OverFeat (fast model).
#include "models/zoo_models.h"

namespace cnnbench {

// Two fully connected layers straight on the pixels: measures everything but
// the model.
void Trivial(NetBuilder& b) {
  b.Fc(1);
  b.Fc(4096);
}

// TensorFlow's MNIST tutorial network (tf_cnn_benchmarks' lenet5), on 28x28.
void LeNet(NetBuilder& b) {
  b.Conv(32, {5, 5});
  b.MaxPool({2, 2}, {.stride = 2});
  b.Conv(64, {5, 5});
  b.MaxPool({2, 2}, {.stride = 2});  // 7 x 7 x 64
  b.Fc(512);
}

// Sermanet et al. 2014, the fast model, on 231x231.
void OverFeat(NetBuilder& b) {
  b.Conv(96, {11, 11}, {.stride = 4, .padding = Padding::kValid});  // 56 x 56 x 96
  b.MaxPool({2, 2}, {.stride = 2});
  b.Conv(256, {5, 5}, {.padding = Padding::kValid});  // 24 x 24 x 256
  b.MaxPool({2, 2}, {.stride = 2});
  b.Conv(512, {3, 3});
  b.Conv(1024, {3, 3});
  b.Conv(1024, {3, 3});
  b.MaxPool({2, 2}, {.stride = 2});  // 6 x 6 x 1024
  b.Fc(3072);
  b.Dropout(0.5);
  b.Fc(4096);
  b.Dropout(0.5);
}

}  // namespace cnnbench
