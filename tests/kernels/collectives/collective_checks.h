// Checks shared by the collectives tests: typed host buffers, the values
// rank r contributes, what each collective must produce from them, and one
// checked call per collective that works on any group's communicator.
#ifndef CNNBENCH_TESTS_KERNELS_COLLECTIVES_COLLECTIVE_CHECKS_H_
#define CNNBENCH_TESTS_KERNELS_COLLECTIVES_COLLECTIVE_CHECKS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/device.h"
#include "core/dtype.h"
#include "kernels/collectives/communicator.h"

namespace cnnbench {
namespace collective_test {

// All-reduce dtypes; broadcast and all-gather copy bytes: every dtype.
inline constexpr DType kDTypes[] = {DType::kF32,  DType::kF64, DType::kF16,
                                    DType::kBF16, DType::kI32, DType::kI64};
inline constexpr DType kAllDTypes[] = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16,
                                       DType::kI32, DType::kI64, DType::kU8};
inline constexpr ReduceOp kOps[] = {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax, ReduceOp::kMin,
                                    ReduceOp::kProd};
inline constexpr size_t kGuard = 16;  // elements past `count` that nothing may write
// Never a result: sums lie in [-20, 20], and 99 = 9 x 11 is no product of
// values in [-5, 5].
inline constexpr double kPoison = 99;

// Rank r's element i: a small integer in [-5, 5], so a sum over up to four
// ranks is exact in every dtype (bf16 holds integers up to 256) whatever the
// order of accumulation.
int64_t Value(int rank, size_t i);
// Rank r's element i for the copying collectives: distinct per rank and
// element, and exact in every dtype (uint8 keeps it below 256 for 4 ranks).
double CopyValue(int rank, size_t i);

// Host buffer of `elements` elements of `dtype` (8-byte aligned).
struct Elements {
  Elements(DType dtype, size_t elements)
      : dtype(dtype), words((elements * SizeOf(dtype) + 7) / 8 + 1) {}
  void* data() { return words.data(); }
  void Set(size_t i, double v);
  double Get(size_t i) const;
  // Bit-exact comparison of element i.
  bool Same(size_t i, const Elements& other) const;

  DType dtype;
  std::vector<uint64_t> words;
};

// The reduction of element i over `ranks` ranks, computed plainly: the sum
// of the values, then the op. Averages divide once, in the accumulation type
// the interface promises (fp32 for fp32/fp16/bf16, fp64 for fp64, integer
// division for integers).
double Expected(DType dtype, ReduceOp op, int ranks, size_t i);

// One checked collective on `comm` with the values above: "" or what went
// wrong (the call, the element, what it held and what it should).
std::string AllReduceAndCheck(Communicator& comm, const Stream& stream, DType dtype, ReduceOp op,
                              size_t count, bool in_place);
// Out of place, the ranks but the root pass a null send buffer.
std::string BroadcastAndCheck(Communicator& comm, const Stream& stream, DType dtype, size_t count,
                              int root, bool in_place);
// In place, this rank's slice of recv is its send buffer.
std::string AllGatherAndCheck(Communicator& comm, const Stream& stream, DType dtype, size_t count,
                              bool in_place);

// recv[q * count + i] = rank q's send[rank * count + i]; every dtype.
std::string AllToAllAndCheck(Communicator& comm, const Stream& stream, DType dtype, size_t count);

// recv[i] = op over ranks of send[rank * count + i]; in place, recv is this
// rank's slice of send.
std::string ReduceScatterAndCheck(Communicator& comm, const Stream& stream, DType dtype,
                                  ReduceOp op, size_t count, bool in_place);
// The reduction lands on `root` only (the others pass a null receive buffer
// when `null_elsewhere`, else one that must stay untouched); in place on the
// root is send == recv.
std::string ReduceAndCheck(Communicator& comm, const Stream& stream, DType dtype, ReduceOp op,
                           size_t count, int root, bool in_place, bool null_elsewhere);

// On the root, recv[r * count + i] = rank r's send[i]; the others pass a
// null receive buffer when `null_elsewhere`, else one that must stay
// untouched. In place, the root's slice of recv is its send buffer.
std::string GatherAndCheck(Communicator& comm, const Stream& stream, DType dtype, size_t count,
                           int root, bool in_place, bool null_elsewhere);
// recv[i] = the root's send[rank * count + i]; the others pass a null send
// buffer when `null_elsewhere`, else one that must stay unread (and
// unchanged). In place, the root's recv is its slice of send.
std::string ScatterAndCheck(Communicator& comm, const Stream& stream, DType dtype, size_t count,
                            int root, bool in_place, bool null_elsewhere);

// Runs check(dtype, op, count, in_place) for every reduction dtype and op,
// every count of `counts` and both variants, each whatever failed before
// (every rank must make every call): the first failure, or "".
template <typename Counts, typename Check>
std::string FirstFailureOverReductions(const Counts& counts, Check check) {
  std::string failure;
  for (DType dtype : kDTypes)
    for (ReduceOp op : kOps)
      for (size_t count : counts)
        for (bool in_place : {false, true}) {
          std::string f = check(dtype, op, count, in_place);
          if (failure.empty()) failure = std::move(f);
        }
  return failure;
}

// Every collective through one signature, for tests that mix them.
struct AnyCall {
  Collective collective = Collective::kAllReduce;
  size_t count = 8;
  DType dtype = DType::kF32;
  int root = 0;
};
// Runs `c` on scratch buffers of ones (unchecked): the status only.
absl::Status RunAny(Communicator& comm, const AnyCall& c);

}  // namespace collective_test
}  // namespace cnnbench

#endif  // CNNBENCH_TESTS_KERNELS_COLLECTIVES_COLLECTIVE_CHECKS_H_
