// Reference pooling: exact max / avg / avg-exclude-pad forward on a small
// SAME stride-2 case, the max gradient's routing, and backward against
// finite differences (max on distinct values, so the argmax is stable).
#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "kernels/reference/reference_backend.h"
#include "tests/kernels/gradient_check.h"

namespace cnnbench {
namespace {

using kernel_test::CheckGradients;
using kernel_test::CreateKernelUnderTest;
using kernel_test::FillDefaults;
using kernel_test::FromDoubles;
using kernel_test::KernelUnderTest;
using kernel_test::ToDoubles;

std::vector<double> Iota(int count) {
  std::vector<double> v(count);
  for (int i = 0; i < count; ++i) v[i] = i + 1;
  return v;
}

KernelUnderTest Make(const std::string& text, DType dtype) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  absl::StatusOr<PoolDesc> desc = PoolDesc::Parse(text);
  EXPECT_TRUE(desc.ok()) << desc.status();
  absl::StatusOr<KernelUnderTest> k = CreateKernelUnderTest(*backend, *desc, dtype);
  EXPECT_TRUE(k.ok()) << k.status();
  return std::move(k).value();
}

std::vector<double> PoolForward(const std::string& text, DType dtype,
                                const std::vector<double>& x) {
  KernelUnderTest k = Make(text, dtype);
  const KernelSignature& sig = k.kernel->signature();
  EXPECT_TRUE(FromDoubles(sig.inputs[0], k.buffers.x[0].data(), x).ok());
  absl::Status status = k.kernel->Forward(k.buffers.Args());
  EXPECT_TRUE(status.ok()) << status;
  return ToDoubles(sig.output, k.buffers.y.data());
}

// x = 1..16 (4x4), 3x3 windows, SAME stride 2: pads 0 before and 1 after,
// so windows hold 9, 6, 6 and 4 real elements.
constexpr char kSame[] = "_mb1ic1_ih4oh2kh3sh2pt0pb1_iw4ow2kw3sw2pl0pr1";

class PoolForwardTest : public ::testing::TestWithParam<DType> {};

TEST_P(PoolForwardTest, Max) {
  EXPECT_EQ(PoolForward(std::string("pool:max") + kSame, GetParam(), Iota(16)),
            (std::vector<double>{11, 12, 15, 16}));
}

TEST_P(PoolForwardTest, AvgCountsPaddedElements) {
  EXPECT_EQ(PoolForward(std::string("pool:avg") + kSame, GetParam(), Iota(16)),
            (std::vector<double>{54.0 / 9, 45.0 / 9, 72.0 / 9, 54.0 / 9}));
}

TEST_P(PoolForwardTest, AvgExcludePadDividesByRealElements) {
  EXPECT_EQ(PoolForward(std::string("pool:avgx") + kSame, GetParam(), Iota(16)),
            (std::vector<double>{54.0 / 9, 45.0 / 6, 72.0 / 6, 54.0 / 4}));
}

TEST_P(PoolForwardTest, MaxIgnoresPaddingWithNegativeInputs) {
  // Padding must not act as a 0 in max pooling.
  std::vector<double> x = Iota(16);
  for (double& v : x) v = -v;
  EXPECT_EQ(PoolForward("pool:max_mb1ic1_ih4oh4kh3sh1ph1_iw4ow4kw3sw1pw1", GetParam(), x)[0], -1.0);
}

TEST_P(PoolForwardTest, ChannelsAndBatchArePlanes) {
  // 2 images x 2 channels of 2x2, global 2x2 max.
  EXPECT_EQ(PoolForward("pool:max_mb2ic2_ih2oh1kh2sh2ph0_iw2ow1kw2sw2pw0", GetParam(),
                        {1, 5, 2, 3, 9, 8, 7, 6, -4, -3, -2, -1, 0, 0, 0, 0}),
            (std::vector<double>{5, 9, -1, 0}));
}

INSTANTIATE_TEST_SUITE_P(Types, PoolForwardTest, ::testing::Values(DType::kF32, DType::kF64));

TEST(PoolBackwardTest, MaxRoutesToTheFirstMaximum) {
  // All equal: each window's gradient goes to its first element only; the
  // 2x2 stride-1 windows overlap, so shared first elements add up.
  KernelUnderTest k = Make("pool:max_mb1ic1_ih3oh2kh2sh1ph0_iw3ow2kw2sw1pw0", DType::kF64);
  const KernelSignature& sig = k.kernel->signature();
  ASSERT_TRUE(FromDoubles(sig.inputs[0], k.buffers.x[0].data(), std::vector<double>(9, 1)).ok());
  ASSERT_TRUE(FromDoubles(sig.output, k.buffers.dy.data(), {1, 10, 100, 1000}).ok());
  KernelArgs args = k.buffers.Args();
  ASSERT_TRUE(k.kernel->Forward(args).ok());
  ASSERT_TRUE(k.kernel->BackwardData(args).ok());
  EXPECT_EQ(ToDoubles(sig.inputs[0], k.buffers.dx[0].data()),
            (std::vector<double>{1, 10, 0, 100, 1000, 0, 0, 0, 0}));
}

TEST(PoolBackwardTest, AvgSpreadsOverTheWindow) {
  // avgx on the SAME case: window (1,1) holds x[2..3][2..3] and divides by 4.
  KernelUnderTest k = Make(std::string("pool:avgx") + kSame, DType::kF64);
  const KernelSignature& sig = k.kernel->signature();
  ASSERT_TRUE(FromDoubles(sig.inputs[0], k.buffers.x[0].data(), Iota(16)).ok());
  ASSERT_TRUE(FromDoubles(sig.output, k.buffers.dy.data(), {0, 0, 0, 4}).ok());
  KernelArgs args = k.buffers.Args();
  ASSERT_TRUE(k.kernel->Forward(args).ok());
  ASSERT_TRUE(k.kernel->BackwardData(args).ok());
  EXPECT_EQ(ToDoubles(sig.inputs[0], k.buffers.dx[0].data()),
            (std::vector<double>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 1}));
}

class PoolGradientTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PoolGradientTest, MatchesFiniteDifferences) {
  KernelUnderTest k = Make(GetParam(), DType::kF64);
  const KernelSignature& sig = k.kernel->signature();
  FillDefaults(k.buffers, 5);
  if (GetParam().find("pool:max") == 0) {
    // Distinct values 0.01 apart (far more than the step): a stable argmax.
    std::vector<double> x(sig.inputs[0].shape.num_elements());
    std::iota(x.begin(), x.end(), 0.0);
    std::shuffle(x.begin(), x.end(), std::mt19937_64(11));
    for (double& v : x) v = v * 0.01 - 1.0;
    ASSERT_TRUE(FromDoubles(sig.inputs[0], k.buffers.x[0].data(), x).ok());
  }
  absl::Status status = CheckGradients(*k.kernel, k.buffers);
  EXPECT_TRUE(status.ok()) << GetParam() << ": " << status;
}

std::vector<std::string> GradientShapes() {
  std::vector<std::string> out;
  for (const char* algorithm : {"max", "avg", "avgx"})
    for (const char* shape :
         {"_mb2ic3_ih5oh3kh3sh2ph1_iw5ow3kw3sw2pw1",        // SAME odd
          "_mb1ic2_ih8oh4kh3sh2pt0pb1_iw7ow4kw3sw2pl1pr1",  // asymmetric SAME
          "_mb2ic1_ih7oh3kh3sh2ph0_iw9ow3kw3sw3pw0",        // VALID, stride 3
          "_mb1ic2_ih6oh5kh2sh1ph0_iw5ow3kw3sw1pw0",        // overlapping stride 1
          "_mb1ic1_ih3oh2kh3sh2ph1_iw4ow2kw2sw2pl0pr0"})    // odd, windows at edges
      out.push_back(std::string("pool:") + algorithm + shape);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Shapes, PoolGradientTest, ::testing::ValuesIn(GradientShapes()));

TEST(PoolSignatureTest, MaxSavesArgmaxAndNeedsNoInputs) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  absl::StatusOr<PoolDesc> max = PoolDesc::Parse(std::string("pool:max") + kSame);
  absl::StatusOr<PoolDesc> avg = PoolDesc::Parse(std::string("pool:avg") + kSame);
  ASSERT_TRUE(max.ok() && avg.ok());
  absl::StatusOr<std::unique_ptr<Kernel>> k = backend->Create(*max, DType::kF32, {});
  ASSERT_TRUE(k.ok());
  EXPECT_GE((*k)->signature().saved_bytes, 4u);
  EXPECT_FALSE((*k)->signature().backward_reads_inputs);
  EXPECT_FALSE((*k)->signature().backward_reads_output);
  k = backend->Create(*avg, DType::kF32, {});
  ASSERT_TRUE(k.ok());
  EXPECT_EQ((*k)->signature().saved_bytes, 0u);
  EXPECT_TRUE((*k)->signature().params.empty());
}

}  // namespace
}  // namespace cnnbench
