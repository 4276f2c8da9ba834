// ShareConvChoices (bench/suite/suite.h): the ranks of a job end with rank 0's
// convolution choices, replacing their own for the same keys, so every
// rank runs the algorithms rank 0 timed. Two ranks of the `local` group,
// each with a cache of its own, stand for an MPI job's processes.
#include <memory>
#include <thread>
#include <vector>

#include "bench/suite/suite.h"
#include "gtest/gtest.h"
#include "kernels/collectives/local.h"
#include "kernels/onednn/conv_choices.h"

namespace cnnbench::bench {
namespace {

TEST(ShareConvChoicesTest, EveryRankEndsWithRankZerosChoices) {
  auto group = CreateLocalGroup(2);
  ASSERT_TRUE(group.ok()) << group.status();
  ConvChoices rank0, rank1;
  rank0.Set("conv:a fp32 fwd threads:1", {"winograd", 1.0, 2.0});
  rank0.Set("conv:b fp32 bwd_data threads:1", {"direct", 3.0, 3.0});
  rank1.Set("conv:a fp32 fwd threads:1", {"direct", 2.5, 2.5});  // its own timing disagreed
  rank1.Set("conv:c fp32 fwd threads:1", {"direct", 4.0, 4.0});  // a key rank 0 lacks: kept
  absl::Status status[2];
  std::thread other([&] { status[1] = ShareConvChoices(*(*group)[1], rank1); });
  status[0] = ShareConvChoices(*(*group)[0], rank0);
  other.join();
  ASSERT_TRUE(status[0].ok()) << status[0];
  ASSERT_TRUE(status[1].ok()) << status[1];
  ASSERT_EQ(rank1.size(), 3u);
  EXPECT_EQ(rank1.Find("conv:a fp32 fwd threads:1")->algorithm, "winograd");
  EXPECT_EQ(rank1.Find("conv:b fp32 bwd_data threads:1")->algorithm, "direct");
  EXPECT_EQ(rank1.Find("conv:c fp32 fwd threads:1")->algorithm, "direct");
  // Rank 0 keeps its own.
  EXPECT_EQ(rank0.size(), 2u);
  EXPECT_EQ(rank0.Find("conv:a fp32 fwd threads:1")->algorithm, "winograd");
}

TEST(ShareConvChoicesTest, NoChoicesIsNothingToMerge) {
  auto group = CreateLocalGroup(2);
  ASSERT_TRUE(group.ok()) << group.status();
  ConvChoices rank0, rank1;
  absl::Status status[2];
  std::thread other([&] { status[1] = ShareConvChoices(*(*group)[1], rank1); });
  status[0] = ShareConvChoices(*(*group)[0], rank0);
  other.join();
  EXPECT_TRUE(status[0].ok() && status[1].ok()) << status[0] << " " << status[1];
  EXPECT_EQ(rank1.size(), 0u);
}

}  // namespace
}  // namespace cnnbench::bench
