// oneDNN ReLU, dropout and the residual add against the reference, in plain
// and blocked layouts; dropout draws the reference's mask.
#include <string>

#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "tests/kernels/onednn_test_util.h"

namespace cnnbench {
namespace {

using onednn_test::CompareOptions;
using onednn_test::CompareWithReference;
using onednn_test::OneDnn;

void ExpectMatch(const std::string& text, const CompareOptions& options = {}) {
  ASSERT_NE(OneDnn(), nullptr);
  absl::StatusOr<OpDesc> desc = ParseOpDesc(text);
  ASSERT_TRUE(desc.ok()) << desc.status();
  absl::Status status = CompareWithReference(*desc, options);
  EXPECT_TRUE(status.ok()) << status;
}

// The output spec of a oneDNN convolution producing (n, c, h, w), blocked on
// AVX2/AVX-512 machines for c a multiple of 8.
TensorSpec BlockedSpec(int64_t n, int64_t c, int64_t hw) {
  ConvDesc conv;
  conv.n = n;
  conv.c = 8;
  conv.k = c;
  conv.h = MakeWindowDim(hw, 3, 1, Padding::kSame).value();
  conv.w = conv.h;
  auto kernel = OneDnn()->Create(conv, DType::kF32, {});
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  return kernel.ok() ? (*kernel)->signature().output : TensorSpec();
}

TEST(OneDnnReluTest, Plain) { ExpectMatch("relu:mb2ic5ih7iw3"); }

TEST(OneDnnReluTest, Blocked) {
  ASSERT_NE(OneDnn(), nullptr);
  CompareOptions o;
  o.onednn_inputs = {BlockedSpec(2, 16, 5)};
  ExpectMatch("relu:mb2ic16ih5iw5", o);
}

TEST(OneDnnDropoutTest, SameMaskAsTheReference) {
  ExpectMatch("dropout:mb4ic33ih1iw1_p0.5");
  CompareOptions o;
  o.forward_calls = 3;  // the mask is keyed by the call count
  ExpectMatch("dropout:mb2ic7ih3iw3_p0.3", o);
}

TEST(OneDnnDropoutTest, BlockedInputUsesTheLogicalMask) {
  ASSERT_NE(OneDnn(), nullptr);
  CompareOptions o;
  o.onednn_inputs = {BlockedSpec(2, 16, 3)};
  o.forward_calls = 2;
  ExpectMatch("dropout:mb2ic16ih3iw3_p0.4", o);
}

TEST(OneDnnDropoutTest, InferenceIsTheIdentity) {
  CompareOptions o;
  o.training = false;
  ExpectMatch("dropout:mb2ic10ih2iw2_p0.5", o);
}

TEST(OneDnnAddTest, Plain) { ExpectMatch("add:mb2ic3ih5iw7"); }

TEST(OneDnnAddTest, InputsInDifferentLayouts) {
  ASSERT_NE(OneDnn(), nullptr);
  const TensorSpec blocked = BlockedSpec(2, 16, 4);
  CompareOptions o;
  o.onednn_inputs = {blocked, TensorSpec::Plain(DType::kF32, Shape{2, 16, 4, 4})};
  ExpectMatch("add:mb2ic16ih4iw4", o);
  o.onednn_inputs = {TensorSpec::Plain(DType::kF32, Shape{2, 16, 4, 4}), blocked};
  ExpectMatch("add:mb2ic16ih4iw4", o);
}

}  // namespace
}  // namespace cnnbench
