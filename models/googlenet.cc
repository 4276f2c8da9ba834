// GoogLeNet (Inception v1, Szegedy et al. 2014) as tf_cnn_benchmarks has it:
// no LRN, no auxiliary heads, no batch norm.
#include <string>

#include "absl/strings/str_cat.h"
#include "models/zoo_models.h"

namespace cnnbench {
namespace {

// One inception module: 1x1 | 1x1 -> 3x3 | 1x1 -> 5x5 | 3x3 max pool -> 1x1,
// concatenated (the paper's Table 1 columns, in its order).
void InceptionV1(NetBuilder& b, int index, int64_t conv1x1, int64_t reduce3x3, int64_t conv3x3,
                 int64_t reduce5x5, int64_t conv5x5, int64_t pool_proj) {
  b.set_scope(absl::StrCat("incept_v1_", index, "/"));
  const int in = b.top();
  const int branch1 = b.Conv(conv1x1, {1, 1});
  b.set_top(in);
  b.Conv(reduce3x3, {1, 1});
  const int branch2 = b.Conv(conv3x3, {3, 3});
  b.set_top(in);
  b.Conv(reduce5x5, {1, 1});
  const int branch3 = b.Conv(conv5x5, {5, 5});
  b.set_top(in);
  b.MaxPool({3, 3}, {.stride = 1, .padding = Padding::kSame});
  const int branch4 = b.Conv(pool_proj, {1, 1});
  b.Concat({branch1, branch2, branch3, branch4});
  b.set_scope("");
}

}  // namespace

void GoogLeNet(NetBuilder& b) {
  b.Conv(64, {7, 7}, {.stride = 2});  // 112 x 112 x 64
  b.MaxPool({3, 3}, {.stride = 2, .padding = Padding::kSame});
  b.Conv(64, {1, 1});
  b.Conv(192, {3, 3});
  b.MaxPool({3, 3}, {.stride = 2, .padding = Padding::kSame});  // 28 x 28 x 192
  InceptionV1(b, 0, 64, 96, 128, 16, 32, 32);                   // 28 x 28 x 256 (3a)
  InceptionV1(b, 1, 128, 128, 192, 32, 96, 64);                 // 28 x 28 x 480 (3b)
  b.MaxPool({3, 3}, {.stride = 2, .padding = Padding::kSame});
  InceptionV1(b, 2, 192, 96, 208, 16, 48, 64);     // 14 x 14 x 512 (4a)
  InceptionV1(b, 3, 160, 112, 224, 24, 64, 64);    // 14 x 14 x 512 (4b)
  InceptionV1(b, 4, 128, 128, 256, 24, 64, 64);    // 14 x 14 x 512 (4c)
  InceptionV1(b, 5, 112, 144, 288, 32, 64, 64);    // 14 x 14 x 528 (4d)
  InceptionV1(b, 6, 256, 160, 320, 32, 128, 128);  // 14 x 14 x 832 (4e)
  b.MaxPool({3, 3}, {.stride = 2, .padding = Padding::kSame});
  InceptionV1(b, 7, 256, 160, 320, 32, 128, 128);  // 7 x 7 x 832 (5a)
  InceptionV1(b, 8, 384, 192, 384, 48, 128, 128);  // 7 x 7 x 1024 (5b)
  // tf_cnn_benchmarks' 7x7 VALID average pool, which is global at 224; global
  // at any other size too, so an image-size override keeps 1024 features.
  b.SpatialMean();
}

}  // namespace cnnbench
