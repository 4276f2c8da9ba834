// The collective cases' expected values: the inputs every rank starts
// from (exact in every element type whatever order a transport reduces in),
// the reduced result computed plainly, an element of any type as a double
// and back, and the tolerance a floating average is checked within.
#ifndef CNNBENCH_BENCH_COLLECTIVE_VALUES_H_
#define CNNBENCH_BENCH_COLLECTIVE_VALUES_H_

#include <cstddef>

#include "core/dtype.h"
#include "kernels/collectives/communicator.h"

namespace cnnbench::bench {

// Rank `rank`'s element i. For the sums (r + i) % 3, so a sum over up to 128
// ranks is a small integer (bf16 holds integers to 256); for the product -1
// where (r + i) % 3 == 0, else 1, so every product is +-1; the copies carry
// (37 r + i) % 251, which tells the ranks apart.
double CollectiveInput(Collective collective, ReduceOp op, int rank, size_t i);
// Element i of a reduction over `ranks` ranks, computed plainly
// (ReferenceReduction: averages divide once, integers truncate).
double ReducedInput(ReduceOp op, DType dtype, int ranks, size_t i);
// (An element as a double and back: core/dtype.h's LoadElement and
// StoreElement, which the collectives' tests use too.)
// `value` as `dtype` holds it.
double RoundedTo(DType dtype, double value);
// How far every rank's element may be from `expected`: 0, but for a
// floating average, which a transport may compute as a sum of inputs each
// multiplied by 1/n (NCCL does), 2 units in the last place of the expected
// value, the tolerance nccl-tests' verification allows there.
double ResultTolerance(ReduceOp op, DType dtype, double expected);
// A value no input or result takes: what receive buffers are poisoned with.
inline constexpr double kPoison = -7;

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_COLLECTIVE_VALUES_H_
