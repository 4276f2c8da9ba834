// Inception v3 (Szegedy et al., "Rethinking the Inception Architecture") and
// Inception v4 (Szegedy et al., "Inception-v4, Inception-ResNet ..."), as
// tf_cnn_benchmarks defines them: batch norm after every conv (the builder's
// switch, on by default), 299x299 images, no auxiliary head. Branches are
// listed in tf_cnn_benchmarks' column order, so the concats match its
// channel order. Kernel sizes are {height, width}.
#include <string>

#include "absl/strings/str_cat.h"
#include "models/zoo_models.h"

namespace cnnbench {
namespace {

constexpr ConvOptions kValidStride2 = {.stride = 2, .padding = Padding::kValid};
constexpr ConvOptions kValid = {.padding = Padding::kValid};
constexpr PoolOptions kPoolSame = {.stride = 1, .padding = Padding::kSame};
constexpr PoolOptions kPoolValidStride2 = {.stride = 2, .padding = Padding::kValid};

// Names the layers of one module "<kind><n>/" as tf_cnn_benchmarks'
// inception_module does (incept_v3_a0, incept_v3_a1, ...).
class ModuleScope {
 public:
  ModuleScope(NetBuilder& b, absl::string_view kind, int index) : b_(b) {
    b_.set_scope(absl::StrCat(kind, index, "/"));
  }
  ~ModuleScope() { b_.set_scope(""); }

 private:
  NetBuilder& b_;
};

// ------------------------------------------------------------ Inception v3

// 35 x 35: 1x1 | 5x5 | double 3x3 | 3x3 avg pool -> 1x1 (pool_filters).
void InceptionV3A(NetBuilder& b, int index, int64_t pool_filters) {
  ModuleScope scope(b, "incept_v3_a", index);
  const int in = b.top();
  const int c0 = b.Conv(64, {1, 1});
  b.set_top(in);
  b.Conv(48, {1, 1});
  const int c1 = b.Conv(64, {5, 5});
  b.set_top(in);
  b.Conv(64, {1, 1});
  b.Conv(96, {3, 3});
  const int c2 = b.Conv(96, {3, 3});
  b.set_top(in);
  b.AvgPool({3, 3}, kPoolSame);
  const int c3 = b.Conv(pool_filters, {1, 1});
  b.Concat({c0, c1, c2, c3});
}

// 35 -> 17: stride-2 3x3 | double 3x3 ending in stride 2 | max pool.
void InceptionV3B(NetBuilder& b) {
  ModuleScope scope(b, "incept_v3_b", 0);
  const int in = b.top();
  const int c0 = b.Conv(384, {3, 3}, kValidStride2);
  b.set_top(in);
  b.Conv(64, {1, 1});
  b.Conv(96, {3, 3});
  const int c1 = b.Conv(96, {3, 3}, kValidStride2);
  b.set_top(in);
  const int c2 = b.MaxPool({3, 3}, kPoolValidStride2);
  b.Concat({c0, c1, c2});
}

// 17 x 17 with factorised 7x7s (n filters inside the branches).
void InceptionV3C(NetBuilder& b, int index, int64_t n) {
  ModuleScope scope(b, "incept_v3_c", index);
  const int in = b.top();
  const int c0 = b.Conv(192, {1, 1});
  b.set_top(in);
  b.Conv(n, {1, 1});
  b.Conv(n, {1, 7});
  const int c1 = b.Conv(192, {7, 1});
  b.set_top(in);
  b.Conv(n, {1, 1});
  b.Conv(n, {7, 1});
  b.Conv(n, {1, 7});
  b.Conv(n, {7, 1});
  const int c2 = b.Conv(192, {1, 7});
  b.set_top(in);
  b.AvgPool({3, 3}, kPoolSame);
  const int c3 = b.Conv(192, {1, 1});
  b.Concat({c0, c1, c2, c3});
}

// 17 -> 8.
void InceptionV3D(NetBuilder& b) {
  ModuleScope scope(b, "incept_v3_d", 0);
  const int in = b.top();
  b.Conv(192, {1, 1});
  const int c0 = b.Conv(320, {3, 3}, kValidStride2);
  b.set_top(in);
  b.Conv(192, {1, 1});
  b.Conv(192, {1, 7});
  b.Conv(192, {7, 1});
  const int c1 = b.Conv(192, {3, 3}, kValidStride2);
  b.set_top(in);
  const int c2 = b.MaxPool({3, 3}, kPoolValidStride2);
  b.Concat({c0, c1, c2});
}

// 8 x 8 with expanded filter banks: the 1x3 and 3x1 convs of a branch both
// read the same input (tf_cnn_benchmarks' 'share').
void InceptionV3E(NetBuilder& b, int index, bool max_pool) {
  ModuleScope scope(b, "incept_v3_e", index);
  const int in = b.top();
  const int c0 = b.Conv(320, {1, 1});
  b.set_top(in);
  const int reduce = b.Conv(384, {1, 1});
  const int c1 = b.Conv(384, {1, 3});
  b.set_top(reduce);
  const int c2 = b.Conv(384, {3, 1});
  b.set_top(in);
  b.Conv(448, {1, 1});
  const int mid = b.Conv(384, {3, 3});
  const int c3 = b.Conv(384, {1, 3});
  b.set_top(mid);
  const int c4 = b.Conv(384, {3, 1});
  b.set_top(in);
  if (max_pool) {
    b.MaxPool({3, 3}, kPoolSame);
  } else {
    b.AvgPool({3, 3}, kPoolSame);
  }
  const int c5 = b.Conv(192, {1, 1});
  b.Concat({c0, c1, c2, c3, c4, c5});
}

// ------------------------------------------------------------ Inception v4

void InceptionV4A(NetBuilder& b, int index) {
  ModuleScope scope(b, "incept_v4_a", index);
  const int in = b.top();
  b.AvgPool({3, 3}, kPoolSame);
  const int c0 = b.Conv(96, {1, 1});
  b.set_top(in);
  const int c1 = b.Conv(96, {1, 1});
  b.set_top(in);
  b.Conv(64, {1, 1});
  const int c2 = b.Conv(96, {3, 3});
  b.set_top(in);
  b.Conv(64, {1, 1});
  b.Conv(96, {3, 3});
  const int c3 = b.Conv(96, {3, 3});
  b.Concat({c0, c1, c2, c3});
}

void InceptionV4B(NetBuilder& b, int index) {
  ModuleScope scope(b, "incept_v4_b", index);
  const int in = b.top();
  b.AvgPool({3, 3}, kPoolSame);
  const int c0 = b.Conv(128, {1, 1});
  b.set_top(in);
  const int c1 = b.Conv(384, {1, 1});
  b.set_top(in);
  b.Conv(192, {1, 1});
  b.Conv(224, {1, 7});
  const int c2 = b.Conv(256, {7, 1});
  b.set_top(in);
  b.Conv(192, {1, 1});
  b.Conv(192, {1, 7});
  b.Conv(224, {7, 1});
  b.Conv(224, {1, 7});
  const int c3 = b.Conv(256, {7, 1});
  b.Concat({c0, c1, c2, c3});
}

void InceptionV4C(NetBuilder& b, int index) {
  ModuleScope scope(b, "incept_v4_c", index);
  const int in = b.top();
  b.AvgPool({3, 3}, kPoolSame);
  const int c0 = b.Conv(256, {1, 1});
  b.set_top(in);
  const int c1 = b.Conv(256, {1, 1});
  b.set_top(in);
  const int reduce = b.Conv(384, {1, 1});
  const int c2 = b.Conv(256, {1, 3});
  b.set_top(reduce);
  const int c3 = b.Conv(256, {3, 1});
  b.set_top(in);
  b.Conv(384, {1, 1});
  b.Conv(448, {1, 3});
  const int mid = b.Conv(512, {3, 1});
  const int c4 = b.Conv(256, {3, 1});
  b.set_top(mid);
  const int c5 = b.Conv(256, {1, 3});
  b.Concat({c0, c1, c2, c3, c4, c5});
}

}  // namespace

void InceptionV3(NetBuilder& b) {
  b.Conv(32, {3, 3}, kValidStride2);       // 149 x 149 x 32
  b.Conv(32, {3, 3}, kValid);              // 147 x 147 x 32
  b.Conv(64, {3, 3});                      // 147 x 147 x 64
  b.MaxPool({3, 3}, kPoolValidStride2);    // 73 x 73 x 64
  b.Conv(80, {1, 1}, kValid);              // 73 x 73 x 80
  b.Conv(192, {3, 3}, kValid);             // 71 x 71 x 192
  b.MaxPool({3, 3}, kPoolValidStride2);    // 35 x 35 x 192
  InceptionV3A(b, 0, 32);                  // 35 x 35 x 256 (mixed)
  InceptionV3A(b, 1, 64);                  // 35 x 35 x 288 (mixed_1)
  InceptionV3A(b, 2, 64);                  // 35 x 35 x 288 (mixed_2)
  InceptionV3B(b);                         // 17 x 17 x 768 (mixed_3)
  InceptionV3C(b, 0, 128);                 // 17 x 17 x 768 (mixed_4)
  InceptionV3C(b, 1, 160);                 // 17 x 17 x 768 (mixed_5)
  InceptionV3C(b, 2, 160);                 // 17 x 17 x 768 (mixed_6)
  InceptionV3C(b, 3, 192);                 // 17 x 17 x 768 (mixed_7)
  InceptionV3D(b);                         // 8 x 8 x 1280 (mixed_8)
  InceptionV3E(b, 0, /*max_pool=*/false);  // 8 x 8 x 2048 (mixed_9)
  InceptionV3E(b, 1, /*max_pool=*/true);   // 8 x 8 x 2048 (mixed_10)
  // tf_cnn_benchmarks' 8x8 VALID average pool: global at 299, and kept global
  // at other image sizes.
  b.SpatialMean();  // 1 x 1 x 2048
}

void InceptionV4(NetBuilder& b) {
  b.Conv(32, {3, 3}, kValidStride2);  // 149 x 149 x 32
  b.Conv(32, {3, 3}, kValid);         // 147 x 147 x 32
  b.Conv(64, {3, 3});                 // 147 x 147 x 64
  {
    ModuleScope scope(b, "incept_v4_sa", 0);  // 73 x 73 x 160
    const int in = b.top();
    const int c0 = b.MaxPool({3, 3}, kPoolValidStride2);
    b.set_top(in);
    const int c1 = b.Conv(96, {3, 3}, kValidStride2);
    b.Concat({c0, c1});
  }
  {
    ModuleScope scope(b, "incept_v4_sb", 0);  // 71 x 71 x 192
    const int in = b.top();
    b.Conv(64, {1, 1});
    const int c0 = b.Conv(96, {3, 3}, kValid);
    b.set_top(in);
    b.Conv(64, {1, 1});
    b.Conv(64, {7, 1});
    b.Conv(64, {1, 7});
    const int c1 = b.Conv(96, {3, 3}, kValid);
    b.Concat({c0, c1});
  }
  {
    ModuleScope scope(b, "incept_v4_sc", 0);  // 35 x 35 x 384
    const int in = b.top();
    const int c0 = b.Conv(192, {3, 3}, kValidStride2);
    b.set_top(in);
    const int c1 = b.MaxPool({3, 3}, kPoolValidStride2);
    b.Concat({c0, c1});
  }
  for (int i = 0; i < 4; ++i) InceptionV4A(b, i);  // 35 x 35 x 384
  {
    ModuleScope scope(b, "incept_v4_ra", 0);  // 17 x 17 x 1024
    const int in = b.top();
    const int c0 = b.MaxPool({3, 3}, kPoolValidStride2);
    b.set_top(in);
    const int c1 = b.Conv(384, {3, 3}, kValidStride2);
    b.set_top(in);
    b.Conv(192, {1, 1});
    b.Conv(224, {3, 3});
    const int c2 = b.Conv(256, {3, 3}, kValidStride2);
    b.Concat({c0, c1, c2});
  }
  for (int i = 0; i < 7; ++i) InceptionV4B(b, i);  // 17 x 17 x 1024
  {
    ModuleScope scope(b, "incept_v4_rb", 0);  // 8 x 8 x 1536
    const int in = b.top();
    const int c0 = b.MaxPool({3, 3}, kPoolValidStride2);
    b.set_top(in);
    b.Conv(192, {1, 1});
    const int c1 = b.Conv(192, {3, 3}, kValidStride2);
    b.set_top(in);
    b.Conv(256, {1, 1});
    b.Conv(256, {1, 7});
    b.Conv(320, {7, 1});
    const int c2 = b.Conv(320, {3, 3}, kValidStride2);
    b.Concat({c0, c1, c2});
  }
  for (int i = 0; i < 3; ++i) InceptionV4C(b, i);  // 8 x 8 x 1536
  b.SpatialMean();
  b.Dropout(0.2);  // tf_cnn_benchmarks' keep_prob 0.8
}

}  // namespace cnnbench
