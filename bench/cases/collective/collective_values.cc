#include "bench/cases/collective/collective_values.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/collectives/reference.h"

namespace cnnbench::bench {
namespace {

bool IsInteger(DType d) { return d == DType::kI32 || d == DType::kI64; }

// Significand bits (with the implicit one) of a floating dtype.
int Precision(DType dtype) {
  switch (dtype) {
    case DType::kF64:
      return 53;
    case DType::kF32:
      return 24;
    case DType::kF16:
      return 11;
    case DType::kBF16:
      return 8;
    default:
      return 0;
  }
}

}  // namespace

// The values every rank starts from, exact in every dtype whatever the
// order a transport reduces in. For the sums, rank r's element i is
// (r + i) % 3, so a sum over up to 128 ranks is a small integer (bf16 holds
// integers to 256); for the product it is -1 where (r + i) % 3 == 0, else 1,
// so every product is +-1; the copies carry (37 r + i) % 251, which tells
// the ranks apart.
double CollectiveInput(Collective collective, ReduceOp op, int rank, size_t i) {
  if (!Reduces(collective)) return static_cast<double>((37 * static_cast<size_t>(rank) + i) % 251);
  const size_t k = (static_cast<size_t>(rank) + i) % 3;
  if (op == ReduceOp::kProd) return k == 0 ? -1.0 : 1.0;
  return static_cast<double>(k);
}

// Element i of a reduction over `ranks` ranks (ReferenceReduction, which
// the collectives' tests share).
double ReducedInput(ReduceOp op, DType dtype, int ranks, size_t i) {
  return ReferenceReduction(op, dtype, ranks, [op, i](int r) {
    return CollectiveInput(Collective::kAllReduce, op, r, i);
  });
}

// `value` as `dtype` holds it.
double RoundedTo(DType dtype, double value) {
  char bytes[8];
  StoreElement(dtype, bytes, 0, value);
  return LoadElement(dtype, bytes, 0);
}

// The elements every rank may be wrong by: 0, but for a floating average,
// which a transport may compute as a sum of inputs each multiplied by 1/n
// (NCCL does), 2 units in the last place of the expected value, the
// tolerance nccl-tests' verification allows there.
double ResultTolerance(ReduceOp op, DType dtype, double expected) {
  if (op != ReduceOp::kAvg || IsInteger(dtype) || expected == 0) return 0;
  int exponent = 0;
  std::frexp(expected, &exponent);  // |expected| in [2^(exponent-1), 2^exponent)
  return 2 * std::ldexp(1.0, exponent - Precision(dtype));
}

}  // namespace cnnbench::bench
