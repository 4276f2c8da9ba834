#include "kernels/collectives/call.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace cnnbench::collectives {

bool KnownOp(ReduceOp op) {
  return op == ReduceOp::kSum || op == ReduceOp::kAvg || op == ReduceOp::kMax ||
         op == ReduceOp::kMin || op == ReduceOp::kProd;
}

std::string OpText(int64_t op) {
  return KnownOp(static_cast<ReduceOp>(op)) ? std::string(ReduceOpName(static_cast<ReduceOp>(op)))
                                            : absl::StrCat("op ", op);
}

std::string DTypeText(int64_t dtype) {
  return dtype >= 0 && dtype <= static_cast<int64_t>(DType::kU8)
             ? std::string(DTypeName(static_cast<DType>(dtype)))
             : absl::StrCat("dtype ", dtype);
}

std::string Describe(const Call& c) {
  std::string text = absl::StrCat(KindName(c.kind), " (count ", c.count, ", ", DTypeName(c.dtype));
  if (Reduces(c.kind)) absl::StrAppend(&text, ", ", OpText(static_cast<int64_t>(c.op)));
  if (Rooted(c.kind)) absl::StrAppend(&text, ", root ", c.root);
  return text + ")";
}

bool Overlap(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  const auto* pa = static_cast<const char*>(a);
  const auto* pb = static_cast<const char*>(b);
  return pa < pb + b_bytes && pb < pa + a_bytes;
}

absl::Status CheckOwnCall(const Call& c, const Stream& stream, int rank, int size,
                          const GroupRules& rules) {
  // Built only for an error message: a call that passes allocates nothing.
  auto where = [&] { return absl::StrCat("rank ", rank, " of ", size); };
  auto what = [&] { return absl::StrCat(rules.group, " ", KindName(c.kind), ", ", where()); };
  if (Reduces(c.kind)) {
    if (!KnownOp(c.op))
      return absl::UnimplementedError(
          absl::StrCat("unsupported: reduce op ", static_cast<int>(c.op), " in ", rules.group, " ",
                       KindName(c.kind), " (known: sum, avg, max, min, prod; ", where(), ")"));
    if (!rules.reduces(c.dtype, c.op))
      return absl::UnimplementedError(absl::StrCat(
          "unsupported: ", rules.group, " ", KindName(c.kind), " of ", DTypeName(c.dtype),
          " (fp32, fp64, fp16, bf16, int32, int64; ", where(), ")"));
  }
  if (!stream.device().is_cpu())
    return absl::InvalidArgumentError(absl::StrCat(
        what(), ": the stream is on ", stream.device().ToString(), " but ", rules.memory));
  if (Rooted(c.kind) && (c.root < 0 || c.root >= size))
    return absl::InvalidArgumentError(
        absl::StrCat(what(), ": root ", c.root, " is not a rank (0 .. ", size - 1, ")"));
  if (rules.check_count != nullptr) {
    absl::Status count = rules.check_count(c);
    if (!count.ok()) return absl::Status(count.code(), absl::StrCat(what(), ": ", count.message()));
  }
  if (c.count == 0) return absl::OkStatus();
  // A reduce or gather writes only the root's receive buffer, a broadcast
  // or scatter reads only the root's send buffer (the traits say which):
  // the others may pass null.
  const CollectiveTraits& t = CollectiveTraitsOf(c.kind);
  const bool root = rank == c.root;
  const bool needs_recv = root || !t.recv_root_only;
  const bool needs_send = root || !t.send_root_only;
  if ((needs_send && c.send == nullptr) || (needs_recv && c.recv == nullptr))
    return absl::InvalidArgumentError(
        absl::StrCat(what(), ": the ", needs_send && c.send == nullptr ? "send " : "receive ",
                     "buffer is null for ", c.count, " elements"));
  if (!needs_send || !needs_recv) return absl::OkStatus();  // one buffer: nothing to overlap
  const size_t bytes = c.count * SizeOf(c.dtype);
  const size_t all = bytes * static_cast<size_t>(size);
  // A rooted collective's in-place slice is the root's (the only rank with
  // both buffers), the others' this rank's.
  const size_t slice = static_cast<size_t>(t.rooted ? c.root : rank) * bytes;
  if (t.send_per_rank && t.recv_per_rank) {
    if (Overlap(c.send, all, c.recv, all))
      return absl::InvalidArgumentError(absl::StrCat(
          what(), ": the send and receive buffers overlap (an all-to-all has no in-place form)"));
  } else if (t.send_per_rank) {  // reduce-scatter, scatter
    const void* in_place = static_cast<const char*>(c.send) + slice;
    if (c.recv != in_place && Overlap(c.recv, bytes, c.send, all))
      return absl::InvalidArgumentError(absl::StrCat(
          what(), ": the receive buffer overlaps the send buffer without being ",
          t.rooted ? "the root's" : "this rank's", " slice of it (in place is recv == send + ",
          t.rooted ? "root" : "rank", " * count)"));
  } else if (t.recv_per_rank) {  // all-gather, gather
    const void* in_place = static_cast<const char*>(c.recv) + slice;
    if (c.send != in_place && Overlap(c.send, bytes, c.recv, all))
      return absl::InvalidArgumentError(absl::StrCat(
          what(), ": the send buffer overlaps the receive buffer without being ",
          t.rooted ? "the root's" : "this rank's", " slice of it (in place is send == recv + ",
          t.rooted ? "root" : "rank", " * count)"));
  } else if (c.send != c.recv && Overlap(c.send, bytes, c.recv, bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(what(),
                                                   ": the send and receive buffers overlap without "
                                                   "being the same (in place is send == recv)"));
  }
  return absl::OkStatus();
}

}  // namespace cnnbench::collectives
