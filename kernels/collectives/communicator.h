// Collectives with one communicator per rank, as NCCL's API has them: every
// rank of a group calls the same collectives in the same order, each from
// the thread that owns its communicator, and passes the stream the work
// belongs to. Groups: local.h (threads of one process), mpi.h (processes,
// one rank each), nccl.h (GPUs).
#ifndef CNNBENCH_KERNELS_COLLECTIVES_COMMUNICATOR_H_
#define CNNBENCH_KERNELS_COLLECTIVES_COMMUNICATOR_H_

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/device.h"
#include "core/dtype.h"

namespace cnnbench {

// kAvg is the sum divided by the number of ranks (data-parallel gradient
// averaging), as ncclAvg; kProd the product, as ncclProd.
enum class ReduceOp { kSum, kAvg, kMax, kMin, kProd };
inline constexpr ReduceOp kReduceOps[] = {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax,
                                          ReduceOp::kMin, ReduceOp::kProd};

absl::string_view ReduceOpName(ReduceOp op);  // "sum", "avg", "max", "min", "prod"

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual absl::string_view name() const = 0;  // "local" (later "nccl", "mpi")
  virtual int rank() const = 0;                // 0 .. size() - 1
  virtual int size() const = 0;                // ranks in the group

  // On every rank, recv[i] = op over all ranks' send[i] for i < count.
  // send == recv is the in-place variant; otherwise the two must not overlap.
  // Every rank must make the same call (count, dtype, op): a mismatch is an
  // InvalidArgument error on every rank, not a hang. The work belongs to
  // `stream` (on the CPU it runs on the calling thread and is complete when
  // the call returns). fp16 and bf16 accumulate in fp32 and round once;
  // integers wrap around on overflow and kAvg truncates toward zero.
  // A dtype or op the implementation lacks: UnimplementedError
  // ("unsupported: ...") on every rank.
  virtual absl::Status AllReduce(const void* send, void* recv, size_t count, DType dtype,
                                 ReduceOp op, const Stream& stream) = 0;

  // On every rank, recv[0, count) = root's send[0, count), as
  // ncclBroadcast. `send` is read on the root only (elsewhere it may be
  // null); in place is send == recv. Every rank makes the same call (count,
  // dtype, root); a mismatch is an error on every rank.
  virtual absl::Status Broadcast(const void* send, void* recv, size_t count, DType dtype, int root,
                                 const Stream& stream) = 0;

  // On every rank, recv[r * count + i] = rank r's send[i] for i < count:
  // recv holds size() * count elements. Used by the preflight (every rank's
  // settings gathered and compared) as well as by tests.
  virtual absl::Status AllGather(const void* send, void* recv, size_t count, DType dtype,
                                 const Stream& stream) = 0;

  // On every rank r, recv[i] = op over all ranks' send[r * count + i] for
  // i < count: send holds size() * count elements, recv count. In place is
  // recv == send + rank() * count. Reduces as AllReduce does (types, ops,
  // mismatches, "unsupported: ...").
  virtual absl::Status ReduceScatter(const void* send, void* recv, size_t count, DType dtype,
                                     ReduceOp op, const Stream& stream) = 0;

  // On `root`, recv[i] = op over all ranks' send[i] for i < count; the other
  // ranks' recv is not written (it may be null there). In place is send ==
  // recv on the root. Reduces as AllReduce does.
  virtual absl::Status Reduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                              int root, const Stream& stream) = 0;

  // On every rank r, recv[q * count + i] = rank q's send[r * count + i] for
  // i < count and every rank q: send and recv hold size() * count elements
  // each, and must not overlap (there is no in-place all-to-all). Every
  // dtype (bytes are moved); a mismatch is an error on every rank.
  virtual absl::Status AllToAll(const void* send, void* recv, size_t count, DType dtype,
                                const Stream& stream) = 0;

  // On `root`, recv[r * count + i] = rank r's send[i] for i < count and
  // every rank r: recv holds size() * count elements there, and is not
  // written elsewhere (it may be null there). In place is send == recv +
  // root * count on the root. Every dtype (bytes are moved); a mismatch
  // (count, dtype, root) is an error on every rank.
  virtual absl::Status Gather(const void* send, void* recv, size_t count, DType dtype, int root,
                              const Stream& stream) = 0;

  // On every rank r, recv[i] = root's send[r * count + i] for i < count:
  // the root's send holds size() * count elements, and is read on the root
  // only (it may be null elsewhere). In place is recv == send + root *
  // count on the root. Every dtype; a mismatch is an error on every rank.
  virtual absl::Status Scatter(const void* send, void* recv, size_t count, DType dtype, int root,
                               const Stream& stream) = 0;
};

// Settings shared by every group.
struct CommunicatorOptions {
  // A collective that has not completed on every rank within this long
  // fails with DeadlineExceeded on the ranks that are waiting, naming the
  // ranks that did not arrive; the group is then broken and every later call
  // fails at once (no rank can tell how far the others got).
  absl::Duration timeout = absl::Minutes(5);
};

// The collectives, as nccl-tests has one binary for each (all_reduce_perf, ...).
enum class Collective {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kGather,
  kScatter,
};
inline constexpr Collective kCollectives[] = {
    Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
    Collective::kBroadcast, Collective::kReduce,    Collective::kAllToAll,
    Collective::kGather,    Collective::kScatter,
};

// What a collective is, in one row of one table (CollectiveTraitsOf, in
// kCollectives' order; communicator.cc's static_assert fails while a
// collective lacks its row): its names, whether it has a root, reduces or
// has an in-place form, which of its buffers hold size() * count elements
// (the rest hold count), which are used on the root only (the others may
// pass null there), and its bus bandwidth factor (BusFactor).
enum class BusRule {
  kAllReduce,  // 2(n-1)/n
  kShared,     // (n-1)/n: each rank's part moves to or from the others
  kWhole,      // 1: the whole buffer crosses once
};
struct CollectiveTraits {
  Collective collective;
  absl::string_view name;     // its case family's: "allreduce", ...
  absl::string_view display;  // in errors: "all-reduce", ...
  bool rooted;
  bool reduces;
  bool in_place;
  bool send_per_rank;  // send holds size() * count
  bool recv_per_rank;  // recv holds size() * count
  bool send_root_only;  // send is read on the root only (broadcast, scatter)
  bool recv_root_only;  // recv is written on the root only (reduce, gather)
  BusRule bus;
};
const CollectiveTraits& CollectiveTraitsOf(Collective collective);

// "allreduce", "allgather", "reducescatter", "broadcast", "reduce",
// "alltoall", "gather", "scatter": the names of their case families.
absl::string_view CollectiveName(Collective collective);
// The collective so named, or false.
bool FindCollective(absl::string_view name, Collective* collective);
// Whether it has a root (broadcast, reduce, gather, scatter) and whether it reduces.
inline bool Rooted(Collective c) { return CollectiveTraitsOf(c).rooted; }
inline bool Reduces(Collective c) { return CollectiveTraitsOf(c).reduces; }
// Whether it has an in-place variant (all-to-all has none).
inline bool HasInPlace(Collective c) { return CollectiveTraitsOf(c).in_place; }
// Whether a buffer holds size() * count, each rank's part rounded to whole
// kRankPartAlignment bytes (ShapeOf): all but all-reduce, broadcast, reduce.
inline bool PartsPerRank(Collective c) {
  return CollectiveTraitsOf(c).send_per_rank || CollectiveTraitsOf(c).recv_per_rank;
}

// The one table of nccl-tests' bus bandwidth (its doc/PERFORMANCE.md):
// busbw = algbw * factor, with algbw = size / time. The size is nccl-tests':
// the one buffer of an all-reduce, broadcast or reduce; the gathered
// (receive) buffer of an all-gather or gather, size() * count; the
// scattered (send) buffer of a reduce-scatter or scatter, size() * count;
// an all-to-all's send buffer, size() * count. Factors: all-reduce
// 2(n-1)/n, all-gather, reduce-scatter, all-to-all, gather and scatter
// (n-1)/n, broadcast and reduce 1; one rank
// moves nothing between ranks, so the (n-1) factors are 0 there, as
// nccl-tests prints them.
double BusFactor(Collective collective, int ranks);
inline double AllReduceBusFactor(int ranks) { return BusFactor(Collective::kAllReduce, ranks); }

// One rank's side of a collective of nccl-tests' size `bytes` (as above)
// over `ranks` ranks: the count its call takes, the elements its send and
// receive buffers hold, and the size as nccl-tests reports it: `bytes`
// rounded down to whole elements, and for all-gather, reduce-scatter,
// all-to-all, gather and scatter each rank's part rounded down to whole 16 bytes
// (kRankPartAlignment; a multiple of 16 / element size elements), as
// nccl-tests rounds. A count of 0: `bytes` holds less than that per rank.
inline constexpr size_t kRankPartAlignment = 16;
struct CollectiveShape {
  size_t count = 0;
  size_t send_elements = 0;
  size_t recv_elements = 0;
  int64_t bytes = 0;
};
CollectiveShape ShapeOf(Collective collective, size_t element_bytes, int64_t bytes, int ranks);

}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_COLLECTIVES_COMMUNICATOR_H_
