#include "tests/kernels/collectives/collective_checks.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "kernels/collectives/reference.h"
#include "gtest/gtest.h"

namespace cnnbench {
namespace collective_test {

int64_t Value(int rank, size_t i) { return static_cast<int64_t>((rank * 7 + i * 3) % 11) - 5; }

double CopyValue(int rank, size_t i) { return static_cast<double>(rank * 50 + i % 47); }

void Elements::Set(size_t i, double v) {
  if (!StoreElement(dtype, words.data(), i, v))
    ADD_FAILURE() << "no test storage for " << DTypeName(dtype);
}

double Elements::Get(size_t i) const { return LoadElement(dtype, words.data(), i); }

bool Elements::Same(size_t i, const Elements& other) const {
  const size_t size = SizeOf(dtype);
  return std::memcmp(reinterpret_cast<const char*>(words.data()) + i * size,
                     reinterpret_cast<const char*>(other.words.data()) + i * size, size) == 0;
}

double Expected(DType dtype, ReduceOp op, int ranks, size_t i) {
  // At most 5^4 over four ranks: a product is exact in every type but bf16,
  // which the caller's Set rounds once, as the accumulation in fp32 does.
  return ReferenceReduction(op, dtype, ranks,
                            [i](int r) { return static_cast<double>(Value(r, i)); });
}

std::string AllReduceAndCheck(Communicator& comm, const Stream& stream, DType dtype, ReduceOp op,
                              size_t count, bool in_place) {
  const std::string what =
      absl::StrCat("ranks ", comm.size(), ", rank ", comm.rank(), ", ", DTypeName(dtype), " ",
                   ReduceOpName(op), ", count ", count, in_place ? ", in place" : ", out of place");
  const int rank = comm.rank();
  Elements send(dtype, count + kGuard), recv(dtype, count + kGuard);
  Elements expected(dtype, count + kGuard);
  for (size_t i = 0; i < count + kGuard; ++i) {
    send.Set(i, static_cast<double>(Value(rank, i)));
    recv.Set(i, in_place && i < count ? static_cast<double>(Value(rank, i)) : kPoison);
    expected.Set(i, i < count ? Expected(dtype, op, comm.size(), i) : kPoison);
  }
  const Elements send_before = send;
  absl::Status s =
      comm.AllReduce(in_place ? recv.data() : send.data(), recv.data(), count, dtype, op, stream);
  if (!s.ok()) return absl::StrCat(what, ": ", s.ToString());
  for (size_t i = 0; i < count + kGuard; ++i) {
    if (!recv.Same(i, expected))
      return absl::StrCat(what, ": element ", i, i < count ? "" : " (past count)", " is ",
                          recv.Get(i), ", expected ", expected.Get(i));
    if (!in_place && !send.Same(i, send_before))
      return absl::StrCat(what, ": the send buffer changed at element ", i);
  }
  return "";
}

std::string BroadcastAndCheck(Communicator& comm, const Stream& stream, DType dtype, size_t count,
                              int root, bool in_place) {
  const std::string what =
      absl::StrCat("broadcast, ranks ", comm.size(), ", rank ", comm.rank(), ", root ", root, ", ",
                   DTypeName(dtype), ", count ", count, in_place ? ", in place" : ", out of place");
  Elements buffer(dtype, count + kGuard), send(dtype, count + kGuard);
  for (size_t i = 0; i < count + kGuard; ++i) {
    const double mine = i < count ? CopyValue(comm.rank(), i) : kPoison;
    (in_place ? buffer : send).Set(i, mine);
    if (!in_place) buffer.Set(i, kPoison);
  }
  // Out of place, the send buffer is read on the root only: the others pass null.
  const void* from = in_place ? buffer.data() : comm.rank() == root ? send.data() : nullptr;
  absl::Status s = comm.Broadcast(from, buffer.data(), count, dtype, root, stream);
  if (!s.ok()) return absl::StrCat(what, ": ", s.ToString());
  for (size_t i = 0; !in_place && i < count + kGuard; ++i)
    if (send.Get(i) != (i < count ? CopyValue(comm.rank(), i) : kPoison))
      return absl::StrCat(what, ": the send buffer's element ", i, " was written");
  for (size_t i = 0; i < count + kGuard; ++i) {
    const double expected = i < count ? CopyValue(root, i) : kPoison;
    if (buffer.Get(i) != expected)
      return absl::StrCat(what, ": element ", i, i < count ? "" : " (past count)", " is ",
                          buffer.Get(i), ", expected ", expected);
  }
  return "";
}

std::string AllGatherAndCheck(Communicator& comm, const Stream& stream, DType dtype, size_t count,
                              bool in_place) {
  const std::string what =
      absl::StrCat("all-gather, ranks ", comm.size(), ", rank ", comm.rank(), ", ",
                   DTypeName(dtype), ", count ", count, in_place ? ", in place" : ", out of place");
  const int rank = comm.rank();
  const size_t total = count * comm.size();
  Elements send(dtype, count + kGuard), recv(dtype, total + kGuard);
  for (size_t i = 0; i < count + kGuard; ++i) send.Set(i, CopyValue(rank, i));
  for (size_t i = 0; i < total + kGuard; ++i)
    recv.Set(i, in_place && i < total && i / count == static_cast<size_t>(rank)
                    ? CopyValue(rank, i % count)
                    : kPoison);
  const Elements send_before = send;
  // In place, this rank's slice of recv is its send buffer.
  const void* send_ptr =
      in_place
          ? static_cast<const void*>(static_cast<char*>(recv.data()) + rank * count * SizeOf(dtype))
          : send.data();
  absl::Status s = comm.AllGather(send_ptr, recv.data(), count, dtype, stream);
  if (!s.ok()) return absl::StrCat(what, ": ", s.ToString());
  for (size_t i = 0; i < total + kGuard; ++i) {
    const double expected = i < total ? CopyValue(static_cast<int>(i / count), i % count) : kPoison;
    if (recv.Get(i) != expected)
      return absl::StrCat(what, ": element ", i, i < total ? "" : " (past size * count)", " is ",
                          recv.Get(i), ", expected ", expected);
  }
  for (size_t i = 0; i < count + kGuard; ++i)
    if (!send.Same(i, send_before)) return absl::StrCat(what, ": the send buffer changed at ", i);
  return "";
}

std::string ReduceScatterAndCheck(Communicator& comm, const Stream& stream, DType dtype,
                                  ReduceOp op, size_t count, bool in_place) {
  const std::string what = absl::StrCat(
      "reduce-scatter, ranks ", comm.size(), ", rank ", comm.rank(), ", ", DTypeName(dtype), " ",
      ReduceOpName(op), ", count ", count, in_place ? ", in place" : ", out of place");
  const int rank = comm.rank();
  const size_t total = count * comm.size();
  // Rank r's element j of the scattered buffer is Value(r, j): the result
  // for slice `rank`, element i, is Expected(..., rank * count + i).
  Elements send(dtype, total + kGuard), recv(dtype, count + kGuard);
  Elements expected(dtype, count + kGuard);
  for (size_t j = 0; j < total + kGuard; ++j) send.Set(j, static_cast<double>(Value(rank, j)));
  for (size_t i = 0; i < count + kGuard; ++i) {
    recv.Set(i, kPoison);
    expected.Set(i, i < count ? Expected(dtype, op, comm.size(), rank * count + i) : kPoison);
  }
  const Elements send_before = send;
  void* recv_ptr =
      in_place ? static_cast<char*>(send.data()) + rank * count * SizeOf(dtype) : recv.data();
  absl::Status s = comm.ReduceScatter(send.data(), recv_ptr, count, dtype, op, stream);
  if (!s.ok()) return absl::StrCat(what, ": ", s.ToString());
  if (in_place) {
    for (size_t i = 0; i < count; ++i) {
      Elements one(dtype, 1);
      std::memcpy(one.data(), static_cast<char*>(recv_ptr) + i * SizeOf(dtype), SizeOf(dtype));
      if (one.Get(0) != expected.Get(i))
        return absl::StrCat(what, ": element ", i, " is ", one.Get(0), ", expected ",
                            expected.Get(i));
    }
    // The rest of the send buffer is this rank's input, unchanged.
    for (size_t j = 0; j < total + kGuard; ++j)
      if ((count == 0 || j / count != static_cast<size_t>(rank)) && !send.Same(j, send_before))
        return absl::StrCat(what, ": the send buffer changed outside this rank's slice at ", j);
    return "";
  }
  for (size_t i = 0; i < count + kGuard; ++i)
    if (!recv.Same(i, expected))
      return absl::StrCat(what, ": element ", i, i < count ? "" : " (past count)", " is ",
                          recv.Get(i), ", expected ", expected.Get(i));
  for (size_t j = 0; j < total + kGuard; ++j)
    if (!send.Same(j, send_before)) return absl::StrCat(what, ": the send buffer changed at ", j);
  return "";
}

std::string AllToAllAndCheck(Communicator& comm, const Stream& stream, DType dtype, size_t count) {
  const std::string what = absl::StrCat("all-to-all, ranks ", comm.size(), ", rank ", comm.rank(),
                                        ", ", DTypeName(dtype), ", count ", count);
  const size_t n = static_cast<size_t>(comm.size());
  Elements send(dtype, n * count + kGuard), recv(dtype, n * count + kGuard);
  for (size_t j = 0; j < n * count + kGuard; ++j) {
    send.Set(j, j < n * count ? CopyValue(comm.rank(), j) : kPoison);
    recv.Set(j, kPoison);
  }
  absl::Status s = comm.AllToAll(send.data(), recv.data(), count, dtype, stream);
  if (!s.ok()) return absl::StrCat(what, ": ", s.ToString());
  for (size_t j = 0; j < n * count + kGuard; ++j) {
    const size_t q = j / std::max<size_t>(count, 1), i = j % std::max<size_t>(count, 1);
    const double expected =
        j < n * count ? CopyValue(static_cast<int>(q), comm.rank() * count + i) : kPoison;
    if (recv.Get(j) != expected)
      return absl::StrCat(what, ": element ", j, j < n * count ? "" : " (past the buffer)", " is ",
                          recv.Get(j), ", expected ", expected);
  }
  return "";
}

std::string ReduceAndCheck(Communicator& comm, const Stream& stream, DType dtype, ReduceOp op,
                           size_t count, int root, bool in_place, bool null_elsewhere) {
  const std::string what =
      absl::StrCat("reduce, ranks ", comm.size(), ", rank ", comm.rank(), ", root ", root, ", ",
                   DTypeName(dtype), " ", ReduceOpName(op), ", count ", count,
                   in_place ? ", in place" : ", out of place");
  const int rank = comm.rank();
  const bool is_root = rank == root;
  Elements send(dtype, count + kGuard), recv(dtype, count + kGuard);
  Elements expected(dtype, count + kGuard);
  for (size_t i = 0; i < count + kGuard; ++i) {
    send.Set(i, static_cast<double>(Value(rank, i)));
    recv.Set(i, kPoison);
    expected.Set(i, i < count && is_root ? Expected(dtype, op, comm.size(), i) : kPoison);
  }
  const Elements send_before = send;
  const bool root_in_place = in_place && is_root;
  if (root_in_place) recv = send;
  void* recv_ptr = is_root || !null_elsewhere ? recv.data() : nullptr;
  absl::Status s = comm.Reduce(root_in_place ? recv.data() : send.data(), recv_ptr, count, dtype,
                               op, root, stream);
  if (!s.ok()) return absl::StrCat(what, ": ", s.ToString());
  for (size_t i = 0; i < count + kGuard; ++i) {
    // In place, the guard past count still holds this rank's input.
    if (root_in_place && i >= count) {
      if (!recv.Same(i, send_before))
        return absl::StrCat(what, ": element ", i, " (past count) changed");
      continue;
    }
    if (!recv.Same(i, expected))
      return absl::StrCat(what, ": element ", i, i < count ? "" : " (past count)", " is ",
                          recv.Get(i), ", expected ", expected.Get(i),
                          is_root ? "" : " (not the root: nothing may be written)");
  }
  if (!root_in_place)
    for (size_t i = 0; i < count + kGuard; ++i)
      if (!send.Same(i, send_before)) return absl::StrCat(what, ": the send buffer changed at ", i);
  return "";
}

std::string GatherAndCheck(Communicator& comm, const Stream& stream, DType dtype, size_t count,
                           int root, bool in_place, bool null_elsewhere) {
  const std::string what =
      absl::StrCat("gather, ranks ", comm.size(), ", rank ", comm.rank(), ", root ", root, ", ",
                   DTypeName(dtype), ", count ", count, in_place ? ", in place" : ", out of place");
  const int rank = comm.rank();
  const bool is_root = rank == root;
  const bool root_in_place = in_place && is_root;
  const size_t total = count * comm.size();
  Elements send(dtype, count + kGuard), recv(dtype, total + kGuard);
  for (size_t i = 0; i < count + kGuard; ++i) send.Set(i, CopyValue(rank, i));
  for (size_t i = 0; i < total + kGuard; ++i)
    recv.Set(i, root_in_place && i < total && i / count == static_cast<size_t>(rank)
                    ? CopyValue(rank, i % count)
                    : kPoison);
  const Elements send_before = send;
  const void* send_ptr =
      root_in_place
          ? static_cast<const void*>(static_cast<char*>(recv.data()) + rank * count * SizeOf(dtype))
          : send.data();
  void* recv_ptr = is_root || !null_elsewhere ? recv.data() : nullptr;
  absl::Status s = comm.Gather(send_ptr, recv_ptr, count, dtype, root, stream);
  if (!s.ok()) return absl::StrCat(what, ": ", s.ToString());
  for (size_t i = 0; i < total + kGuard; ++i) {
    const double expected =
        is_root && i < total ? CopyValue(static_cast<int>(i / count), i % count) : kPoison;
    if (recv.Get(i) != expected)
      return absl::StrCat(what, ": element ", i, i < total ? "" : " (past size * count)", " is ",
                          recv.Get(i), ", expected ", expected,
                          is_root ? "" : " (not the root: nothing may be written)");
  }
  for (size_t i = 0; i < count + kGuard; ++i)
    if (!send.Same(i, send_before)) return absl::StrCat(what, ": the send buffer changed at ", i);
  return "";
}

std::string ScatterAndCheck(Communicator& comm, const Stream& stream, DType dtype, size_t count,
                            int root, bool in_place, bool null_elsewhere) {
  const std::string what =
      absl::StrCat("scatter, ranks ", comm.size(), ", rank ", comm.rank(), ", root ", root, ", ",
                   DTypeName(dtype), ", count ", count, in_place ? ", in place" : ", out of place");
  const int rank = comm.rank();
  const bool is_root = rank == root;
  const bool root_in_place = in_place && is_root;
  const size_t total = count * comm.size();
  // Every rank fills a send buffer; only the root's is read.
  Elements send(dtype, total + kGuard), recv(dtype, count + kGuard);
  for (size_t j = 0; j < total + kGuard; ++j)
    send.Set(j, j < total ? CopyValue(rank, j) : kPoison);
  for (size_t i = 0; i < count + kGuard; ++i) recv.Set(i, kPoison);
  const Elements send_before = send;
  const void* send_ptr = is_root || !null_elsewhere ? send.data() : nullptr;
  void* recv_ptr =
      root_in_place ? static_cast<char*>(send.data()) + rank * count * SizeOf(dtype) : recv.data();
  absl::Status s = comm.Scatter(send_ptr, recv_ptr, count, dtype, root, stream);
  if (!s.ok()) return absl::StrCat(what, ": ", s.ToString());
  if (!root_in_place)
    for (size_t i = 0; i < count + kGuard; ++i) {
      const double expected = i < count ? CopyValue(root, rank * count + i) : kPoison;
      if (recv.Get(i) != expected)
        return absl::StrCat(what, ": element ", i, i < count ? "" : " (past count)", " is ",
                            recv.Get(i), ", expected ", expected);
    }
  // The send buffer is only read (in place, the root's slice already holds its result).
  for (size_t j = 0; j < total + kGuard; ++j)
    if (!send.Same(j, send_before)) return absl::StrCat(what, ": the send buffer changed at ", j);
  return "";
}

absl::Status RunAny(Communicator& comm, const AnyCall& c) {
  std::vector<double> send(c.count + 1, 1.0), recv((c.count + 1) * comm.size(), 0.0);
  const Stream stream = Stream::Cpu();
  switch (c.collective) {
    case Collective::kAllReduce:
      return comm.AllReduce(send.data(), recv.data(), c.count, c.dtype, ReduceOp::kSum, stream);
    case Collective::kBroadcast:
      return comm.Broadcast(send.data(), send.data(), c.count, c.dtype, c.root, stream);
    case Collective::kAllGather:
      return comm.AllGather(send.data(), recv.data(), c.count, c.dtype, stream);
    case Collective::kReduceScatter:
      return comm.ReduceScatter(recv.data(), send.data(), c.count, c.dtype, ReduceOp::kSum, stream);
    case Collective::kReduce:
      return comm.Reduce(send.data(), recv.data(), c.count, c.dtype, ReduceOp::kSum, c.root,
                         stream);
    case Collective::kAllToAll: {
      std::vector<double> all(send.size() * comm.size(), 1.0);
      return comm.AllToAll(all.data(), recv.data(), c.count, c.dtype, stream);
    }
    case Collective::kGather:
      return comm.Gather(send.data(), recv.data(), c.count, c.dtype, c.root, stream);
    case Collective::kScatter:
      return comm.Scatter(recv.data(), send.data(), c.count, c.dtype, c.root, stream);
  }
  return absl::InternalError("unknown collective");
}

}  // namespace collective_test
}  // namespace cnnbench
