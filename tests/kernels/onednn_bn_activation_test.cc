// Batch norm with a fused SiLU, hard-swish, sigmoid or GELU on the oneDNN
// backend (bn_activation.cc's own loops) against the reference: the input
// plain, NHWC and channel-blocked as a convolution gives it (padded
// channels too), spans longer than one item of the loops, a mean far from
// 0 against a small spread, fp32 and bf16 where the CPU has it, training
// (forward, both backward passes) and inference; z keeps x's layout. The
// loops' exponential and activations against <cmath> in double. No call
// allocates (a training step allocates nothing). An output gradient in
// two parts gives what their sum gives.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/device.h"
#include "core/dtype.h"
#include "gtest/gtest.h"
#include "kernels/activation.h"
#include "kernels/desc.h"
#include "kernels/onednn/bn_activation_loops.h"
#include "kernels/onednn/loop_util.h"
#include "tests/kernels/onednn_test_util.h"
#include "tests/testing/alloc_counter.h"

namespace cnnbench {
namespace {

using onednn_test::CompareOptions;
using onednn_test::CompareWithReference;
using onednn_test::OneDnn;

constexpr ActivationKind kKinds[] = {ActivationKind::kSilu,    ActivationKind::kHardSwish,
                                     ActivationKind::kSigmoid, ActivationKind::kHardSigmoid,
                                     ActivationKind::kGelu,    ActivationKind::kGeluTanh};

// Relative error under 1.5e-6 where the sigmoids use it (|x| <= 20), 5e-6
// out to the clamps (-ffast-math reassociates the range reduction).
TEST(BnActivationLoopsTest, ExpIsCloseToTheLibrary) {
  for (double x = -87.0; x <= 88.0; x += 0.0137) {
    const float f = static_cast<float>(x);
    const double want = std::exp(static_cast<double>(f));
    EXPECT_NEAR(onednn::LoopExp(f), want, want * (std::abs(x) <= 20 ? 1.5e-6 : 5e-6)) << f;
  }
  EXPECT_EQ(onednn::LoopExp(0.0f), 1.0f);
  EXPECT_GT(onednn::LoopExp(-1000.0f), 0.0f);  // clamped, not a NaN or an infinity
  EXPECT_TRUE(std::isfinite(onednn::LoopExp(1000.0f)));
}

TEST(BnActivationLoopsTest, ActivationsMatchTheSharedArithmetic) {
  for (ActivationKind kind : kKinds) {
    for (double u = -9.0; u <= 9.0; u += 0.0731) {
      const float f = static_cast<float>(u);
      EXPECT_NEAR(onednn::LoopActivation(kind, f), ActivationForward(kind, static_cast<double>(f)),
                  2e-6 * (1 + std::abs(u)))
          << ActivationSuffix(kind) << " at " << f;
      EXPECT_NEAR(onednn::LoopActivationDerivative(kind, f),
                  ActivationDerivative(kind, static_cast<double>(f)), 2e-6)
          << ActivationSuffix(kind) << " at " << f;
    }
  }
}

// An NHWC producer's spec (channels last, plain).
TensorSpec Nhwc(DType dtype, int64_t n, int64_t c, int64_t h, int64_t w) {
  TensorSpec spec = TensorSpec::Plain(dtype, Shape{n, c, h, w});
  spec.layout = Layout::kNHWC;
  return spec;
}

TEST(OneDnnBnActivationTest, MatchesTheReferenceInEveryLayout) {
  ASSERT_NE(OneDnn(), nullptr);
  struct Case {
    int64_t n, c, hw;
    const char* layout;  // "plain", "nhwc" or "conv" (the convolution's output)
  };
  // 20 channels: a padded last block; 130 x 130 plain and 33 x 33 blocked:
  // runs longer than one item of the loops.
  const Case cases[] = {{2, 16, 5, "conv"}, {2, 20, 4, "conv"},   {2, 3, 4, "plain"},
                        {2, 20, 3, "nhwc"}, {1, 3, 130, "plain"}, {2, 20, 33, "conv"}};
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    const KernelOptions options = KernelOptions::ForDType(dtype);
    for (const Case& k : cases) {
      for (ActivationKind kind : kKinds) {
        BatchNormDesc desc;
        desc.dims = {k.n, k.c, k.hw, k.hw};
        desc.epsilon = 1e-3;
        desc.activation = kind;
        if (!OneDnn()->Supports(desc, options).ok()) break;  // no bf16 on this CPU
        std::vector<TensorSpec> given;
        if (std::string(k.layout) == "conv")
          given = {onednn_test::ConvOutputSpec(k.n, k.c, k.hw, dtype)};
        if (std::string(k.layout) == "nhwc") given = {Nhwc(dtype, k.n, k.c, k.hw, k.hw)};
        const std::string what =
            absl::StrCat(desc.ToString(), " ", DTypeName(dtype), " ", k.layout);
        auto kernel = OneDnn()->Create(desc, options, given);
        ASSERT_TRUE(kernel.ok()) << what << ": " << kernel.status();
        const KernelSignature& sig = (*kernel)->signature();
        EXPECT_EQ((*kernel)->implementation(), absl::StrCat("cnnbench:bn", ActivationSuffix(kind)));
        if (!given.empty()) {
          EXPECT_TRUE(OneDnn()->SameLayout(sig.inputs[0], given[0])) << what;
        }
        EXPECT_TRUE(OneDnn()->SameLayout(sig.output, sig.inputs[0])) << what;
        EXPECT_FALSE(sig.backward_reads_output) << what;
        CompareOptions o;
        o.dtype = dtype;
        o.onednn_inputs = given;
        // fp32: reals; bf16: integers, which bf16 holds exactly (the
        // reference reads the values before rounding: reals rounded apart
        // would move the hard kinds' kinks and dgamma's sums apart).
        o.integers = dtype == DType::kBF16;
        o.low = -3;
        o.high = 3;
        if (dtype == DType::kBF16) {  // z and dx rounded to bf16 once
          o.forward_rtol = o.backward_rtol = 1.0 / 32;
          o.forward_atol = o.backward_atol = 3e-2;
        } else {
          o.forward_rtol = o.backward_rtol = 1e-4;
          o.forward_atol = o.backward_atol = 1e-4;
        }
        const absl::Status status = CompareWithReference(desc, o);
        EXPECT_TRUE(status.ok()) << what << ": " << status;
        o.training = false;  // the running statistics, and the frozen backward
        const absl::Status inference = CompareWithReference(desc, o);
        EXPECT_TRUE(inference.ok()) << what << " inference: " << inference;
      }
    }
  }
}

// Buffers for every argument of a kernel's signature (plain CPU memory).
struct Bound {
  explicit Bound(const Kernel& kernel) {
    const KernelSignature& sig = kernel.signature();
    x = Cpu(sig.inputs[0].bytes);
    y = Cpu(sig.output.bytes);
    dy = Cpu(sig.output.bytes);
    dx = Cpu(sig.inputs[0].bytes);
    saved = Cpu(sig.saved_bytes);
    scratch = Cpu(sig.scratch_bytes);
    for (const TensorSpec& p : sig.params) {
      params.push_back(Cpu(p.bytes));
      dparams.push_back(Cpu(p.bytes));
    }
    for (const TensorSpec& s : sig.state) state.push_back(Cpu(s.bytes));
  }
  static Buffer Cpu(size_t bytes) {
    return *Buffer::Allocate(Device::Cpu(), std::max<size_t>(bytes, 64));
  }
  KernelArgs Args() {
    KernelArgs args;
    args.x = {x.data()};
    args.y = y.data();
    args.dy = dy.data();
    args.dx = {dx.data()};
    args.saved = saved.data();
    args.scratch = scratch.data();
    for (size_t i = 0; i < params.size(); ++i) {
      args.params.push_back(params[i].data());
      args.dparams.push_back(dparams[i].data());
    }
    for (Buffer& b : state) args.state.push_back(b.data());
    return args;
  }
  Buffer x, y, dy, dx, saved, scratch;
  std::vector<Buffer> params, dparams, state;
};

// A mean of about 1000 against a spread of about 0.6: the statistics' sums
// about each channel's first element keep the variance, and so the running
// variance and z (sums of squares about 0, 1e6 each in fp32, would lose
// it entirely). Plain fp32 input, gamma 1, beta 0, the running variance 1
// before the step.
TEST(OneDnnBnActivationTest, KeepsTheVarianceOfAFarMean) {
  ASSERT_NE(OneDnn(), nullptr);
  BatchNormDesc desc;
  desc.dims = {4, 3, 16, 16};
  desc.activation = ActivationKind::kSilu;
  auto kernel = OneDnn()->Create(desc, DType::kF32, {});
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  Bound b(**kernel);
  float* x = static_cast<float*>(b.x.data());
  const int64_t count = 4 * 3 * 16 * 16, plane = 16 * 16;
  for (int64_t i = 0; i < count; ++i) x[i] = 1000.0f + static_cast<float>((i * 37) % 101) / 50.0f;
  for (int64_t c = 0; c < 3; ++c) {
    static_cast<float*>(b.params[0].data())[c] = 1.0f;
    static_cast<float*>(b.params[1].data())[c] = 0.0f;
    static_cast<float*>(b.state[0].data())[c] = 0.0f;
    static_cast<float*>(b.state[1].data())[c] = 1.0f;
  }
  KernelArgs args = b.Args();
  args.training = true;
  ASSERT_TRUE((*kernel)->Forward(args).ok());
  const double m = 4.0 * plane;
  for (int64_t c = 0; c < 3; ++c) {
    double sum = 0, sq = 0;
    for (int64_t n = 0; n < 4; ++n)
      for (int64_t i = 0; i < plane; ++i) sum += x[(n * 3 + c) * plane + i];
    const double mean = sum / m;
    for (int64_t n = 0; n < 4; ++n)
      for (int64_t i = 0; i < plane; ++i) sq += std::pow(x[(n * 3 + c) * plane + i] - mean, 2);
    const double var = sq / m;
    const double running = desc.momentum + (1 - desc.momentum) * var * m / (m - 1);
    EXPECT_NEAR(static_cast<float*>(b.state[1].data())[c], running, 1e-6) << c;
    for (int64_t n = 0; n < 4; ++n)
      for (int64_t i = 0; i < plane; ++i) {
        const int64_t at = (n * 3 + c) * plane + i;
        const double u = (x[at] - mean) / std::sqrt(var + desc.epsilon);
        EXPECT_NEAR(static_cast<float*>(b.y.data())[at], u / (1 + std::exp(-u)), 1e-3) << at;
      }
  }
}

// An output read by two layers: the kernel takes its gradient as two parts
// (no summing pass before it) and gives what it gives for their sum, to the
// bit (parts of eighths, whose sums fp32 and bf16 hold exactly); three
// parts are refused with what was given.
TEST(OneDnnBnActivationTest, TakesTheOutputGradientInTwoParts) {
  ASSERT_NE(OneDnn(), nullptr);
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    BatchNormDesc desc;
    desc.dims = {2, 20, 33, 33};
    desc.activation = ActivationKind::kSilu;
    const KernelOptions options = KernelOptions::ForDType(dtype);
    if (!OneDnn()->Supports(desc, options).ok()) continue;
    auto kernel = OneDnn()->Create(desc, options, {onednn_test::ConvOutputSpec(2, 20, 33, dtype)});
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    const KernelSignature& sig = (*kernel)->signature();
    EXPECT_TRUE(sig.sums_output_gradient);
    EXPECT_EQ(sig.max_output_gradient_parts, 2);
    EXPECT_TRUE(TakesOutputGradientParts(sig, 2));
    EXPECT_FALSE(TakesOutputGradientParts(sig, 3));
    Bound b(**kernel);
    const size_t bytes = sig.output.bytes, size = SizeOf(dtype);
    Buffer part0 = Bound::Cpu(bytes), part1 = Bound::Cpu(bytes);
    auto set = [&](void* buffer, int64_t i, float v) {
      if (dtype == DType::kBF16) {
        static_cast<uint16_t*>(buffer)[i] = onednn::FloatToBf16(v);
      } else {
        static_cast<float*>(buffer)[i] = v;
      }
    };
    for (int64_t i = 0; i < static_cast<int64_t>(bytes / size); ++i) {
      const float p0 = static_cast<float>((i * 7) % 17 - 8) / 8.0f;
      const float p1 = static_cast<float>((i * 11) % 13 - 6) / 8.0f;
      set(b.x.data(), i, static_cast<float>((i * 5) % 23 - 11) / 4.0f);
      set(part0.data(), i, p0);
      set(part1.data(), i, p1);
      set(b.dy.data(), i, p0 + p1);
    }
    for (int64_t c = 0; c < 20; ++c) {
      static_cast<float*>(b.params[0].data())[c] = 0.5f + 0.125f * static_cast<float>(c % 5);
      static_cast<float*>(b.params[1].data())[c] = 0.25f * static_cast<float>(c % 3) - 0.25f;
    }
    KernelArgs args = b.Args();
    ASSERT_TRUE((*kernel)->Forward(args).ok());
    ASSERT_TRUE((*kernel)->BackwardData(args).ok());
    ASSERT_TRUE((*kernel)->BackwardWeights(args).ok());
    const std::vector<char> dx(static_cast<char*>(b.dx.data()),
                               static_cast<char*>(b.dx.data()) + bytes);
    std::vector<std::vector<float>> dparams;
    for (Buffer& d : b.dparams) {
      const float* f = static_cast<const float*>(d.data());
      dparams.emplace_back(f, f + 20);
    }
    std::memset(b.dx.data(), 0, bytes);
    args.dy = nullptr;
    args.dy_parts = {part0.data(), part1.data()};
    ASSERT_TRUE((*kernel)->BackwardData(args).ok());
    ASSERT_TRUE((*kernel)->BackwardWeights(args).ok());
    EXPECT_EQ(std::memcmp(dx.data(), b.dx.data(), bytes), 0) << DTypeName(dtype);
    for (size_t i = 0; i < dparams.size(); ++i) {
      const float* f = static_cast<const float*>(b.dparams[i].data());
      EXPECT_EQ(dparams[i], std::vector<float>(f, f + 20)) << DTypeName(dtype) << " dparams " << i;
    }
    args.dy_parts.push_back(b.dy.data());
    const absl::Status three = (*kernel)->BackwardData(args);
    EXPECT_EQ(three.code(), absl::StatusCode::kInvalidArgument) << three;
    EXPECT_NE(three.message().find("3 output gradient parts"), std::string::npos) << three;
  }
}

// After a first round, forward and both backward passes allocate nothing.
TEST(OneDnnBnActivationTest, CallsAllocateNothing) {
  ASSERT_NE(OneDnn(), nullptr);
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    BatchNormDesc desc;
    desc.dims = {2, 20, 4, 4};
    desc.activation = ActivationKind::kSilu;
    const KernelOptions options = KernelOptions::ForDType(dtype);
    if (!OneDnn()->Supports(desc, options).ok()) continue;
    auto kernel = OneDnn()->Create(desc, options, {onednn_test::ConvOutputSpec(2, 20, 4, dtype)});
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    Bound b(**kernel);
    for (Buffer* buffer : {&b.x, &b.dy}) std::memset(buffer->data(), 0x3c, buffer->size());
    for (Buffer& buffer : b.params) std::memset(buffer.data(), 0x3c, buffer.size());
    for (Buffer& buffer : b.state) std::memset(buffer.data(), 0x3c, buffer.size());
    KernelArgs args = b.Args();
    for (int round = 0; round < 2; ++round) {
      if (round == 1) testing::AllocationCounter::Start();
      ASSERT_TRUE((*kernel)->Forward(args).ok());
      ASSERT_TRUE((*kernel)->BackwardData(args).ok());
      ASSERT_TRUE((*kernel)->BackwardWeights(args).ok());
    }
    EXPECT_EQ(testing::AllocationCounter::Stop(), 0) << DTypeName(dtype);
  }
}

}  // namespace
}  // namespace cnnbench
