// oneDNN pooling against the reference: max, average with padded elements
// counted and average over in-bounds elements only, with SAME (asymmetric)
// and VALID windows, strides, odd sizes, blocked inputs and inference.
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "tests/kernels/onednn_test_util.h"

namespace cnnbench {
namespace {

using onednn_test::CompareOptions;
using onednn_test::CompareWithReference;
using onednn_test::OneDnn;

std::string PoolString(PoolAlgorithm algorithm, int64_t n, int64_t c, int64_t ih, int64_t iw,
                       int64_t k, int64_t s, Padding padding) {
  PoolDesc d;
  d.algorithm = algorithm;
  d.n = n;
  d.c = c;
  d.h = MakeWindowDim(ih, k, s, padding).value();
  d.w = MakeWindowDim(iw, k, s, padding).value();
  return d.ToString();
}

std::vector<std::string> Cases() {
  std::vector<std::string> cases;
  for (PoolAlgorithm a :
       {PoolAlgorithm::kMax, PoolAlgorithm::kAvg, PoolAlgorithm::kAvgExcludePad}) {
    cases.push_back(PoolString(a, 2, 5, 8, 8, 3, 2, Padding::kSame));   // pads 0 before, 1 after
    cases.push_back(PoolString(a, 2, 3, 9, 7, 3, 2, Padding::kValid));  // odd sizes
    cases.push_back(PoolString(a, 1, 16, 7, 7, 2, 2, Padding::kSame));  // 2x2/2 on odd input
    cases.push_back(PoolString(a, 2, 8, 6, 6, 3, 1, Padding::kSame));   // overlapping, stride 1
  }
  return cases;
}

// Max pooling gets distinct real inputs (ties would make the argmax, and so
// dx, depend on the tie rule); averages divide, so a tolerance either way.
CompareOptions OptionsFor(const OpDesc& desc) {
  CompareOptions o;
  o.integers = false;
  o.low = -1;
  o.high = 1;
  o.forward_rtol = o.backward_rtol = 1e-6;
  o.forward_atol = o.backward_atol = 1e-7;
  return o;
}

class OneDnnPoolTest : public ::testing::TestWithParam<std::string> {};

TEST_P(OneDnnPoolTest, MatchesReference) {
  ASSERT_NE(OneDnn(), nullptr);
  absl::StatusOr<OpDesc> desc = ParseOpDesc(GetParam());
  ASSERT_TRUE(desc.ok()) << desc.status();
  absl::Status status = CompareWithReference(*desc, OptionsFor(*desc));
  EXPECT_TRUE(status.ok()) << status;
}

TEST_P(OneDnnPoolTest, InferenceMatchesReference) {
  ASSERT_NE(OneDnn(), nullptr);
  absl::StatusOr<OpDesc> desc = ParseOpDesc(GetParam());
  ASSERT_TRUE(desc.ok()) << desc.status();
  CompareOptions o = OptionsFor(*desc);
  o.training = false;
  o.backward = false;
  absl::Status status = CompareWithReference(*desc, o);
  EXPECT_TRUE(status.ok()) << status;
}

INSTANTIATE_TEST_SUITE_P(Shapes, OneDnnPoolTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return absl::StrReplaceAll(info.param, {{":", "_"}});
                         });

TEST(OneDnnPoolLayoutTest, BlockedInputFromAConvolution) {
  ASSERT_NE(OneDnn(), nullptr);
  absl::StatusOr<ConvDesc> conv =
      ConvDesc::Parse("conv:mb2_ic8oc16_ih9oh9kh3sh1ph1_iw9ow9kw3sw1pw1");
  ASSERT_TRUE(conv.ok()) << conv.status();
  absl::StatusOr<std::unique_ptr<Kernel>> producer = OneDnn()->Create(*conv, DType::kF32, {});
  ASSERT_TRUE(producer.ok()) << producer.status();
  for (PoolAlgorithm a : {PoolAlgorithm::kMax, PoolAlgorithm::kAvgExcludePad}) {
    absl::StatusOr<OpDesc> pool = ParseOpDesc(PoolString(a, 2, 16, 9, 9, 3, 2, Padding::kSame));
    ASSERT_TRUE(pool.ok()) << pool.status();
    CompareOptions o = OptionsFor(*pool);
    o.onednn_inputs = {(*producer)->signature().output};
    absl::Status status = CompareWithReference(*pool, o);
    EXPECT_TRUE(status.ok()) << status;
  }
}

}  // namespace
}  // namespace cnnbench
