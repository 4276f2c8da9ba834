// The nccl group. Everywhere: the version, argument errors, sharing a unique
// id over a local group. With GPUs (skipped without): every collective on
// every visible GPU against the values computed here, one communicator per
// thread made from a shared id, and a rank that never joins or never calls.
#include "kernels/collectives/nccl.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/device.h"
#include "core/dtype.h"
#include "gtest/gtest.h"
#include "kernels/collectives/local.h"
#include "tests/kernels/collectives/collective_checks.h"

namespace cnnbench {
namespace {

using collective_test::CopyValue;
using collective_test::Elements;
using collective_test::Expected;
using collective_test::kDTypes;
using collective_test::kOps;
using collective_test::Value;

#define SKIP_WITHOUT_GPU()                      \
  if (!NcclBuiltIn() || CudaDeviceCount() == 0) \
  GTEST_SKIP() << (NcclBuiltIn() ? "no GPU visible" : "this build has no CUDA/NCCL")

template <typename F>
void OnEveryRank(int ranks, F body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) threads.emplace_back(body, r);
  for (auto& t : threads) t.join();
}

std::vector<Device> AllGpus() {
  std::vector<Device> gpus;
  for (int i = 0; i < CudaDeviceCount(); ++i) gpus.push_back(Device::Cuda(i));
  return gpus;
}

TEST(NcclTest, VersionIsTheLibrarysOrUnsupported) {
  absl::StatusOr<std::string> version = NcclVersion();
  if (!NcclBuiltIn()) {
    EXPECT_EQ(version.status().code(), absl::StatusCode::kUnimplemented) << version.status();
    EXPECT_TRUE(absl::StartsWith(version.status().message(), "unsupported: "));
    return;
  }
  ASSERT_TRUE(version.ok()) << version.status();
  // "major.minor.patch", NCCL 2.
  EXPECT_TRUE(absl::StartsWith(*version, "2.")) << *version;
  EXPECT_EQ(std::count(version->begin(), version->end(), '.'), 2) << *version;
}

TEST(NcclTest, BadArgumentsAreClearErrors) {
  if (!NcclBuiltIn()) {
    EXPECT_EQ(CreateNcclGroup({Device::Cuda(0)}).status().code(), absl::StatusCode::kUnimplemented);
    return;
  }
  auto empty = CreateNcclGroup({});
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument) << empty.status();
  auto cpu = CreateNcclGroup({Device::Cpu()});
  EXPECT_EQ(cpu.status().code(), absl::StatusCode::kInvalidArgument) << cpu.status();
  EXPECT_TRUE(absl::StrContains(cpu.status().message(), "not a GPU")) << cpu.status();
  auto absent = CreateNcclGroup({Device::Cuda(CudaDeviceCount())});
  EXPECT_FALSE(absent.ok());
  EXPECT_TRUE(absl::StrContains(absent.status().message(), "not present")) << absent.status();
  auto twice = CreateNcclGroup({Device::Cuda(0), Device::Cuda(0)});
  EXPECT_FALSE(twice.ok());
  auto no_time =
      CreateNcclGroup({Device::Cuda(0)}, CommunicatorOptions{.timeout = absl::ZeroDuration()});
  EXPECT_EQ(no_time.status().code(), absl::StatusCode::kInvalidArgument) << no_time.status();
  auto rank = CreateNcclCommunicator(NcclUniqueId{}, 2, 2, Device::Cuda(0));
  EXPECT_EQ(rank.status().code(), absl::StatusCode::kInvalidArgument) << rank.status();
  EXPECT_TRUE(absl::StrContains(rank.status().message(), "rank 2 of 2")) << rank.status();
  auto local = CreateLocalGroup(1);
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(NcclSynchronize(*(*local)[0], Stream::Cpu()).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(NcclTest, EveryRankOfALocalGroupGetsRankZerosUniqueId) {
  auto group = CreateLocalGroup(3);
  ASSERT_TRUE(group.ok()) << group.status();
  std::vector<absl::StatusOr<NcclUniqueId>> ids(3, absl::UnknownError("not run"));
  OnEveryRank(3, [&](int rank) { ids[rank] = ShareNcclUniqueId(*(*group)[rank]); });
  // Making an id may fail on a machine without a usable network interface;
  // then every rank must say so, not just rank 0.
  for (int r = 1; r < 3; ++r) {
    ASSERT_EQ(ids[r].ok(), ids[0].ok()) << ids[0].status() << " / " << ids[r].status();
    if (ids[0].ok()) {
      EXPECT_EQ(ids[r]->bytes, ids[0]->bytes) << "rank " << r;
    }
  }
  if (!NcclBuiltIn()) {
    EXPECT_EQ(ids[0].status().code(), absl::StatusCode::kUnimplemented) << ids[0].status();
  }
}

// Device memory holding `host`, and a way back.
struct DeviceElements {
  DeviceElements(const Device& device, const Elements& host)
      : buffer(*Buffer::Allocate(device, host.words.size() * 8)) {
    EXPECT_TRUE(
        CopyBytes(buffer.data(), device, host.words.data(), Device::Cpu(), host.words.size() * 8)
            .ok());
  }
  void CopyTo(Elements& host) const {
    EXPECT_TRUE(CopyBytes(host.words.data(), Device::Cpu(), buffer.data(), buffer.device(),
                          host.words.size() * 8)
                    .ok());
  }
  Buffer buffer;
};

// One all-reduce on GPU rank `comm`, checked exactly (sum, max, min of small
// integers are exact in every dtype; NCCL's average may round differently
// from the interface's fp32 divide, so it gets a tolerance).
std::string CheckGpuAllReduce(Communicator& comm, const Stream& stream, const Device& device,
                              DType dtype, ReduceOp op, size_t count) {
  const std::string what = absl::StrCat("nccl rank ", comm.rank(), " of ", comm.size(), ", ",
                                        DTypeName(dtype), " ", ReduceOpName(op), ", count ", count);
  Elements send(dtype, count), recv(dtype, count);
  for (size_t i = 0; i < count; ++i) {
    send.Set(i, static_cast<double>(Value(comm.rank(), i)));
    recv.Set(i, 99);
  }
  DeviceElements d_send(device, send), d_recv(device, recv);
  absl::Status s =
      comm.AllReduce(d_send.buffer.data(), d_recv.buffer.data(), count, dtype, op, stream);
  if (s.ok()) s = NcclSynchronize(comm, stream);
  if (!s.ok()) return absl::StrCat(what, ": ", s.ToString());
  d_recv.CopyTo(recv);
  const bool integer = dtype == DType::kI32 || dtype == DType::kI64;
  for (size_t i = 0; i < count; ++i) {
    const double expected = Expected(dtype, op, comm.size(), i);
    const double tolerance = op != ReduceOp::kAvg ? 0 : integer ? 1 : 1e-2;
    if (std::abs(recv.Get(i) - expected) > tolerance)
      return absl::StrCat(what, ": element ", i, " is ", recv.Get(i), ", expected ", expected);
  }
  return "";
}

TEST(NcclTest, EveryCollectiveOnEveryVisibleGpu) {
  SKIP_WITHOUT_GPU();
  const std::vector<Device> gpus = AllGpus();
  const int ranks = static_cast<int>(gpus.size());
  auto group = CreateNcclGroup(gpus);
  ASSERT_TRUE(group.ok()) << group.status();
  std::vector<std::string> failures(ranks);
  OnEveryRank(ranks, [&](int rank) {
    Communicator& comm = *(*group)[rank];
    auto stream = Stream::Create(gpus[rank]);
    if (!stream.ok()) {
      failures[rank] = stream.status().ToString();
      return;
    }
    auto note = [&](std::string failure) {
      if (failures[rank].empty()) failures[rank] = std::move(failure);
    };
    for (DType dtype : kDTypes)
      for (ReduceOp op : kOps)
        for (size_t count : {size_t{1}, size_t{1001}})
          note(CheckGpuAllReduce(comm, *stream, gpus[rank], dtype, op, count));
    // Broadcast from the last rank and all-gather, fp32.
    constexpr size_t kCount = 37;
    Elements data(DType::kF32, kCount), gathered(DType::kF32, kCount * ranks);
    for (size_t i = 0; i < kCount; ++i) data.Set(i, CopyValue(rank, i));
    DeviceElements d_data(gpus[rank], data), d_gathered(gpus[rank], gathered);
    absl::Status s = comm.AllGather(d_data.buffer.data(), d_gathered.buffer.data(), kCount,
                                    DType::kF32, *stream);
    if (s.ok())
      s = comm.Broadcast(d_data.buffer.data(), d_data.buffer.data(), kCount, DType::kF32, ranks - 1,
                         *stream);
    if (s.ok()) s = NcclSynchronize(comm, *stream);
    if (!s.ok()) return note(s.ToString());
    d_data.CopyTo(data);
    d_gathered.CopyTo(gathered);
    for (size_t i = 0; i < kCount; ++i)
      if (data.Get(i) != CopyValue(ranks - 1, i))
        note(absl::StrCat("broadcast, rank ", rank, ": element ", i, " is ", data.Get(i)));
    for (size_t i = 0; i < kCount * ranks; ++i)
      if (gathered.Get(i) != CopyValue(static_cast<int>(i / kCount), i % kCount))
        note(absl::StrCat("all-gather, rank ", rank, ": element ", i, " is ", gathered.Get(i)));
    // Reduce-scatter and a reduce to the last rank, fp32 sum: exact.
    Elements scatter_in(DType::kF32, kCount * ranks), scattered(DType::kF32, kCount);
    Elements reduced(DType::kF32, kCount);
    for (size_t j = 0; j < kCount * ranks; ++j)
      scatter_in.Set(j, static_cast<double>(Value(rank, j)));
    for (size_t i = 0; i < kCount; ++i) data.Set(i, static_cast<double>(Value(rank, i)));
    DeviceElements d_in(gpus[rank], scatter_in), d_out(gpus[rank], scattered);
    DeviceElements d_send(gpus[rank], data), d_reduced(gpus[rank], reduced);
    s = comm.ReduceScatter(d_in.buffer.data(), d_out.buffer.data(), kCount, DType::kF32,
                           ReduceOp::kSum, *stream);
    if (s.ok())
      s = comm.Reduce(d_send.buffer.data(), d_reduced.buffer.data(), kCount, DType::kF32,
                      ReduceOp::kSum, ranks - 1, *stream);
    if (s.ok()) s = NcclSynchronize(comm, *stream);
    if (!s.ok()) return note(s.ToString());
    d_out.CopyTo(scattered);
    d_reduced.CopyTo(reduced);
    for (size_t i = 0; i < kCount; ++i) {
      const double want = Expected(DType::kF32, ReduceOp::kSum, ranks, rank * kCount + i);
      if (scattered.Get(i) != want)
        note(absl::StrCat("reduce-scatter, rank ", rank, ": element ", i, " is ", scattered.Get(i),
                          ", expected ", want));
      if (rank == ranks - 1 && reduced.Get(i) != Expected(DType::kF32, ReduceOp::kSum, ranks, i))
        note(absl::StrCat("reduce, root ", rank, ": element ", i, " is ", reduced.Get(i)));
    }
    // Gather to and scatter from the last rank, out of place, fp32.
    const int root = ranks - 1;
    Elements mine(DType::kF32, kCount), all(DType::kF32, kCount * ranks), part(DType::kF32, kCount);
    for (size_t i = 0; i < kCount; ++i) mine.Set(i, CopyValue(rank, i));
    for (size_t j = 0; j < kCount * ranks; ++j) all.Set(j, CopyValue(rank, j));
    DeviceElements d_mine(gpus[rank], mine), d_all(gpus[rank], all), d_part(gpus[rank], part);
    DeviceElements d_gather(gpus[rank], Elements(DType::kF32, kCount * ranks));
    s = comm.Gather(d_mine.buffer.data(), d_gather.buffer.data(), kCount, DType::kF32, root,
                    *stream);
    if (s.ok())
      s = comm.Scatter(d_all.buffer.data(), d_part.buffer.data(), kCount, DType::kF32, root,
                       *stream);
    if (s.ok()) s = NcclSynchronize(comm, *stream);
    if (!s.ok()) return note(s.ToString());
    Elements got_all(DType::kF32, kCount * ranks);
    d_gather.CopyTo(got_all);
    d_part.CopyTo(part);
    for (size_t j = 0; rank == root && j < kCount * ranks; ++j)
      if (got_all.Get(j) != CopyValue(static_cast<int>(j / kCount), j % kCount))
        note(absl::StrCat("gather, root ", rank, ": element ", j, " is ", got_all.Get(j)));
    for (size_t i = 0; i < kCount; ++i)
      if (part.Get(i) != CopyValue(root, rank * kCount + i))
        note(absl::StrCat("scatter, rank ", rank, ": element ", i, " is ", part.Get(i)));
  });
  for (int r = 0; r < ranks; ++r) EXPECT_EQ(failures[r], "") << "rank " << r;
}

TEST(NcclTest, OneCommunicatorPerThreadFromASharedId) {
  SKIP_WITHOUT_GPU();
  const std::vector<Device> gpus = AllGpus();
  const int ranks = static_cast<int>(gpus.size());
  auto bootstrap = CreateLocalGroup(ranks);
  ASSERT_TRUE(bootstrap.ok());
  std::vector<std::string> failures(ranks);
  OnEveryRank(ranks, [&](int rank) {
    auto id = ShareNcclUniqueId(*(*bootstrap)[rank]);
    if (!id.ok()) {
      failures[rank] = id.status().ToString();
      return;
    }
    auto comm = CreateNcclCommunicator(*id, rank, ranks, gpus[rank],
                                       CommunicatorOptions{.timeout = absl::Seconds(60)});
    if (!comm.ok()) {
      failures[rank] = comm.status().ToString();
      return;
    }
    EXPECT_EQ((*comm)->name(), "nccl");
    auto stream = Stream::Create(gpus[rank]);
    if (!stream.ok()) {
      failures[rank] = stream.status().ToString();
      return;
    }
    failures[rank] =
        CheckGpuAllReduce(**comm, *stream, gpus[rank], DType::kF32, ReduceOp::kSum, 4099);
  });
  for (int r = 0; r < ranks; ++r) EXPECT_EQ(failures[r], "") << "rank " << r;
}

TEST(NcclTest, ARankThatNeverJoinsTimesOutCreation) {
  SKIP_WITHOUT_GPU();
  auto id = NewNcclUniqueId();
  ASSERT_TRUE(id.ok()) << id.status();
  // Rank 1 of 2 never comes.
  auto comm = CreateNcclCommunicator(*id, 0, 2, Device::Cuda(0),
                                     CommunicatorOptions{.timeout = absl::Seconds(2)});
  ASSERT_FALSE(comm.ok());
  EXPECT_EQ(comm.status().code(), absl::StatusCode::kDeadlineExceeded) << comm.status();
  EXPECT_TRUE(absl::StrContains(comm.status().message(), "timed out after 2s")) << comm.status();
}

TEST(NcclTest, ACallAPeerNeverMakesTimesOutItsSynchronizeAndBreaksTheCommunicator) {
  SKIP_WITHOUT_GPU();
  if (CudaDeviceCount() < 2) GTEST_SKIP() << "needs 2 GPUs (NCCL puts one rank per GPU)";
  auto group = CreateNcclGroup({Device::Cuda(0), Device::Cuda(1)},
                               CommunicatorOptions{.timeout = absl::Seconds(2)});
  ASSERT_TRUE(group.ok()) << group.status();
  Communicator& comm = *(*group)[0];
  auto stream = Stream::Create(Device::Cuda(0));
  ASSERT_TRUE(stream.ok());
  auto buffer = Buffer::Allocate(Device::Cuda(0), 64);
  ASSERT_TRUE(buffer.ok());
  ASSERT_TRUE(
      comm.AllReduce(buffer->data(), buffer->data(), 16, DType::kF32, ReduceOp::kSum, *stream)
          .ok());
  absl::Status s = NcclSynchronize(comm, *stream);  // rank 1 never calls
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
  s = comm.AllReduce(buffer->data(), buffer->data(), 16, DType::kF32, ReduceOp::kSum, *stream);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "broken")) << s;
}

}  // namespace
}  // namespace cnnbench
