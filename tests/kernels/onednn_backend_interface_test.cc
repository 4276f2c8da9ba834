// The parts of the Backend interface every backend shares, checked on both
// CPU backends: the validating Create (precision against storage type, what
// a backend refuses), device memory operations (Fill, Copy, AddN), Upload
// and Download, the stream, and the optimizer's loss scale, overflow flag
// and step counter.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "tests/kernels/onednn_test_util.h"

namespace cnnbench {
namespace {

using onednn_test::OneDnn;
using onednn_test::Reference;

std::vector<Backend*> Backends() { return {Reference(), OneDnn()}; }

const OpDesc kRelu = ReluDesc{{2, 3, 4, 4}};

TEST(BackendInterfaceTest, PrecisionMustMatchTheStorageType) {
  for (Backend* backend : Backends()) {
    ASSERT_NE(backend, nullptr);
    KernelOptions options;
    options.precision = Precision::kBf16;
    options.dtype = DType::kF32;
    auto kernel = backend->Create(kRelu, options, {});
    ASSERT_FALSE(kernel.ok()) << backend->name();
    EXPECT_EQ(kernel.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(kernel.status().message().find("bf16"), std::string::npos) << kernel.status();
    EXPECT_NE(kernel.status().message().find("relu:"), std::string::npos) << kernel.status();
  }
}

TEST(BackendInterfaceTest, BadDescriptorIsNamedByEveryBackend) {
  for (Backend* backend : Backends()) {
    auto kernel = backend->Create(ReluDesc{{0, 3, 4, 4}}, DType::kF32, {});
    ASSERT_FALSE(kernel.ok());
    EXPECT_EQ(kernel.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(kernel.status().message().find("bad descriptor"), std::string::npos)
        << kernel.status();
  }
}

TEST(BackendInterfaceTest, CpuBackendsRefuseTf32AndFp16WithAReason) {
  for (Backend* backend : Backends()) {
    for (Precision p : {Precision::kTf32, Precision::kFp16}) {
      auto kernel = backend->Create(kRelu, KernelOptions::ForPrecision(p), {});
      ASSERT_FALSE(kernel.ok()) << backend->name() << " " << PrecisionName(p);
      EXPECT_EQ(kernel.status().code(), absl::StatusCode::kUnimplemented);
      EXPECT_EQ(kernel.status().message().rfind("unsupported: ", 0), 0u) << kernel.status();
    }
  }
}

TEST(BackendInterfaceTest, Fp32PrecisionRunsAndTf32IsDistinguishable) {
  EXPECT_NE(KernelOptions::ForPrecision(Precision::kTf32).precision,
            KernelOptions::ForPrecision(Precision::kFp32).precision);
  EXPECT_EQ(KernelOptions::ForPrecision(Precision::kTf32).dtype, DType::kF32);
  for (Backend* backend : Backends()) {
    auto kernel = backend->Create(kRelu, KernelOptions::ForPrecision(Precision::kFp32), {});
    EXPECT_TRUE(kernel.ok()) << backend->name() << ": " << kernel.status();
  }
}

TEST(BackendInterfaceTest, FillCopyAndAddN) {
  for (Backend* backend : Backends()) {
    SCOPED_TRACE(std::string(backend->name()));
    EXPECT_TRUE(backend->stream().device() == backend->device());
    EXPECT_EQ(backend->alignment() % 64, 0u);
    std::vector<float> a = {1, 2, 3, 4, 5}, b = {10, 20, 30, 40, 50}, c = {100, 0, 0, 0, -1};
    std::vector<float> out(5, -7);
    const TensorSpec spec = TensorSpec::Plain(DType::kF32, Shape{5});
    ASSERT_TRUE(backend->AddN(spec, {a.data(), b.data(), c.data()}, out.data()).ok());
    EXPECT_EQ(out, (std::vector<float>{111, 22, 33, 44, 54}));
    // In place into the first input.
    ASSERT_TRUE(backend->AddN(spec, {a.data(), b.data()}, a.data()).ok());
    EXPECT_EQ(a, (std::vector<float>{11, 22, 33, 44, 55}));
    ASSERT_TRUE(backend->Copy(out.data(), b.data(), 2 * sizeof(float)).ok());
    EXPECT_EQ(out, (std::vector<float>{10, 20, 33, 44, 54}));
    ASSERT_TRUE(backend->Fill(out.data() + 1, 0, 3 * sizeof(float)).ok());
    EXPECT_EQ(out, (std::vector<float>{10, 0, 0, 0, 54}));
    ASSERT_TRUE(backend->stream().Synchronize().ok());
    EXPECT_FALSE(backend->AddN(spec, {}, out.data()).ok());
    EXPECT_FALSE(backend->AddN(spec, {a.data(), nullptr}, out.data()).ok());
  }
}

TEST(BackendInterfaceTest, AddNOfBf16SumsInFloat) {
  const TensorSpec spec = TensorSpec::Plain(DType::kBF16, Shape{3});
  auto bf = [](float x) { return FloatToBFloat16(x).bits; };
  // 256 + 1 + 1: rounding after each add would give 256 (1 is below bf16's
  // step at 256); summing in float and rounding once gives 258.
  std::vector<uint16_t> a = {bf(256), bf(1), bf(-2)}, b = {bf(1), bf(2), bf(2)},
                        c = {bf(1), bf(3), bf(0.5f)}, out(3);
  ASSERT_TRUE(Reference()->AddN(spec, {a.data(), b.data(), c.data()}, out.data()).ok());
  EXPECT_EQ(BFloat16ToFloat(BFloat16{out[0]}), 258.0f);
  EXPECT_EQ(BFloat16ToFloat(BFloat16{out[1]}), 6.0f);
  EXPECT_EQ(BFloat16ToFloat(BFloat16{out[2]}), 0.5f);
}

TEST(BackendInterfaceTest, UploadAndDownloadRoundTripThroughABlockedLayout) {
  // A convolution's weights in oneDNN's preferred (blocked) layout.
  auto conv = OneDnn()->Create(*ParseOpDesc("conv:mb2_ic16oc32_ih8oh8kh3sh1ph1_iw8ow8kw3sw1pw1"),
                               DType::kF32, {});
  ASSERT_TRUE(conv.ok()) << conv.status();
  const TensorSpec& weights = (*conv)->signature().params[0];
  const TensorSpec plain = TensorSpec::Plain(DType::kF32, weights.shape);
  std::vector<float> host(weights.shape.num_elements()), back(host.size(), 0);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i % 97) - 40;
  std::vector<char> device(weights.bytes);
  ASSERT_TRUE(OneDnn()->Upload(plain, host.data(), weights, device.data()).ok());
  ASSERT_TRUE(OneDnn()->Download(weights, device.data(), plain, back.data()).ok());
  EXPECT_EQ(back, host);
  // The host side must be plain.
  EXPECT_FALSE(OneDnn()->Upload(weights, device.data(), weights, device.data()).ok());
}

struct UpdateCase {
  std::vector<float> w = {1, 2, 3, 4}, g = {0.5f, -1, 2, 8}, v = {0, 0, 0, 0};
};

TEST(BackendInterfaceTest, OptimizerDividesByTheLossScaleAndCountsSteps) {
  SgdDesc desc;
  desc.count = 4;
  desc.learning_rate = 0.5;
  desc.momentum = 0.0;
  for (Backend* backend : Backends()) {
    SCOPED_TRACE(std::string(backend->name()));
    auto sgd = backend->CreateOptimizer(desc);
    ASSERT_TRUE(sgd.ok());
    UpdateCase scaled, plain;
    for (float& x : scaled.g) x *= 1024;  // what a loss scaled by 1024 produces
    float scale = 1024;
    int32_t overflow = -1;
    uint64_t step = 41;
    UpdateArgs args{scaled.w.data(), scaled.g.data(), scaled.v.data(), &scale, &overflow, &step};
    ASSERT_TRUE((*sgd)->Update(args).ok());
    ASSERT_TRUE((*sgd)->Update(plain.w.data(), plain.g.data(), plain.v.data()).ok());
    EXPECT_EQ(scaled.w, plain.w);
    EXPECT_EQ(plain.w, (std::vector<float>{0.75f, 2.5f, 2, 0}));
    EXPECT_EQ(overflow, 0);
    EXPECT_EQ(step, 42u);
  }
}

TEST(BackendInterfaceTest, OptimizerSkipsTheUpdateOnANonFiniteGradient) {
  SgdDesc desc;
  desc.count = 4;
  desc.learning_rate = 0.5;
  desc.momentum = 0.9;
  for (Backend* backend : Backends()) {
    SCOPED_TRACE(std::string(backend->name()));
    auto sgd = backend->CreateOptimizer(desc);
    ASSERT_TRUE(sgd.ok());
    for (float bad : {std::numeric_limits<float>::infinity(), std::nanf("")}) {
      UpdateCase c;
      c.g[2] = bad;
      const std::vector<float> w = c.w, v = c.v;
      int32_t overflow = 0;
      uint64_t step = 0;
      UpdateArgs args{c.w.data(), c.g.data(), c.v.data(), nullptr, &overflow, &step};
      ASSERT_TRUE((*sgd)->Update(args).ok());
      EXPECT_EQ(overflow, 1);
      EXPECT_EQ(c.w, w);  // untouched
      EXPECT_EQ(c.v, v);
      EXPECT_EQ(step, 1u);  // a skipped step still counts
    }
    float zero = 0;
    UpdateCase c;
    UpdateArgs args{c.w.data(), c.g.data(), c.v.data(), &zero, nullptr, nullptr};
    EXPECT_FALSE((*sgd)->Update(args).ok());
  }
}

}  // namespace
}  // namespace cnnbench
