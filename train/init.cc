#include "train/init.h"

#include <cmath>

namespace cnnbench {

uint64_t ParameterSeed(uint64_t seed, int node, int index) {
  Rng rng(seed * 0x100000001b3ull + static_cast<uint64_t>(node) * 131 + index);
  return rng.Next();
}

std::vector<float> InitialParameter(const OpDesc& op, int index, const Shape& shape,
                                    bool relu_after, uint64_t seed) {
  const int64_t count = shape.num_elements();
  std::vector<float> values(count, 0.0f);
  Rng rng(seed);
  if (const auto* conv = std::get_if<ConvDesc>(&op)) {
    if (index != 0) return values;  // bias
    // Glorot uniform: limit sqrt(6 / (fan_in + fan_out)).
    const double receptive = static_cast<double>(conv->h.kernel * conv->w.kernel);
    const double fan_in = receptive * (conv->c / conv->groups);
    const double fan_out = receptive * (conv->k / conv->groups);
    const double limit = std::sqrt(6.0 / (fan_in + fan_out));
    for (auto& v : values) v = static_cast<float>((2 * rng.Uniform() - 1) * limit);
  } else if (const auto* fc = std::get_if<FcDesc>(&op)) {
    if (index != 0) return values;  // bias
    const double stddev = std::sqrt((relu_after ? 2.0 : 1.0) / fc->ic);
    for (auto& v : values) {
      double x;
      do x = rng.Normal(); while (std::fabs(x) > 2.0);  // truncated at two stddevs
      v = static_cast<float>(x * stddev);
    }
  } else if (const auto* bn = std::get_if<BatchNormDesc>(&op)) {
    // Params are {gamma, beta}, or {beta} without scale.
    const bool is_gamma = bn->scale && index == 0;
    for (auto& v : values) v = is_gamma ? 1.0f : 0.0f;
  }
  return values;
}

}  // namespace cnnbench
