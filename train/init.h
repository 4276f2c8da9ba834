// Deterministic parameter initialisation from a seed, as tf_cnn_benchmarks
// initialises its layers: conv kernels Glorot-uniform, fc weights truncated
// normal with stddev sqrt(f / fan_in) (f = 2 before a ReLU, else 1), biases and
// batch-norm beta 0, gamma 1.
#ifndef CNNBENCH_TRAIN_INIT_H_
#define CNNBENCH_TRAIN_INIT_H_

#include <cstdint>
#include <vector>

#include "core/random.h"  // Rng, which callers of the initialiser use too
#include "core/shape.h"
#include "kernels/desc.h"
#include "kernels/op_traits.h"

namespace cnnbench {

// A seed per (global seed, node, parameter index), stable across runs and machines.
uint64_t ParameterSeed(uint64_t seed, int node, int index);

// Values of parameter `index` of `op` in plain layout, as its traits'
// ParamFact says (kernels/op_traits.h).
std::vector<float> InitialParameter(const OpDesc& op, int index, const Shape& shape,
                                    bool relu_after, uint64_t seed);

}  // namespace cnnbench

#endif  // CNNBENCH_TRAIN_INIT_H_
