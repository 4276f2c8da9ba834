// Layer norm over channels on oneDNN against the reference: the input plain
// and channel-blocked as a convolution gives it (padded channels too),
// fp32 and bf16 where the CPU has it, forward and both backward passes; y
// keeps the input's layout (no reorder on either side); an inference
// forward (no saved memory) uses the scratch. And kernels/layer_norm.h's
// arithmetic on the host (the cuda kernels run it): a normalised position
// has mean 0 and variance 1, and dx's sums are the finite differences'.
// No call of the kernel allocates (a training step allocates nothing).
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/device.h"
#include "core/dtype.h"
#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "kernels/layer_norm.h"
#include "tests/kernels/onednn_test_util.h"
#include "tests/testing/alloc_counter.h"

namespace cnnbench {
namespace {

using onednn_test::CompareOptions;
using onednn_test::CompareWithReference;
using onednn_test::OneDnn;

TEST(LayerNormMathTest, NormalisesAndDifferentiates) {
  const std::vector<double> x = {0.5, -1.25, 3.0, 2.0, -0.75};
  const std::vector<double> gamma = {1.5, -0.5, 2.0, 1.0, 0.25};
  const std::vector<double> dy = {0.3, -0.7, 1.1, 0.2, -0.4};
  const int64_t c = static_cast<int64_t>(x.size());
  double mean, rstd;
  LayerNormStatistics<double>(
      c, 1e-5, [&](int64_t i) { return x[i]; }, &mean, &rstd);
  double m = 0, v = 0;
  for (int64_t i = 0; i < c; ++i) m += (x[i] - mean) * rstd / c;
  for (int64_t i = 0; i < c; ++i) v += std::pow((x[i] - mean) * rstd, 2) / c;
  EXPECT_NEAR(m, 0.0, 1e-12);
  EXPECT_NEAR(v, 1.0, 1e-4);  // epsilon's share
  // The loss sum(dy * y): its gradient by central differences.
  auto loss = [&](const std::vector<double>& in) {
    double mu, r;
    LayerNormStatistics<double>(
        c, 1e-5, [&](int64_t i) { return in[i]; }, &mu, &r);
    double l = 0;
    for (int64_t i = 0; i < c; ++i) l += dy[i] * LayerNormOutput(in[i], mu, r, gamma[i], 0.0);
    return l;
  };
  double sum_g, sum_g_xhat;
  LayerNormGradientSums<double>(
      c, mean, rstd, [&](int64_t i) { return x[i]; }, [&](int64_t i) { return dy[i]; },
      [&](int64_t i) { return gamma[i]; }, &sum_g, &sum_g_xhat);
  for (int64_t i = 0; i < c; ++i) {
    std::vector<double> up = x, down = x;
    up[i] += 1e-6;
    down[i] -= 1e-6;
    const double numeric = (loss(up) - loss(down)) / 2e-6;
    EXPECT_NEAR(LayerNormInputGradient(c, x[i], dy[i], gamma[i], mean, rstd, sum_g, sum_g_xhat),
                numeric, 1e-6)
        << i;
  }
}

TEST(OneDnnLayerNormTest, MatchesTheReferenceInEveryLayout) {
  ASSERT_NE(OneDnn(), nullptr);
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    KernelOptions options = KernelOptions::ForDType(dtype);
    const LayerNormDesc probe{{2, 16, 4, 4}, 1e-6};
    if (!OneDnn()->Supports(probe, options).ok()) continue;  // no bf16 on this CPU
    for (int64_t channels : {16, 20, 3, 96}) {
      const LayerNormDesc desc{{2, channels, 4, 4}, 1e-6};
      const TensorSpec blocked = onednn_test::ConvOutputSpec(2, channels, 4, dtype);
      for (const std::vector<TensorSpec>& given :
           {std::vector<TensorSpec>{}, std::vector<TensorSpec>{blocked}}) {
        const std::string what = absl::StrCat(desc.ToString(), " ", DTypeName(dtype),
                                              given.empty() ? " plain" : given[0].DebugString());
        auto kernel = OneDnn()->Create(desc, options, given);
        ASSERT_TRUE(kernel.ok()) << what << ": " << kernel.status();
        const KernelSignature& sig = (*kernel)->signature();
        // Blocked by 8 or 16 with no padding channels: the vectorised rows.
        EXPECT_EQ((*kernel)->implementation(), !given.empty() && channels % 16 == 0
                                                   ? "cnnbench:lnorm_blocked"
                                                   : "cnnbench:lnorm")
            << what;
        if (!given.empty()) {
          EXPECT_TRUE(OneDnn()->SameLayout(sig.inputs[0], given[0])) << what;
        }
        EXPECT_TRUE(OneDnn()->SameLayout(sig.output, sig.inputs[0])) << what;
        EXPECT_GE(sig.scratch_bytes, sig.saved_bytes) << what;
        CompareOptions o;
        o.dtype = dtype;
        o.onednn_inputs = given;
        o.low = -3;
        o.high = 3;
        if (dtype == DType::kBF16) {  // y and dx rounded to bf16 once
          o.forward_rtol = o.backward_rtol = 1.0 / 64;
          o.forward_atol = o.backward_atol = 2e-2;
        } else {
          o.forward_rtol = o.backward_rtol = 1e-5;
          o.forward_atol = o.backward_atol = 1e-5;
        }
        const absl::Status status = CompareWithReference(desc, o);
        EXPECT_TRUE(status.ok()) << what << ": " << status;
        // Inference: no saved memory, the statistics in the scratch.
        o.training = false;
        o.backward = false;
        o.forward_only = true;
        const absl::Status inference = CompareWithReference(desc, o);
        EXPECT_TRUE(inference.ok()) << what << " forward only: " << inference;
      }
    }
  }
}

// After a first round, forward and both backward passes allocate nothing
// (the per-thread sums are made with the kernel), blocked input and bf16
// where the CPU has it included.
TEST(OneDnnLayerNormTest, CallsAllocateNothing) {
  ASSERT_NE(OneDnn(), nullptr);
  for (DType dtype : {DType::kF32, DType::kBF16})
    for (int64_t channels : {20, 32}) {  // padded blocks; the vectorised rows
      const LayerNormDesc desc{{2, channels, 4, 4}, 1e-6};
      const KernelOptions options = KernelOptions::ForDType(dtype);
      if (!OneDnn()->Supports(desc, options).ok()) continue;
      auto kernel =
          OneDnn()->Create(desc, options, {onednn_test::ConvOutputSpec(2, channels, 4, dtype)});
      ASSERT_TRUE(kernel.ok()) << kernel.status();
      const KernelSignature& sig = (*kernel)->signature();
      auto cpu = [](size_t bytes) { return *Buffer::Allocate(Device::Cpu(), bytes); };
      Buffer x = cpu(sig.inputs[0].bytes), y = cpu(sig.output.bytes), dy = cpu(sig.output.bytes);
      Buffer dx = cpu(sig.inputs[0].bytes), saved = cpu(sig.saved_bytes);
      Buffer scratch = cpu(sig.scratch_bytes);
      std::vector<Buffer> params, dparams;
      for (const TensorSpec& p : sig.params) {
        params.push_back(cpu(p.bytes));
        dparams.push_back(cpu(p.bytes));
      }
      for (Buffer* b : {&x, &dy}) std::memset(b->data(), 0x3c, b->size());  // finite in both types
      for (Buffer& b : params) std::memset(b.data(), 0x3c, b.size());
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
      for (int round = 0; round < 2; ++round) {
        if (round == 1) testing::AllocationCounter::Start();
        ASSERT_TRUE((*kernel)->Forward(args).ok());
        ASSERT_TRUE((*kernel)->BackwardData(args).ok());
        ASSERT_TRUE((*kernel)->BackwardWeights(args).ok());
      }
      EXPECT_EQ(testing::AllocationCounter::Stop(), 0) << DTypeName(dtype) << " " << channels;
    }
}

// The vectorised rows make dgamma and dbeta in BackwardData's pass and
// BackwardWeights copies them; called alone, BackwardWeights makes them
// itself: the same sums, to the bit (also after a new forward, which the
// kept sums must not outlive).
TEST(OneDnnLayerNormTest, BlockedWeightGradientsAloneEqualTheSharedPass) {
  ASSERT_NE(OneDnn(), nullptr);
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    const LayerNormDesc desc{{2, 32, 5, 5}, 1e-6};
    const KernelOptions options = KernelOptions::ForDType(dtype);
    if (!OneDnn()->Supports(desc, options).ok()) continue;
    auto kernel = OneDnn()->Create(desc, options, {onednn_test::ConvOutputSpec(2, 32, 5, dtype)});
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    ASSERT_EQ((*kernel)->implementation(), "cnnbench:lnorm_blocked");
    const KernelSignature& sig = (*kernel)->signature();
    auto cpu = [](size_t bytes) { return *Buffer::Allocate(Device::Cpu(), bytes); };
    Buffer x = cpu(sig.inputs[0].bytes), y = cpu(sig.output.bytes), dy = cpu(sig.output.bytes);
    Buffer dx = cpu(sig.inputs[0].bytes), saved = cpu(sig.saved_bytes);
    std::vector<Buffer> params, dparams;
    for (const TensorSpec& p : sig.params) {
      params.push_back(cpu(p.bytes));
      dparams.push_back(cpu(p.bytes));
    }
    auto fill = [&](Buffer& b, int salt) {
      const size_t n = b.size() / SizeOf(dtype);
      for (size_t i = 0; i < n; ++i) {
        const float v = static_cast<float>((i * (7 + salt)) % 29) / 8.0f - 1.5f;
        if (dtype == DType::kBF16) {
          uint16_t bits;
          std::memcpy(&bits, reinterpret_cast<const char*>(&v) + 2, 2);  // eighths: exact
          static_cast<uint16_t*>(b.data())[i] = bits;
        } else {
          static_cast<float*>(b.data())[i] = v;
        }
      }
    };
    fill(x, 0);
    fill(dy, 4);
    for (size_t p = 0; p < params.size(); ++p)
      for (int64_t c = 0; c < 32; ++c)
        static_cast<float*>(params[p].data())[c] = 0.5f + 0.25f * static_cast<float>(c % 4);
    KernelArgs args;
    args.x = {x.data()};
    args.y = y.data();
    args.dy = dy.data();
    args.dx = {dx.data()};
    args.saved = saved.data();
    for (size_t i = 0; i < params.size(); ++i) {
      args.params.push_back(params[i].data());
      args.dparams.push_back(dparams[i].data());
    }
    auto read = [&](size_t i) {
      const float* f = static_cast<const float*>(dparams[i].data());
      return std::vector<float>(f, f + 32);
    };
    ASSERT_TRUE((*kernel)->Forward(args).ok());
    ASSERT_TRUE((*kernel)->BackwardData(args).ok());
    ASSERT_TRUE((*kernel)->BackwardWeights(args).ok());
    const std::vector<float> shared_g = read(0), shared_b = read(1);
    fill(x, 2);  // a new batch: the kept sums are stale
    ASSERT_TRUE((*kernel)->Forward(args).ok());
    ASSERT_TRUE((*kernel)->BackwardWeights(args).ok());
    const std::vector<float> alone_g = read(0), alone_b = read(1);
    ASSERT_TRUE((*kernel)->BackwardData(args).ok());
    ASSERT_TRUE((*kernel)->BackwardWeights(args).ok());
    EXPECT_EQ(read(0), alone_g) << DTypeName(dtype);
    EXPECT_EQ(read(1), alone_b) << DTypeName(dtype);
    EXPECT_NE(alone_g, shared_g) << DTypeName(dtype);  // the new batch's, not the kept ones
    EXPECT_EQ(alone_b, shared_b) << DTypeName(dtype);  // dbeta: dy's sums, dy unchanged
  }
}

}  // namespace
}  // namespace cnnbench
