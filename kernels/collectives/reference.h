// What a collective's reduction must give, computed plainly: shared by the
// suite's collective cases (bench/cases/collective/collective_values.cc)
// and the collectives' tests (tests/kernels/collectives/collective_checks.cc),
// which differ only in the values each rank contributes.
#ifndef CNNBENCH_KERNELS_COLLECTIVES_REFERENCE_H_
#define CNNBENCH_KERNELS_COLLECTIVES_REFERENCE_H_

#include <algorithm>
#include <cmath>

#include "core/dtype.h"
#include "kernels/collectives/communicator.h"

namespace cnnbench {

// The reduction by `op` over `ranks` ranks whose values are value(0) ..
// value(ranks - 1): their sum, product (in double, so a zero keeps IEEE's
// sign, -0), max or min; the average divides the sum once, as every group
// does: integers truncate toward zero, fp64 divides in double, fp32, fp16
// and bf16 in fp32 (their accumulation type). Exact for small integer
// values; the caller rounds the result to `dtype`.
template <typename Value>
double ReferenceReduction(ReduceOp op, DType dtype, int ranks, Value value) {
  double sum = 0, prod = 1, max = value(0), min = max;
  for (int r = 0; r < ranks; ++r) {
    const double v = value(r);
    sum += v;
    prod *= v;
    max = std::max(max, v);
    min = std::min(min, v);
  }
  switch (op) {
    case ReduceOp::kSum:
      return sum;
    case ReduceOp::kProd:
      return prod;
    case ReduceOp::kMax:
      return max;
    case ReduceOp::kMin:
      return min;
    case ReduceOp::kAvg:
      if (dtype == DType::kI32 || dtype == DType::kI64) return std::trunc(sum / ranks);
      if (dtype == DType::kF64) return sum / ranks;
      return static_cast<float>(sum) / static_cast<float>(ranks);
  }
  return 0;
}

}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_COLLECTIVES_REFERENCE_H_
