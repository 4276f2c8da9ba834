// oneDNN channel concatenation against the reference: plain inputs, blocked
// inputs on block boundaries, and blocked inputs whose slices are not (the
// output then falls back to plain); integer data, exact.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "tests/kernels/onednn_test_util.h"

namespace cnnbench {
namespace {

using onednn_test::CompareOptions;
using onednn_test::CompareWithReference;
using onednn_test::OneDnn;

TensorSpec ConvOutput(int64_t n, int64_t k, int64_t hw) {
  ConvDesc conv;
  conv.n = n;
  conv.c = 8;
  conv.k = k;
  conv.h = MakeWindowDim(hw, 1, 1, Padding::kValid).value();
  conv.w = conv.h;
  auto kernel = OneDnn()->Create(conv, DType::kF32, {});
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  return kernel.ok() ? (*kernel)->signature().output : TensorSpec();
}

void ExpectMatch(const std::string& text, const CompareOptions& options = {}) {
  ASSERT_NE(OneDnn(), nullptr);
  absl::StatusOr<OpDesc> desc = ParseOpDesc(text);
  ASSERT_TRUE(desc.ok()) << desc.status();
  absl::Status status = CompareWithReference(*desc, options);
  EXPECT_TRUE(status.ok()) << status;
}

TEST(OneDnnConcatTest, Plain) { ExpectMatch("concat:mb2ih3iw5_ic3:1:4"); }

// The channel pad: plain, and from a blocked producer (reordered to plain).
TEST(OneDnnChannelPadTest, MatchesTheReference) {
  ExpectMatch("chpad:mb2ic3ih4iw5_b2a1");
  ExpectMatch("chpad:mb3ic16ih8iw8_b8a8");
  CompareOptions o;
  o.onednn_inputs = {ConvOutput(2, 16, 4)};
  ExpectMatch("chpad:mb2ic16ih4iw4_b8a8", o);
}

TEST(OneDnnConcatTest, BlockedOnBlockBoundaries) {
  ASSERT_NE(OneDnn(), nullptr);
  CompareOptions o;
  o.onednn_inputs = {ConvOutput(2, 16, 4), ConvOutput(2, 8, 4), ConvOutput(2, 24, 4)};
  ExpectMatch("concat:mb2ih4iw4_ic16:8:24", o);
}

TEST(OneDnnConcatTest, BlockedOffBlockBoundaries) {
  ASSERT_NE(OneDnn(), nullptr);
  CompareOptions o;
  o.onednn_inputs = {ConvOutput(2, 3, 4), ConvOutput(2, 13, 4)};
  ExpectMatch("concat:mb2ih4iw4_ic3:13", o);
}

TEST(OneDnnConcatTest, MixedLayouts) {
  ASSERT_NE(OneDnn(), nullptr);
  CompareOptions o;
  o.onednn_inputs = {ConvOutput(2, 8, 3), TensorSpec::Plain(DType::kF32, Shape{2, 5, 3, 3})};
  ExpectMatch("concat:mb2ih3iw3_ic8:5", o);
}

}  // namespace
}  // namespace cnnbench
