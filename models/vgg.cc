// VGG (Simonyan & Zisserman 2014), configurations A, D and E, without batch
// norm as the paper and tf_cnn_benchmarks have it.
#include <string>

#include "absl/strings/str_cat.h"
#include "models/zoo_models.h"

namespace cnnbench {

void Vgg(NetBuilder& b, const std::array<int, 5>& convs_per_stage) {
  const int64_t filters[5] = {64, 128, 256, 512, 512};
  for (int stage = 0; stage < 5; ++stage) {
    b.set_scope(absl::StrCat("stage", stage + 1, "/"));
    for (int i = 0; i < convs_per_stage[stage]; ++i) b.Conv(filters[stage], {3, 3});
    b.MaxPool({2, 2}, {.stride = 2});  // halves: 224 -> 7 after the fifth
  }
  b.set_scope("");
  b.Fc(4096);
  b.Dropout(0.5);
  b.Fc(4096);
  b.Dropout(0.5);
}

}  // namespace cnnbench
