// oneDNN across-channel LRN against the reference, which follows
// TensorFlow's definition: checks the mapping onto oneDNN's parameters
// (local_size = 2r+1, alpha scaled by local_size) in plain and blocked
// layouts, training and inference.
#include <string>

#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "tests/kernels/onednn_test_util.h"

namespace cnnbench {
namespace {

using onednn_test::CompareOptions;
using onednn_test::CompareWithReference;
using onednn_test::OneDnn;

// Powers: a tolerance.
CompareOptions Options() {
  CompareOptions o;
  o.integers = false;
  o.low = -2;
  o.high = 2;
  o.forward_rtol = o.backward_rtol = 1e-5;
  o.forward_atol = o.backward_atol = 1e-6;
  return o;
}

void ExpectMatch(const std::string& text, const CompareOptions& options) {
  ASSERT_NE(OneDnn(), nullptr);
  absl::StatusOr<OpDesc> desc = ParseOpDesc(text);
  ASSERT_TRUE(desc.ok()) << desc.status();
  absl::Status status = CompareWithReference(*desc, options);
  EXPECT_TRUE(status.ok()) << status;
}

// A large alpha, so that the normalisation term matters.
TEST(OneDnnLrnTest, StrongNormalisation) {
  ExpectMatch("lrn:mb2ic7ih3iw5_r2k2a0.3b0.75", Options());
}

// AlexNet's / GoogLeNet's settings.
TEST(OneDnnLrnTest, AlexNetSettings) {
  ExpectMatch("lrn:mb2ic16ih5iw5_r5k1a0.0001b0.75", Options());
}
TEST(OneDnnLrnTest, RadiusOne) { ExpectMatch("lrn:mb1ic5ih4iw4_r1k1a0.5b0.5", Options()); }

TEST(OneDnnLrnTest, Inference) {
  CompareOptions o = Options();
  o.training = false;
  o.backward = false;
  ExpectMatch("lrn:mb2ic7ih3iw5_r2k2a0.3b0.75", o);
}

TEST(OneDnnLrnTest, Blocked) {
  ASSERT_NE(OneDnn(), nullptr);
  absl::StatusOr<ConvDesc> conv =
      ConvDesc::Parse("conv:mb2_ic8oc16_ih5oh5kh3sh1ph1_iw5ow5kw3sw1pw1");
  ASSERT_TRUE(conv.ok()) << conv.status();
  absl::StatusOr<std::unique_ptr<Kernel>> producer = OneDnn()->Create(*conv, DType::kF32, {});
  ASSERT_TRUE(producer.ok()) << producer.status();
  CompareOptions o = Options();
  o.onednn_inputs = {(*producer)->signature().output};
  ExpectMatch("lrn:mb2ic16ih5iw5_r2k2a0.3b0.75", o);
}

}  // namespace
}  // namespace cnnbench
