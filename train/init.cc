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
  const ParamFact fact = ParameterInit(op, index);
  switch (fact.init) {
    case ParamInit::kZero:
      break;
    case ParamInit::kOne:
      for (auto& v : values) v = 1.0f;
      break;
    case ParamInit::kGlorotUniform: {
      const double limit = std::sqrt(6.0 / (fact.fan_in + fact.fan_out));
      for (auto& v : values) v = static_cast<float>((2 * rng.Uniform() - 1) * limit);
      break;
    }
    case ParamInit::kTruncatedNormalFanIn: {
      const double stddev = std::sqrt((relu_after ? 2.0 : 1.0) / fact.fan_in);
      for (auto& v : values) {
        double x;
        do x = rng.Normal();
        while (std::fabs(x) > 2.0);  // truncated at two stddevs
        v = static_cast<float>(x * stddev);
      }
      break;
    }
  }
  return values;
}

}  // namespace cnnbench
