// The local group: every dtype and op against a reduction computed here,
// sizes that do not divide among the ranks, count 0, one rank, in place and
// out of place, back-to-back calls on the same communicators, and calls the
// ranks disagree on (an error on every rank, never a hang); broadcast from
// every root and all-gather in every dtype; the timeout that breaks a group
// when a rank never calls.
#include "kernels/collectives/local.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/status.h"
#include "gtest/gtest.h"
#include "kernels/collectives/communicator.h"
#include "tests/kernels/collectives/collective_checks.h"

namespace cnnbench {
namespace {

using collective_test::AllGatherAndCheck;
using collective_test::AllReduceAndCheck;
using collective_test::AllToAllAndCheck;
using collective_test::ScatterAndCheck;
using collective_test::GatherAndCheck;
using collective_test::AnyCall;
using collective_test::BroadcastAndCheck;
using collective_test::FirstFailureOverReductions;
using collective_test::kAllDTypes;
using collective_test::kDTypes;
using collective_test::kOps;
using collective_test::ReduceAndCheck;
using collective_test::ReduceScatterAndCheck;
using collective_test::RunAny;

// 37 and 20011 divide among none of 2, 3, 4 ranks; 20011 also spans several
// of the implementation's blocks per rank.
constexpr size_t kCounts[] = {0, 1, 37, 20011};

// Runs body(rank) on one thread per rank, the way a group is used.
template <typename F>
void OnEveryRank(int ranks, F body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) threads.emplace_back(body, r);
  for (auto& t : threads) t.join();
}

// Runs body(comm, stream) on every rank of a local group of 1, 2, 3 and 4
// ranks, each rank on its own thread, and expects each to return "".
template <typename Body>
void ExpectEveryRankPasses(Body body) {
  for (int ranks : {1, 2, 3, 4}) {
    auto group = CreateLocalGroup(ranks);
    ASSERT_TRUE(group.ok()) << group.status();
    std::vector<std::string> failures(ranks);
    OnEveryRank(ranks, [&](int rank) {
      auto stream = Stream::Create(Device::Cpu());
      failures[rank] = body(*(*group)[rank], *stream);
    });
    for (int r = 0; r < ranks; ++r) EXPECT_EQ(failures[r], "") << "rank " << r << " of " << ranks;
  }
}

// Every rank makes the same calls in the same order, back to back on the
// same communicators, and keeps going after a failure (stopping would leave
// the others waiting).
TEST(LocalGroupTest, AllReduceAndReduceScatterInEveryDTypeAndOpMatchAPlainReduction) {
  for (auto check : {AllReduceAndCheck, ReduceScatterAndCheck})
    ExpectEveryRankPasses([check](Communicator& comm, const Stream& stream) {
      return FirstFailureOverReductions(kCounts,
                                        [&](DType dtype, ReduceOp op, size_t count, bool in_place) {
                                          return check(comm, stream, dtype, op, count, in_place);
                                        });
    });
}

TEST(LocalGroupTest, ManyBackToBackCallsOnTheSameCommunicators) {
  // No synchronisation between calls but the collectives themselves: a rank
  // that returned early would change its buffers while others still read.
  constexpr int kRanks = 4, kCalls = 300;
  auto group = CreateLocalGroup(kRanks);
  ASSERT_TRUE(group.ok()) << group.status();
  std::vector<std::string> failures(kRanks);
  OnEveryRank(kRanks, [&](int rank) {
    auto stream = Stream::Create(Device::Cpu());
    Communicator& comm = *(*group)[rank];
    std::vector<float> data(64);
    for (int call = 0; call < kCalls; ++call) {
      const size_t count = 1 + (call * 37) % data.size();
      for (size_t i = 0; i < count; ++i) data[i] = static_cast<float>((rank + 1) * (call + i % 3));
      absl::Status s =
          comm.AllReduce(data.data(), data.data(), count, DType::kF32, ReduceOp::kSum, *stream);
      for (size_t i = 0; i < count && failures[rank].empty(); ++i) {
        const float expected = static_cast<float>(kRanks * (kRanks + 1) / 2 * (call + i % 3));
        if (!s.ok() || data[i] != expected)
          failures[rank] = absl::StrCat("call ", call, " element ", i, ": ", s.ToString(), " ",
                                        data[i], " vs ", expected);
      }
    }
  });
  for (int r = 0; r < kRanks; ++r) EXPECT_EQ(failures[r], "") << "rank " << r;
}

TEST(LocalGroupTest, IntegerSumsWrapAround) {
  auto group = CreateLocalGroup(2);
  ASSERT_TRUE(group.ok()) << group.status();
  std::vector<int32_t> result(2);
  OnEveryRank(2, [&](int rank) {
    auto stream = Stream::Create(Device::Cpu());
    int32_t value = rank == 0 ? INT32_MAX : 1;
    EXPECT_TRUE(
        (*group)[rank]->AllReduce(&value, &value, 1, DType::kI32, ReduceOp::kSum, *stream).ok());
    result[rank] = value;
  });
  EXPECT_EQ(result[0], INT32_MIN);
  EXPECT_EQ(result[1], INT32_MIN);
}

TEST(LocalGroupTest, CreateNamesRanksAndRejectsAnEmptyGroup) {
  auto group = CreateLocalGroup(3);
  ASSERT_TRUE(group.ok()) << group.status();
  ASSERT_EQ(group->size(), 3u);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ((*group)[r]->rank(), r);
    EXPECT_EQ((*group)[r]->size(), 3);
    EXPECT_EQ((*group)[r]->name(), "local");
  }
  for (int ranks : {0, -2}) {
    auto empty = CreateLocalGroup(ranks);
    ASSERT_FALSE(empty.ok());
    EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(empty.status().message(), absl::StrCat("got ", ranks)))
        << empty.status();
  }
}

// What each rank passes in one collective of a test.
struct RankCall {
  size_t count = 8;
  DType dtype = DType::kF32;
  ReduceOp op = ReduceOp::kSum;
  bool null_send = false;
  bool overlapping = false;  // receive buffer one element past the send buffer
};

// Runs one collective with calls[r] on rank r; returns every rank's status.
std::vector<absl::Status> RunCalls(std::vector<std::unique_ptr<Communicator>>& group,
                                   const std::vector<RankCall>& calls) {
  std::vector<absl::Status> statuses(group.size());
  OnEveryRank(static_cast<int>(group.size()), [&](int rank) {
    auto stream = Stream::Create(Device::Cpu());
    const RankCall& c = calls[rank];
    std::vector<double> send(c.count + 1, 1.0), recv(c.count + 1, 0.0);  // room for any dtype
    void* recv_ptr = c.overlapping ? static_cast<void*>(send.data() + 1) : recv.data();
    statuses[rank] = group[rank]->AllReduce(c.null_send ? nullptr : send.data(), recv_ptr, c.count,
                                            c.dtype, c.op, *stream);
  });
  return statuses;
}

TEST(LocalGroupTest, CallsTheRanksDisagreeOnFailOnEveryRankAndTheGroupGoesOn) {
  auto group = CreateLocalGroup(3);
  ASSERT_TRUE(group.ok()) << group.status();
  struct Case {
    const char* what;
    RankCall odd;       // rank 1's call; ranks 0 and 2 make the default one
    const char* named;  // what rank 1's side of the message says
  };
  for (const Case& c : {Case{"count", RankCall{.count = 10}, "count 10"},
                        Case{"dtype", RankCall{.dtype = DType::kF64}, "fp64"},
                        Case{"op", RankCall{.op = ReduceOp::kMax}, "max"}}) {
    std::vector<RankCall> calls(3);
    calls[1] = c.odd;
    std::vector<absl::Status> statuses = RunCalls(*group, calls);
    for (int r = 0; r < 3; ++r) {
      EXPECT_EQ(statuses[r].code(), absl::StatusCode::kInvalidArgument)
          << c.what << ", rank " << r << ": " << statuses[r];
      EXPECT_TRUE(absl::StrContains(statuses[r].message(), "disagree")) << statuses[r];
      EXPECT_TRUE(absl::StrContains(statuses[r].message(), c.named)) << statuses[r];
      EXPECT_TRUE(absl::StrContains(statuses[r].message(), "count 8, fp32, sum")) << statuses[r];
    }
    // The refused collective left the group usable.
    statuses = RunCalls(*group, std::vector<RankCall>(3));
    for (int r = 0; r < 3; ++r) EXPECT_TRUE(statuses[r].ok()) << c.what << ": " << statuses[r];
  }
}

TEST(LocalGroupTest, OneRanksBadArgumentsFailEveryRank) {
  auto group = CreateLocalGroup(2);
  ASSERT_TRUE(group.ok()) << group.status();
  for (RankCall bad : {RankCall{.null_send = true}, RankCall{.overlapping = true}}) {
    std::vector<RankCall> calls(2);
    calls[1] = bad;
    std::vector<absl::Status> statuses = RunCalls(*group, calls);
    for (int r = 0; r < 2; ++r) {
      EXPECT_EQ(statuses[r].code(), absl::StatusCode::kInvalidArgument) << statuses[r];
      EXPECT_TRUE(absl::StrContains(statuses[r].message(), "rank 1 of 2")) << statuses[r];
      EXPECT_TRUE(absl::StrContains(statuses[r].message(), bad.null_send ? "null" : "overlap"))
          << statuses[r];
    }
  }
}

TEST(LocalGroupTest, UnsupportedDTypeOrOpIsUnimplementedOnEveryRank) {
  auto group = CreateLocalGroup(2);
  ASSERT_TRUE(group.ok()) << group.status();
  for (RankCall call : {RankCall{.dtype = DType::kU8}, RankCall{.op = static_cast<ReduceOp>(42)}}) {
    std::vector<absl::Status> statuses = RunCalls(*group, std::vector<RankCall>(2, call));
    for (int r = 0; r < 2; ++r) {
      EXPECT_EQ(statuses[r].code(), absl::StatusCode::kUnimplemented) << statuses[r];
      EXPECT_TRUE(absl::StartsWith(statuses[r].message(), "unsupported: ")) << statuses[r];
      EXPECT_TRUE(
          absl::StrContains(statuses[r].message(), call.dtype == DType::kU8 ? "uint8" : "42"))
          << statuses[r];
    }
  }
}

TEST(LocalGroupTest, ASecondThreadOnOneCommunicatorIsRefused) {
  // Two threads call rank 0's communicator; neither can finish before rank 1
  // calls, so the one that returns first must be the refused one.
  auto group = CreateLocalGroup(2);
  ASSERT_TRUE(group.ok()) << group.status();
  auto stream = Stream::Create(Device::Cpu());
  ASSERT_TRUE(stream.ok());
  float data[2][1] = {{1}, {1}};
  absl::Status statuses[2];
  std::atomic<int> returned{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      statuses[t] =
          (*group)[0]->AllReduce(data[t], data[t], 1, DType::kF32, ReduceOp::kSum, *stream);
      ++returned;
    });
  while (returned.load() == 0) std::this_thread::yield();
  const bool refused = statuses[0].code() == absl::StatusCode::kFailedPrecondition ||
                       statuses[1].code() == absl::StatusCode::kFailedPrecondition;
  float rank1 = 2;
  // Rank 1 completes the accepted call; without a refusal both calls went
  // through together and rank 1 would wait forever, so it only joins then.
  if (refused) {
    EXPECT_TRUE(
        (*group)[1]->AllReduce(&rank1, &rank1, 1, DType::kF32, ReduceOp::kSum, *stream).ok());
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(refused) << statuses[0] << " / " << statuses[1];
  const int accepted = statuses[0].ok() ? 0 : 1;
  EXPECT_TRUE(statuses[accepted].ok()) << statuses[accepted];
  EXPECT_TRUE(absl::StrContains(statuses[1 - accepted].message(), "one thread"))
      << statuses[1 - accepted];
  EXPECT_EQ(data[accepted][0], 3);
  EXPECT_EQ(rank1, 3);
}

TEST(LocalGroupTest, BroadcastFromEveryRootInEveryDTypeInAndOutOfPlace) {
  for (int ranks : {1, 2, 3, 4}) {
    auto group = CreateLocalGroup(ranks);
    ASSERT_TRUE(group.ok()) << group.status();
    std::vector<std::string> failures(ranks);
    OnEveryRank(ranks, [&](int rank) {
      auto stream = Stream::Create(Device::Cpu());
      for (DType dtype : kAllDTypes)
        for (size_t count : kCounts)
          for (int root = 0; root < ranks; ++root)
            for (bool in_place : {true, false}) {
              std::string failure =
                  BroadcastAndCheck(*(*group)[rank], *stream, dtype, count, root, in_place);
              if (failures[rank].empty()) failures[rank] = failure;
            }
    });
    for (int r = 0; r < ranks; ++r) EXPECT_EQ(failures[r], "") << "rank " << r;
  }
}

TEST(LocalGroupTest, AllGatherInEveryDTypeInAndOutOfPlace) {
  for (int ranks : {1, 2, 3, 4}) {
    auto group = CreateLocalGroup(ranks);
    ASSERT_TRUE(group.ok()) << group.status();
    std::vector<std::string> failures(ranks);
    OnEveryRank(ranks, [&](int rank) {
      auto stream = Stream::Create(Device::Cpu());
      for (DType dtype : kAllDTypes)
        for (size_t count : kCounts)
          for (bool in_place : {false, true}) {
            std::string failure =
                AllGatherAndCheck(*(*group)[rank], *stream, dtype, count, in_place);
            if (failures[rank].empty()) failures[rank] = failure;
          }
    });
    for (int r = 0; r < ranks; ++r) EXPECT_EQ(failures[r], "") << "rank " << r;
  }
}

TEST(LocalGroupTest, ReduceToEveryRootInEveryDTypeAndOp) {
  ExpectEveryRankPasses([](Communicator& comm, const Stream& stream) {
    std::string failure;
    for (int root = 0; root < comm.size(); ++root)
      for (bool null_elsewhere : {false, true}) {
        std::string f = FirstFailureOverReductions(
            kCounts, [&](DType dtype, ReduceOp op, size_t count, bool in_place) {
              return ReduceAndCheck(comm, stream, dtype, op, count, root, in_place, null_elsewhere);
            });
        if (failure.empty()) failure = std::move(f);
      }
    return failure;
  });
}

// The checks can fail: a result spoiled after the call is caught.
TEST(LocalGroupTest, TheChecksCatchAWrongResult) {
  auto group = CreateLocalGroup(2);
  ASSERT_TRUE(group.ok()) << group.status();
  // A communicator whose reduce-scatter and reduce write one wrong element.
  class Spoiling final : public Communicator {
   public:
    explicit Spoiling(Communicator& inner) : inner_(inner) {}
    absl::string_view name() const override { return "spoiling"; }
    int rank() const override { return inner_.rank(); }
    int size() const override { return inner_.size(); }
    absl::Status AllReduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                           const Stream& stream) override {
      return inner_.AllReduce(send, recv, count, dtype, op, stream);
    }
    absl::Status Broadcast(const void* send, void* recv, size_t count, DType dtype, int root,
                           const Stream& stream) override {
      return inner_.Broadcast(send, recv, count, dtype, root, stream);
    }
    absl::Status AllGather(const void* send, void* recv, size_t count, DType dtype,
                           const Stream& stream) override {
      return inner_.AllGather(send, recv, count, dtype, stream);
    }
    absl::Status ReduceScatter(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                               const Stream& stream) override {
      RETURN_IF_ERROR(inner_.ReduceScatter(send, recv, count, dtype, op, stream));
      static_cast<float*>(recv)[count - 1] += 1;
      return absl::OkStatus();
    }
    absl::Status Reduce(const void* send, void* recv, size_t count, DType dtype, ReduceOp op,
                        int root, const Stream& stream) override {
      RETURN_IF_ERROR(inner_.Reduce(send, recv, count, dtype, op, root, stream));
      if (rank() == root) static_cast<float*>(recv)[0] += 1;
      return absl::OkStatus();
    }
    absl::Status AllToAll(const void* send, void* recv, size_t count, DType dtype,
                          const Stream& stream) override {
      RETURN_IF_ERROR(inner_.AllToAll(send, recv, count, dtype, stream));
      static_cast<float*>(recv)[0] += 1;
      return absl::OkStatus();
    }
    absl::Status Gather(const void* send, void* recv, size_t count, DType dtype, int root,
                        const Stream& stream) override {
      RETURN_IF_ERROR(inner_.Gather(send, recv, count, dtype, root, stream));
      if (rank() == root) static_cast<float*>(recv)[count] += 1;
      return absl::OkStatus();
    }
    absl::Status Scatter(const void* send, void* recv, size_t count, DType dtype, int root,
                         const Stream& stream) override {
      RETURN_IF_ERROR(inner_.Scatter(send, recv, count, dtype, root, stream));
      static_cast<float*>(recv)[1] += 1;
      return absl::OkStatus();
    }

   private:
    Communicator& inner_;
  };
  std::vector<std::string> scatter(2), reduce(2), all_to_all(2), gather(2), scatter_one(2);
  OnEveryRank(2, [&](int rank) {
    Spoiling comm(*(*group)[rank]);
    const Stream stream = Stream::Cpu();
    scatter[rank] = ReduceScatterAndCheck(comm, stream, DType::kF32, ReduceOp::kSum, 5, false);
    reduce[rank] = ReduceAndCheck(comm, stream, DType::kF32, ReduceOp::kSum, 5, 1, false, false);
    all_to_all[rank] = AllToAllAndCheck(comm, stream, DType::kF32, 5);
    gather[rank] = GatherAndCheck(comm, stream, DType::kF32, 5, 0, false, false);
    scatter_one[rank] = ScatterAndCheck(comm, stream, DType::kF32, 5, 1, false, true);
  });
  EXPECT_TRUE(absl::StrContains(gather[0], "element 5 is")) << gather[0];
  EXPECT_EQ(gather[1], "");
  for (int r = 0; r < 2; ++r)
    EXPECT_TRUE(absl::StrContains(scatter_one[r], "element 1 is"))
        << "rank " << r << ": " << scatter_one[r];
  for (int r = 0; r < 2; ++r)
    EXPECT_TRUE(absl::StrContains(all_to_all[r], "element 0 is"))
        << "rank " << r << ": " << all_to_all[r];
  for (int r = 0; r < 2; ++r)
    EXPECT_TRUE(absl::StrContains(scatter[r], "element 4 is"))
        << "rank " << r << ": " << scatter[r];
  EXPECT_EQ(reduce[0], "");
  EXPECT_TRUE(absl::StrContains(reduce[1], "element 0 is")) << reduce[1];
}

// Every root, every dtype, in and out of place, the other ranks passing
// null or an untouched buffer where theirs is not used.
TEST(LocalGroupTest, GatherAndScatterFromEveryRootInEveryDType) {
  for (auto check : {GatherAndCheck, ScatterAndCheck})
    ExpectEveryRankPasses([check](Communicator& comm, const Stream& stream) {
      std::string failure;
      for (DType dtype : kAllDTypes)
        for (size_t count : kCounts)
          for (int root = 0; root < comm.size(); ++root)
            for (bool in_place : {false, true})
              for (bool null_elsewhere : {false, true}) {
                std::string f =
                    check(comm, stream, dtype, count, root, in_place, null_elsewhere);
                if (failure.empty()) failure = std::move(f);
              }
      return failure;
    });
}

// The root's other buffer overlapping without being its in-place slice, or
// the ranks naming different roots: an error on every rank, nothing moved.
TEST(LocalGroupTest, AGatherOrScatterBadOnOneRankFailsOnEveryRank) {
  auto group = CreateLocalGroup(2);
  ASSERT_TRUE(group.ok()) << group.status();
  std::vector<absl::Status> gather(2), scatter(2), roots(2);
  OnEveryRank(2, [&](int rank) {
    std::vector<float> send(8, 1.0f), recv(8, 0.0f), big(8, 2.0f);
    Communicator& comm = *(*group)[rank];
    // Rank 1 (the root) sends from recv + 1: inside recv, not its slice (recv + 4).
    gather[rank] = comm.Gather(rank == 1 ? recv.data() + 1 : send.data(), recv.data(), 4,
                               DType::kF32, 1, Stream::Cpu());
    // Rank 0 (the root) receives into big + 1: inside its send, not its slice (big + 0).
    scatter[rank] = comm.Scatter(big.data(), rank == 0 ? big.data() + 1 : recv.data(), 4,
                                 DType::kF32, 0, Stream::Cpu());
    roots[rank] = comm.Gather(send.data(), recv.data(), 4, DType::kF32, rank, Stream::Cpu());
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(gather[r].code(), absl::StatusCode::kInvalidArgument) << gather[r];
    EXPECT_EQ(scatter[r].code(), absl::StatusCode::kInvalidArgument) << scatter[r];
    EXPECT_EQ(roots[r].code(), absl::StatusCode::kInvalidArgument) << roots[r];
  }
  EXPECT_TRUE(absl::StrContains(gather[1].message(), "the root's slice")) << gather[1];
  EXPECT_TRUE(absl::StrContains(roots[0].message(), "disagree")) << roots[0];
}

// Only the root's buffer of the root-only side may be null elsewhere: a
// null on the side every rank uses (gather's send, scatter's receive), or
// the root's own null, fails on every rank.
TEST(LocalGroupTest, AGatherOrScatterWithANullBufferItUsesFailsOnEveryRank) {
  auto group = CreateLocalGroup(2);
  ASSERT_TRUE(group.ok()) << group.status();
  std::vector<absl::Status> gather(2), scatter(2), root_null(2);
  OnEveryRank(2, [&](int rank) {
    std::vector<float> part(4, 1.0f), all(8, 0.0f);
    Communicator& comm = *(*group)[rank];
    // Rank 1 (not the root) gathers from a null send buffer.
    gather[rank] = comm.Gather(rank == 1 ? nullptr : part.data(), all.data(), 4, DType::kF32, 0,
                               Stream::Cpu());
    // Rank 1 (not the root) scatters into a null receive buffer.
    scatter[rank] = comm.Scatter(all.data(), rank == 1 ? nullptr : part.data(), 4, DType::kF32,
                                 0, Stream::Cpu());
    // The root (rank 0) of a scatter passes a null send buffer.
    root_null[rank] = comm.Scatter(rank == 0 ? nullptr : all.data(), part.data(), 4, DType::kF32,
                                   0, Stream::Cpu());
  });
  for (int r = 0; r < 2; ++r)
    for (const absl::Status& s : {gather[r], scatter[r], root_null[r]}) {
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
      EXPECT_TRUE(absl::StrContains(s.message(), "null")) << s;
    }
}

TEST(LocalGroupTest, AllToAllInEveryDType) {
  ExpectEveryRankPasses([](Communicator& comm, const Stream& stream) {
    std::string failure;
    for (DType dtype : kAllDTypes)
      for (size_t count : kCounts) {
        std::string f = AllToAllAndCheck(comm, stream, dtype, count);
        if (failure.empty()) failure = f;
      }
    return failure;
  });
}

TEST(LocalGroupTest, AnAllToAllInPlaceFailsOnEveryRank) {
  auto group = CreateLocalGroup(2);
  ASSERT_TRUE(group.ok()) << group.status();
  std::vector<absl::Status> statuses(2);
  OnEveryRank(2, [&](int rank) {
    // Rank 0 passes one buffer as both; rank 1 two.
    std::vector<float> data(8, 1.0f), other(8);
    statuses[rank] = (*group)[rank]->AllToAll(data.data(), rank == 0 ? data.data() : other.data(),
                                              4, DType::kF32, Stream::Cpu());
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(statuses[r].code(), absl::StatusCode::kInvalidArgument) << statuses[r];
    EXPECT_TRUE(absl::StrContains(statuses[r].message(), "rank 0 of 2")) << statuses[r];
    EXPECT_TRUE(absl::StrContains(statuses[r].message(), "no in-place form")) << statuses[r];
  }
}

TEST(LocalGroupTest, AReduceScatterReceivingIntoTheWrongSliceFailsOnEveryRank) {
  auto group = CreateLocalGroup(2);
  ASSERT_TRUE(group.ok()) << group.status();
  std::vector<absl::Status> statuses(2);
  OnEveryRank(2, [&](int rank) {
    std::vector<float> send(8, 1.0f);
    // Rank 1 receives into slice 0 of its send buffer.
    float* recv = rank == 1 ? send.data() : send.data() + 4 * rank;
    statuses[rank] = (*group)[rank]->ReduceScatter(send.data(), recv, 4, DType::kF32,
                                                   ReduceOp::kSum, Stream::Cpu());
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(statuses[r].code(), absl::StatusCode::kInvalidArgument) << statuses[r];
    EXPECT_TRUE(absl::StrContains(statuses[r].message(), "rank 1 of 2")) << statuses[r];
    EXPECT_TRUE(absl::StrContains(statuses[r].message(), "overlaps")) << statuses[r];
  }
}

TEST(BusFactorTest, IsNcclTestsFactorForEveryCollective) {
  EXPECT_EQ(BusFactor(Collective::kAllReduce, 4), 1.5);
  EXPECT_EQ(BusFactor(Collective::kAllGather, 4), 0.75);
  EXPECT_EQ(BusFactor(Collective::kReduceScatter, 8), 0.875);
  EXPECT_EQ(BusFactor(Collective::kBroadcast, 8), 1.0);
  EXPECT_EQ(BusFactor(Collective::kReduce, 3), 1.0);
  EXPECT_EQ(BusFactor(Collective::kAllToAll, 4), 0.75);
  EXPECT_EQ(BusFactor(Collective::kGather, 4), 0.75);
  EXPECT_EQ(BusFactor(Collective::kScatter, 2), 0.5);
  EXPECT_EQ(BusFactor(Collective::kGather, 1), 0.0);
  // One rank moves nothing between ranks: nccl-tests prints busbw 0.
  EXPECT_EQ(BusFactor(Collective::kAllReduce, 1), 0.0);
  EXPECT_EQ(BusFactor(Collective::kAllGather, 1), 0.0);
  EXPECT_EQ(BusFactor(Collective::kBroadcast, 1), 1.0);
  EXPECT_EQ(CollectiveName(Collective::kReduceScatter), "reducescatter");
}

TEST(LocalGroupTest, MismatchedCollectivesFailOnEveryRank) {
  auto group = CreateLocalGroup(3);
  ASSERT_TRUE(group.ok()) << group.status();
  struct Case {
    AnyCall common;     // ranks 0 and 2
    AnyCall odd;        // rank 1
    const char* named;  // what rank 1's side of the message says
  };
  const AnyCall broadcast{.collective = Collective::kBroadcast, .root = 2};
  const AnyCall gather{.collective = Collective::kAllGather};
  const AnyCall reduce{.collective = Collective::kReduce, .root = 2};
  const AnyCall scatter{.collective = Collective::kReduceScatter};
  for (const Case& c :
       {Case{broadcast, AnyCall{.collective = Collective::kBroadcast, .root = 1}, "root 1"},
        Case{broadcast, AnyCall{.collective = Collective::kBroadcast, .count = 9, .root = 2},
             "count 9"},
        Case{gather, AnyCall{.collective = Collective::kAllGather, .dtype = DType::kI64}, "int64"},
        Case{AnyCall{}, gather, "all-gather (count 8, fp32)"},
        Case{gather, broadcast, "broadcast (count 8, fp32, root 2)"},
        Case{reduce, AnyCall{.collective = Collective::kReduce, .root = 0}, "root 0"},
        Case{scatter, AnyCall{.collective = Collective::kReduceScatter, .count = 3}, "count 3"},
        Case{scatter, reduce, "reduce (count 8, fp32, sum, root 2)"},
        Case{AnyCall{}, scatter, "reduce-scatter (count 8, fp32, sum)"}}) {
    std::vector<absl::Status> statuses(3);
    OnEveryRank(3, [&](int rank) {
      statuses[rank] = RunAny(*(*group)[rank], rank == 1 ? c.odd : c.common);
    });
    for (int r = 0; r < 3; ++r) {
      EXPECT_EQ(statuses[r].code(), absl::StatusCode::kInvalidArgument)
          << c.named << ", rank " << r << ": " << statuses[r];
      EXPECT_TRUE(absl::StrContains(statuses[r].message(), "disagree")) << statuses[r];
      EXPECT_TRUE(absl::StrContains(statuses[r].message(), c.named)) << statuses[r];
    }
    // The group goes on.
    OnEveryRank(3, [&](int rank) { statuses[rank] = RunAny(*(*group)[rank], c.common); });
    for (int r = 0; r < 3; ++r) EXPECT_TRUE(statuses[r].ok()) << c.named << ": " << statuses[r];
  }
}

TEST(LocalGroupTest, ABroadcastRootOutsideTheGroupFailsOnEveryRank) {
  auto group = CreateLocalGroup(2);
  ASSERT_TRUE(group.ok()) << group.status();
  for (int root : {2, -1}) {
    std::vector<absl::Status> statuses(2);
    OnEveryRank(2, [&](int rank) {
      statuses[rank] =
          RunAny(*(*group)[rank], AnyCall{.collective = Collective::kBroadcast, .root = root});
    });
    for (int r = 0; r < 2; ++r) {
      EXPECT_EQ(statuses[r].code(), absl::StatusCode::kInvalidArgument) << statuses[r];
      EXPECT_TRUE(absl::StrContains(statuses[r].message(), absl::StrCat("root ", root, " is not")))
          << statuses[r];
    }
  }
}

TEST(LocalGroupTest, AnAllGatherSendOverlappingTheWrongSliceFailsOnEveryRank) {
  auto group = CreateLocalGroup(2);
  ASSERT_TRUE(group.ok()) << group.status();
  std::vector<absl::Status> statuses(2);
  OnEveryRank(2, [&](int rank) {
    std::vector<float> recv(8);
    // Rank 1 passes slice 0 of its receive buffer as its send buffer.
    const float* send = rank == 1 ? recv.data() : recv.data() + 4 * rank;
    statuses[rank] = (*group)[rank]->AllGather(send, recv.data(), 4, DType::kF32, Stream::Cpu());
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(statuses[r].code(), absl::StatusCode::kInvalidArgument) << statuses[r];
    EXPECT_TRUE(absl::StrContains(statuses[r].message(), "rank 1 of 2")) << statuses[r];
    EXPECT_TRUE(absl::StrContains(statuses[r].message(), "overlaps")) << statuses[r];
  }
}

TEST(LocalGroupTest, ARankThatNeverCallsTimesOutTheOthersAndBreaksTheGroup) {
  // Ranks 1 and 3 of 4 stay away; 0 and 2 wait out a short timeout.
  auto group = CreateLocalGroup(4, CommunicatorOptions{.timeout = absl::Milliseconds(200)});
  ASSERT_TRUE(group.ok()) << group.status();
  std::vector<absl::Status> statuses(4);
  std::vector<std::thread> threads;
  for (int rank : {0, 2})
    threads.emplace_back([&, rank] {
      float value = 1;
      statuses[rank] =
          (*group)[rank]->AllReduce(&value, &value, 1, DType::kF32, ReduceOp::kSum, Stream::Cpu());
    });
  for (auto& t : threads) t.join();
  for (int rank : {0, 2}) {
    EXPECT_EQ(statuses[rank].code(), absl::StatusCode::kDeadlineExceeded) << statuses[rank];
    EXPECT_TRUE(absl::StrContains(statuses[rank].message(),
                                  "all-reduce timed out after 200ms: ranks 1, 3 did not arrive"))
        << statuses[rank];
  }
  // Broken: every later call on every rank fails at once (a call that waited
  // would end in DeadlineExceeded, not FailedPrecondition), whatever it is.
  for (int rank = 0; rank < 4; ++rank) {
    for (Collective collective :
         {Collective::kAllReduce, Collective::kBroadcast, Collective::kAllGather}) {
      absl::Status s = RunAny(*(*group)[rank], AnyCall{.collective = collective});
      EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << "rank " << rank << ": " << s;
      EXPECT_TRUE(absl::StrContains(s.message(), "broken")) << s;
      EXPECT_TRUE(absl::StrContains(s.message(), "ranks 1, 3 did not arrive")) << s;
    }
  }
}

TEST(LocalGroupTest, ATimeoutNamesTheOneMissingRankInEachCollective) {
  const std::pair<Collective, const char*> kCollectives[] = {
      {Collective::kAllReduce, "local all-reduce timed out after 50ms: rank 0 did not arrive"},
      {Collective::kBroadcast, "local broadcast timed out after 50ms: rank 0 did not arrive"},
      {Collective::kAllGather, "local all-gather timed out after 50ms: rank 0 did not arrive"}};
  for (const auto& [collective, message] : kCollectives) {
    auto group = CreateLocalGroup(2, CommunicatorOptions{.timeout = absl::Milliseconds(50)});
    ASSERT_TRUE(group.ok()) << group.status();
    // Rank 1 calls alone; rank 0 never does (on this thread, after it).
    absl::Status lone = RunAny(*(*group)[1], AnyCall{.collective = collective});
    EXPECT_EQ(lone.code(), absl::StatusCode::kDeadlineExceeded) << lone;
    EXPECT_TRUE(absl::StrContains(lone.message(), message)) << lone;
    for (int rank : {0, 1}) {
      absl::Status later = RunAny(*(*group)[rank], AnyCall{.collective = collective});
      EXPECT_EQ(later.code(), absl::StatusCode::kFailedPrecondition) << later;
    }
  }
}

TEST(LocalGroupTest, OneRankNeverWaitsAndATimeoutMustBePositive) {
  auto one = CreateLocalGroup(1, CommunicatorOptions{.timeout = absl::Nanoseconds(1)});
  ASSERT_TRUE(one.ok()) << one.status();
  for (Collective collective :
       {Collective::kAllReduce, Collective::kBroadcast, Collective::kAllGather})
    EXPECT_TRUE(RunAny(*(*one)[0], AnyCall{.collective = collective}).ok());
  for (absl::Duration timeout : {absl::ZeroDuration(), absl::Seconds(-1)}) {
    auto bad = CreateLocalGroup(2, CommunicatorOptions{.timeout = timeout});
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(bad.status().message(), "timeout")) << bad.status();
  }
}

TEST(AllReduceBusFactorTest, IsNcclTestsFactor) {
  EXPECT_EQ(AllReduceBusFactor(1), 0.0);
  EXPECT_EQ(AllReduceBusFactor(2), 1.0);
  EXPECT_EQ(AllReduceBusFactor(4), 1.5);
  EXPECT_EQ(AllReduceBusFactor(8), 1.75);
}

}  // namespace
}  // namespace cnnbench
