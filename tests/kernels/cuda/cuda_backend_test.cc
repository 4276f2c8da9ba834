// The cuda backend's own parts: creation (a clear error where there is no
// GPU or no CUDA), and on a GPU its memory operations (fills, copies,
// gradient sums, NCHW/NHWC and type reorders, uploads and downloads), the
// fused SGD update against the reference's, and ReLU against the reference.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "kernels/op_traits.h"
#include "tests/kernels/cuda/cuda_test_util.h"

namespace cnnbench {
namespace {

using cuda_test::Cuda;

#define SKIP_WITHOUT_GPU() \
  if (Cuda() == nullptr) GTEST_SKIP() << cuda_test::NoGpuReason()

TEST(CudaBackendTest, WithoutAGpuCreationIsAClearError) {
  if (CudaDeviceCount() > 0) GTEST_SKIP() << "a GPU is present";
  auto backend = CreateBackend("cuda", Device::Cuda(0));
  ASSERT_FALSE(backend.ok());
  const std::string message(backend.status().message());
  EXPECT_NE(message.find("cuda:0"), std::string::npos) << message;
}

TEST(CudaBackendTest, TheCpuBackendsAreNotOfferedForAGpu) {
  auto backend = CreateBackend("onednn", Device::Cuda(0));
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().message().rfind("unsupported: ", 0), 0u) << backend.status();
  auto cuda_on_cpu = CreateBackend("cuda", Device::Cpu());
  ASSERT_FALSE(cuda_on_cpu.ok());
  EXPECT_EQ(cuda_on_cpu.status().message().rfind("unsupported: ", 0), 0u) << cuda_on_cpu.status();
}

TEST(CudaBackendTest, FillCopyAddNRoundTrip) {
  SKIP_WITHOUT_GPU();
  Backend* gpu = Cuda();
  EXPECT_EQ(gpu->alignment(), 256u);
  EXPECT_TRUE(gpu->device() == Device::Cuda(0));
  const TensorSpec spec = TensorSpec::Plain(DType::kF32, Shape{1000});
  std::vector<Buffer> b;
  for (int i = 0; i < 3; ++i) b.push_back(*Buffer::Allocate(Device::Cuda(0), spec.bytes));
  std::vector<float> h(1000);
  for (int i = 0; i < 1000; ++i) h[i] = static_cast<float>(i);
  ASSERT_TRUE(gpu->Upload(spec, h.data(), spec, b[0].data()).ok());
  ASSERT_TRUE(gpu->Copy(b[1].data(), b[0].data(), spec.bytes).ok());
  ASSERT_TRUE(gpu->AddN(spec, {b[0].data(), b[1].data(), b[1].data()}, b[2].data()).ok());
  ASSERT_TRUE(gpu->Fill(b[2].data(), 0, 4 * sizeof(float)).ok());
  std::vector<float> out(1000, -1);
  ASSERT_TRUE(gpu->Download(spec, b[2].data(), spec, out.data()).ok());
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(out[i], i < 4 ? 0.0f : 3.0f * i) << i;
  // More sources than one launch takes.
  std::vector<const void*> many(40, b[0].data());
  ASSERT_TRUE(gpu->AddN(spec, many, b[2].data()).ok());
  ASSERT_TRUE(gpu->Download(spec, b[2].data(), spec, out.data()).ok());
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(out[i], 40.0f * i) << i;
}

TEST(CudaBackendTest, ReordersBetweenNchwNhwcAndTypes) {
  SKIP_WITHOUT_GPU();
  Backend* gpu = Cuda();
  const Shape shape{2, 3, 4, 5};
  const TensorSpec nchw = TensorSpec::Plain(DType::kF32, shape);
  TensorSpec nhwc_bf16 = TensorSpec::Plain(DType::kBF16, shape);
  nhwc_bf16.layout = Layout::kNHWC;
  std::vector<float> h(shape.num_elements());
  for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>(i) - 60;  // exact in bf16
  auto device = Buffer::Allocate(Device::Cuda(0), nhwc_bf16.bytes);
  ASSERT_TRUE(device.ok());
  ASSERT_TRUE(gpu->Upload(nchw, h.data(), nhwc_bf16, device->data()).ok());
  // Read the raw NHWC bf16 bytes: element (n,c,y,x) sits at ((n*4+y)*5+x)*3+c.
  std::vector<uint16_t> raw(h.size());
  ASSERT_TRUE(
      CopyBytes(raw.data(), Device::Cpu(), device->data(), Device::Cuda(0), nhwc_bf16.bytes).ok());
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 5; ++x)
          ASSERT_EQ(BFloat16ToFloat(BFloat16{raw[((n * 4 + y) * 5 + x) * 3 + c]}),
                    h[((n * 3 + c) * 4 + y) * 5 + x]);
  std::vector<float> back(h.size(), 0);
  ASSERT_TRUE(gpu->Download(nhwc_bf16, device->data(), nchw, back.data()).ok());
  EXPECT_EQ(back, h);
}

TEST(CudaBackendTest, SgdMatchesTheReferenceAndHonoursScaleOverflowAndStep) {
  SKIP_WITHOUT_GPU();
  SgdDesc desc;
  desc.count = 1000;
  desc.learning_rate = 0.1;
  desc.momentum = 0.9;
  desc.weight_decay = 1e-4;
  auto ours = Cuda()->CreateOptimizer(desc);
  auto truth = cuda_test::Reference()->CreateOptimizer(desc);
  ASSERT_TRUE(ours.ok() && truth.ok());
  std::vector<float> w(1000), g(1000), v(1000, 0.0f);
  for (int i = 0; i < 1000; ++i) w[i] = std::sin(i), g[i] = std::cos(3.0f * i) * 256;
  const TensorSpec spec = TensorSpec::Plain(DType::kF32, Shape{1000});
  const TensorSpec scalar = TensorSpec::Plain(DType::kF32, Shape{});
  auto dw = Buffer::Allocate(Device::Cuda(0), spec.bytes);
  auto dg = Buffer::Allocate(Device::Cuda(0), spec.bytes);
  auto dv = Buffer::Allocate(Device::Cuda(0), spec.bytes);
  auto scalars = Buffer::Allocate(Device::Cuda(0), 1024);
  ASSERT_TRUE(dw.ok() && dg.ok() && dv.ok() && scalars.ok());
  ASSERT_TRUE(Cuda()->Upload(spec, w.data(), spec, dw->data()).ok());
  ASSERT_TRUE(Cuda()->Upload(spec, g.data(), spec, dg->data()).ok());
  ASSERT_TRUE(Cuda()->Upload(spec, v.data(), spec, dv->data()).ok());
  char* s = static_cast<char*>(scalars->data());
  float* scale = reinterpret_cast<float*>(s);
  int32_t* overflow = reinterpret_cast<int32_t*>(s + 256);
  uint64_t* step = reinterpret_cast<uint64_t*>(s + 512);
  float loss_scale = 256;
  ASSERT_TRUE(Cuda()->Upload(scalar, &loss_scale, scalar, scale).ok());
  ASSERT_TRUE(Cuda()->Fill(s + 256, 0x7f, 512).ok());
  ASSERT_TRUE(Cuda()->Fill(step, 0, sizeof(uint64_t)).ok());
  UpdateArgs args{static_cast<float*>(dw->data()),
                  static_cast<const float*>(dg->data()),
                  static_cast<float*>(dv->data()),
                  scale,
                  overflow,
                  step};
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*ours)->Update(args).ok());
  std::vector<float> expect_w = w, expect_v = v;
  UpdateArgs host{expect_w.data(), g.data(), expect_v.data(), &loss_scale, nullptr, nullptr};
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*truth)->Update(host).ok());
  std::vector<float> got_w(1000), got_v(1000);
  ASSERT_TRUE(Cuda()->Download(spec, dw->data(), spec, got_w.data()).ok());
  ASSERT_TRUE(Cuda()->Download(spec, dv->data(), spec, got_v.data()).ok());
  for (int i = 0; i < 1000; ++i) {
    ASSERT_NEAR(got_w[i], expect_w[i], 1e-6f * std::fabs(expect_w[i]) + 1e-9f) << i;
    ASSERT_NEAR(got_v[i], expect_v[i], 1e-6f * std::fabs(expect_v[i]) + 1e-9f) << i;
  }
  int32_t flag = -1;
  uint64_t steps = 0;
  ASSERT_TRUE(CopyBytes(&flag, Device::Cpu(), overflow, Device::Cuda(0), 4).ok());
  ASSERT_TRUE(CopyBytes(&steps, Device::Cpu(), step, Device::Cuda(0), 8).ok());
  EXPECT_EQ(flag, 0);
  EXPECT_EQ(steps, 3u);
  // An infinite gradient: the flag is set and nothing moves.
  g[7] = std::numeric_limits<float>::infinity();
  ASSERT_TRUE(Cuda()->Upload(spec, g.data(), spec, dg->data()).ok());
  ASSERT_TRUE((*ours)->Update(args).ok());
  std::vector<float> after(1000);
  ASSERT_TRUE(Cuda()->Download(spec, dw->data(), spec, after.data()).ok());
  EXPECT_EQ(after, got_w);
  ASSERT_TRUE(CopyBytes(&flag, Device::Cpu(), overflow, Device::Cuda(0), 4).ok());
  ASSERT_TRUE(CopyBytes(&steps, Device::Cpu(), step, Device::Cuda(0), 8).ok());
  EXPECT_EQ(flag, 1);
  EXPECT_EQ(steps, 4u);
}

// Dynamic loss scaling on the device, as the CPU does it: an overflow skips
// the update and halves the scale; two clean updates in a row double it.
TEST(CudaBackendTest, DynamicLossScaleFollowsTheCpu) {
  SKIP_WITHOUT_GPU();
  SgdDesc desc;
  desc.count = 64;
  desc.learning_rate = 0.5;
  desc.momentum = 0.0;  // no momentum buffer here
  auto ours = Cuda()->CreateOptimizer(desc);
  auto truth = cuda_test::Reference()->CreateOptimizer(desc);
  ASSERT_TRUE(ours.ok() && truth.ok());
  const TensorSpec spec = TensorSpec::Plain(DType::kF32, Shape{64});
  auto dw = Buffer::Allocate(Device::Cuda(0), spec.bytes);
  auto dg = Buffer::Allocate(Device::Cuda(0), spec.bytes);
  auto scalars = Buffer::Allocate(Device::Cuda(0), 1024);
  ASSERT_TRUE(dw.ok() && dg.ok() && scalars.ok());
  std::vector<float> w(64), host_w(64);
  for (int i = 0; i < 64; ++i) w[i] = host_w[i] = 0.25f * i;
  ASSERT_TRUE(Cuda()->Upload(spec, w.data(), spec, dw->data()).ok());
  char* s = static_cast<char*>(scalars->data());
  float host_scale = 64;
  int32_t host_overflow = 0, host_good = 0;
  ASSERT_TRUE(CopyBytes(s, Device::Cuda(0), &host_scale, Device::Cpu(), 4).ok());
  ASSERT_TRUE(Cuda()->Fill(s + 256, 0, 512).ok());
  UpdateArgs args;
  args.params = static_cast<float*>(dw->data());
  args.grads = static_cast<const float*>(dg->data());
  args.loss_scale = reinterpret_cast<float*>(s);
  args.overflow = reinterpret_cast<int32_t*>(s + 256);
  args.good_steps = reinterpret_cast<int32_t*>(s + 512);
  args.growth_interval = 2;
  UpdateArgs host = args;
  host.params = host_w.data();
  host.loss_scale = &host_scale;
  host.overflow = &host_overflow;
  host.good_steps = &host_good;
  const float inf = std::numeric_limits<float>::infinity();
  for (int update = 0; update < 4; ++update) {  // overflow, clean, clean, clean
    std::vector<float> g(64);
    for (int i = 0; i < 64; ++i) g[i] = static_cast<float>((i % 5) - 2) * 16.0f;
    if (update == 0) g[9] = inf;
    ASSERT_TRUE(Cuda()->Upload(spec, g.data(), spec, dg->data()).ok());
    host.grads = g.data();
    const absl::Status updated = (*ours)->Update(args);
    ASSERT_TRUE(updated.ok()) << updated;
    const absl::Status host_updated = (*truth)->Update(host);
    ASSERT_TRUE(host_updated.ok()) << host_updated;
    ASSERT_TRUE(Cuda()->stream().Synchronize().ok());
    float scale = 0;
    int32_t overflow = -1, good = -1;
    ASSERT_TRUE(CopyBytes(&scale, Device::Cpu(), s, Device::Cuda(0), 4).ok());
    ASSERT_TRUE(CopyBytes(&overflow, Device::Cpu(), s + 256, Device::Cuda(0), 4).ok());
    ASSERT_TRUE(CopyBytes(&good, Device::Cpu(), s + 512, Device::Cuda(0), 4).ok());
    EXPECT_EQ(scale, host_scale) << "update " << update;
    EXPECT_EQ(overflow, host_overflow) << "update " << update;
    EXPECT_EQ(good, host_good) << "update " << update;
    std::vector<float> got(64);
    ASSERT_TRUE(Cuda()->Download(spec, dw->data(), spec, got.data()).ok());
    EXPECT_EQ(got, host_w) << "update " << update;
  }
  EXPECT_EQ(host_scale, 64);  // halved to 32, then doubled after two clean ones
}

TEST(CudaBackendTest, ReluMatchesTheReferenceInEveryPrecision) {
  SKIP_WITHOUT_GPU();
  const OpDesc relu = ReluDesc{{4, 16, 7, 9}};
  for (Precision p : {Precision::kFp32, Precision::kTf32, Precision::kFp16, Precision::kBf16}) {
    cuda_test::CompareOptions options;
    options.precision = p;  // small integers: exact in every storage type
    absl::Status status = cuda_test::CompareWithReference(relu, options);
    EXPECT_TRUE(status.ok()) << PrecisionName(p) << ": " << status;
  }
}

// Every activation sample of OpSamples(): the activation op in every
// precision on integers across both clips (0 and 6; exact in each storage
// type; the kinds with exp, erf or tanh on reals, to each type's rounding),
// and each fused form matches the reference (bn and add with ReLU6
// run fused), except the convolution's training epilogue and a batch norm's
// fused kind whose gradient needs x, which are
// "unsupported: ..." (the plan keeps the activation as a layer).
TEST(CudaBackendTest, ActivationSamplesMatchTheReferenceInEveryPrecision) {
  SKIP_WITHOUT_GPU();
  for (absl::string_view text : kActivationSamples) {
    const OpDesc desc = *ParseOpDesc(text);
    for (Precision p : {Precision::kFp32, Precision::kTf32, Precision::kFp16, Precision::kBf16}) {
      auto probe = Cuda()->Create(desc, KernelOptions::ForPrecision(p), {});
      if (!probe.ok() && absl::IsUnimplemented(probe.status())) {
        // The conv epilogue in training, and a batch norm's fused kind
        // whose gradient needs x (the plan keeps those activations as layers).
        EXPECT_TRUE(std::holds_alternative<ConvDesc>(desc) ||
                    (std::holds_alternative<BatchNormDesc>(desc) &&
                     !ActivationMasks(FusedActivation(desc))))
            << probe.status();
        continue;
      }
      cuda_test::CompareOptions options;
      options.precision = p;
      options.low = -3;
      options.high = 9;
      if (!ActivationMasks(std::get_if<ReluDesc>(&desc) != nullptr ? std::get<ReluDesc>(desc).kind
                                                                   : FusedActivation(desc))) {
        // exp, erf and tanh: reals past the kinks (-3, 3), to the storage
        // type's rounding (fp32 math, so tf32 is fp32 here).
        options.integers = false;
        options.low = -5;
        options.high = 5;
        const bool half = p == Precision::kFp16 || p == Precision::kBf16;
        const double tol = p == Precision::kBf16 ? 2e-2 : half ? 2e-3 : 1e-5;
        options.forward_rtol = options.backward_rtol = tol;
        options.forward_atol = options.backward_atol = tol;
      }
      if (!std::holds_alternative<ReluDesc>(desc) && p != Precision::kFp32) continue;
      absl::Status status = cuda_test::CompareWithReference(desc, options);
      EXPECT_TRUE(status.ok()) << text << " " << PrecisionName(p) << ": " << status;
    }
  }
}

// A blocked (CPU backend) input is "unsupported: ..." for ReLU as for every
// other op of this backend, not an invalid argument.
TEST(CudaBackendTest, ReluOnABlockedInputIsUnsupported) {
  SKIP_WITHOUT_GPU();
  const OpDesc relu = ReluDesc{{4, 16, 7, 9}};
  TensorSpec blocked = TensorSpec::Plain(DType::kF32, Shape{4, 16, 7, 9});
  blocked.layout = Layout::kBlocked;
  auto kernel = Cuda()->Create(relu, KernelOptions::ForPrecision(Precision::kFp32), {blocked});
  ASSERT_FALSE(kernel.ok());
  EXPECT_TRUE(absl::IsUnimplemented(kernel.status())) << kernel.status();
  // After the call sites' locations, as the harness reads it (harness.cc).
  EXPECT_TRUE(absl::StrContains(kernel.status().message(), "unsupported: relu:mb4ic16ih7iw9"))
      << kernel.status();
}

// An op the backend cannot run is "unsupported: ..." naming it: an fc on
// int32 data, which no GPU kernel has.
TEST(CudaBackendTest, UnsupportedOpsAreUnsupportedWithTheirName) {
  SKIP_WITHOUT_GPU();
  KernelOptions options = KernelOptions::ForPrecision(Precision::kFp32);
  options.dtype = DType::kI32;
  auto kernel = Cuda()->Create(*ParseOpDesc("fc:mb2ic8oc4"), options, {});
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().message().rfind("unsupported: ", 0), 0u) << kernel.status();
  EXPECT_NE(kernel.status().message().find("fc"), std::string::npos) << kernel.status();
}

}  // namespace
}  // namespace cnnbench
