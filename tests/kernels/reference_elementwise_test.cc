// Reference relu, add, concat and dropout: exact forward, the documented
// backward formulas, dropout's reproducible mask, and finite differences.
#include <cmath>
#include <string>
#include <vector>

#include "core/random.h"
#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "kernels/reference/reference_backend.h"
#include "tests/kernels/gradient_check.h"

namespace cnnbench {
namespace {

using kernel_test::CheckGradients;
using kernel_test::CreateKernelUnderTest;
using kernel_test::FillDefaults;
using kernel_test::FillUniform;
using kernel_test::FromDoubles;
using kernel_test::GradientCheckOptions;
using kernel_test::KernelUnderTest;
using kernel_test::SetElement;
using kernel_test::ToDoubles;

KernelUnderTest Make(const OpDesc& desc, DType dtype) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  absl::StatusOr<KernelUnderTest> k = CreateKernelUnderTest(*backend, desc, dtype);
  EXPECT_TRUE(k.ok()) << k.status();
  return std::move(k).value();
}

class ElementwiseTest : public ::testing::TestWithParam<DType> {};

TEST_P(ElementwiseTest, Relu) {
  KernelUnderTest k = Make(ReluDesc{{1, 2, 1, 3}}, GetParam());
  const KernelSignature& sig = k.kernel->signature();
  ASSERT_TRUE(FromDoubles(sig.inputs[0], k.buffers.x[0].data(), {-2, -1, 0, 1, 2, 3}).ok());
  ASSERT_TRUE(FromDoubles(sig.output, k.buffers.dy.data(), {1, 2, 3, 4, 5, 6}).ok());
  KernelArgs args = k.buffers.Args();
  ASSERT_TRUE(k.kernel->Forward(args).ok());
  EXPECT_EQ(ToDoubles(sig.output, k.buffers.y.data()), (std::vector<double>{0, 0, 0, 1, 2, 3}));
  ASSERT_TRUE(k.kernel->BackwardData(args).ok());
  EXPECT_EQ(ToDoubles(sig.inputs[0], k.buffers.dx[0].data()),
            (std::vector<double>{0, 0, 0, 4, 5, 6}));
}

TEST_P(ElementwiseTest, Add) {
  KernelUnderTest k = Make(AddDesc{{2, 1, 1, 2}}, GetParam());
  const KernelSignature& sig = k.kernel->signature();
  ASSERT_TRUE(FromDoubles(sig.inputs[0], k.buffers.x[0].data(), {1, 2, 3, 4}).ok());
  ASSERT_TRUE(FromDoubles(sig.inputs[1], k.buffers.x[1].data(), {10, -20, 30, -40}).ok());
  ASSERT_TRUE(FromDoubles(sig.output, k.buffers.dy.data(), {5, 6, 7, 8}).ok());
  KernelArgs args = k.buffers.Args();
  ASSERT_TRUE(k.kernel->Forward(args).ok());
  EXPECT_EQ(ToDoubles(sig.output, k.buffers.y.data()), (std::vector<double>{11, -18, 33, -36}));
  args.dx[1] = nullptr;  // that input needs no gradient
  ASSERT_TRUE(k.kernel->BackwardData(args).ok());
  EXPECT_EQ(ToDoubles(sig.inputs[0], k.buffers.dx[0].data()), (std::vector<double>{5, 6, 7, 8}));
}

TEST_P(ElementwiseTest, AddWithFusedRelu) {
  AddDesc desc{{2, 1, 1, 2}};
  desc.activation = ActivationKind::kRelu;
  KernelUnderTest k = Make(desc, GetParam());
  const KernelSignature& sig = k.kernel->signature();
  EXPECT_TRUE(sig.backward_reads_output);  // the mask is y > 0
  EXPECT_TRUE(sig.shared_input_gradient);
  EXPECT_TRUE(sig.sums_output_gradient);
  ASSERT_TRUE(FromDoubles(sig.inputs[0], k.buffers.x[0].data(), {1, 2, 3, 4}).ok());
  ASSERT_TRUE(FromDoubles(sig.inputs[1], k.buffers.x[1].data(), {10, -20, 30, -4}).ok());
  ASSERT_TRUE(FromDoubles(sig.output, k.buffers.dy.data(), {5, 6, 7, 8}).ok());
  KernelArgs args = k.buffers.Args();
  ASSERT_TRUE(k.kernel->Forward(args).ok());
  // 4 + -4 = 0 is not > 0: masked, as a ReLU's kink.
  EXPECT_EQ(ToDoubles(sig.output, k.buffers.y.data()), (std::vector<double>{11, 0, 33, 0}));
  ASSERT_TRUE(k.kernel->BackwardData(args).ok());
  EXPECT_EQ(ToDoubles(sig.inputs[0], k.buffers.dx[0].data()), (std::vector<double>{5, 0, 7, 0}));
  EXPECT_EQ(ToDoubles(sig.inputs[1], k.buffers.dx[1].data()), (std::vector<double>{5, 0, 7, 0}));

  // One buffer for both inputs, and dy given as three parts summed.
  std::vector<double> a = {1, 2, 3, 4}, b = {-10, 20, 30, 40}, c = {100, 200, 300, 400};
  std::vector<std::vector<char>> parts(3, std::vector<char>(sig.output.bytes));
  ASSERT_TRUE(FromDoubles(sig.output, parts[0].data(), a).ok());
  ASSERT_TRUE(FromDoubles(sig.output, parts[1].data(), b).ok());
  ASSERT_TRUE(FromDoubles(sig.output, parts[2].data(), c).ok());
  args.dy = nullptr;
  args.dy_parts = {parts[0].data(), parts[1].data(), parts[2].data()};
  args.dx[1] = args.dx[0];
  ASSERT_TRUE(k.kernel->BackwardData(args).ok());
  EXPECT_EQ(ToDoubles(sig.inputs[0], k.buffers.dx[0].data()), (std::vector<double>{91, 0, 333, 0}));
  // Neither dy nor parts: a clear error, not a crash.
  args.dy_parts.clear();
  EXPECT_FALSE(k.kernel->BackwardData(args).ok());
}

TEST_P(ElementwiseTest, ConcatStacksChannels) {
  // Inputs of 1 and 2 channels, 2 images of 1x2.
  KernelUnderTest k = Make(ConcatDesc{2, 1, 2, {1, 2}}, GetParam());
  const KernelSignature& sig = k.kernel->signature();
  ASSERT_EQ(sig.inputs.size(), 2u);
  EXPECT_EQ(sig.output.shape, (Shape{2, 3, 1, 2}));
  ASSERT_TRUE(FromDoubles(sig.inputs[0], k.buffers.x[0].data(), {1, 2, 3, 4}).ok());
  ASSERT_TRUE(FromDoubles(sig.inputs[1], k.buffers.x[1].data(), {5, 6, 7, 8, 9, 10, 11, 12}).ok());
  KernelArgs args = k.buffers.Args();
  ASSERT_TRUE(k.kernel->Forward(args).ok());
  EXPECT_EQ(ToDoubles(sig.output, k.buffers.y.data()),
            (std::vector<double>{1, 2, 5, 6, 7, 8, 3, 4, 9, 10, 11, 12}));
  ASSERT_TRUE(FromDoubles(sig.output, k.buffers.dy.data(),
                          {-1, -2, -5, -6, -7, -8, -3, -4, -9, -10, -11, -12})
                  .ok());
  ASSERT_TRUE(k.kernel->BackwardData(args).ok());
  EXPECT_EQ(ToDoubles(sig.inputs[0], k.buffers.dx[0].data()),
            (std::vector<double>{-1, -2, -3, -4}));
  EXPECT_EQ(ToDoubles(sig.inputs[1], k.buffers.dx[1].data()),
            (std::vector<double>{-5, -6, -7, -8, -9, -10, -11, -12}));
}

TEST_P(ElementwiseTest, ChannelPadPutsTheInputBetweenZeros) {
  // 2 images of 1 channel of 1x2, one zero channel before and two after.
  ChannelPadDesc d;
  d.dims = {2, 1, 1, 2};
  d.before = 1;
  d.after = 2;
  KernelUnderTest k = Make(d, GetParam());
  const KernelSignature& sig = k.kernel->signature();
  EXPECT_EQ(sig.output.shape, (Shape{2, 4, 1, 2}));
  ASSERT_TRUE(FromDoubles(sig.inputs[0], k.buffers.x[0].data(), {1, 2, 3, 4}).ok());
  KernelArgs args = k.buffers.Args();
  ASSERT_TRUE(k.kernel->Forward(args).ok());
  EXPECT_EQ(ToDoubles(sig.output, k.buffers.y.data()),
            (std::vector<double>{0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 3, 4, 0, 0, 0, 0}));
  ASSERT_TRUE(FromDoubles(sig.output, k.buffers.dy.data(),
                          {9, 9, -1, -2, 9, 9, 9, 9, 9, 9, -3, -4, 9, 9, 9, 9})
                  .ok());
  ASSERT_TRUE(k.kernel->BackwardData(args).ok());
  EXPECT_EQ(ToDoubles(sig.inputs[0], k.buffers.dx[0].data()),
            (std::vector<double>{-1, -2, -3, -4}));
}

TEST_P(ElementwiseTest, DropoutKeepsScalesAndReproduces) {
  const DropoutDesc desc{{2, 3, 4, 5}, 0.5};
  KernelUnderTest k = Make(desc, GetParam());
  const KernelSignature& sig = k.kernel->signature();
  const int64_t count = desc.dims.elements();
  std::vector<double> x(count), dy(count, 3.0);
  for (int64_t i = 0; i < count; ++i) x[i] = i + 1;
  ASSERT_TRUE(FromDoubles(sig.inputs[0], k.buffers.x[0].data(), x).ok());
  ASSERT_TRUE(FromDoubles(sig.output, k.buffers.dy.data(), dy).ok());
  KernelArgs args = k.buffers.Args();
  for (uint64_t call = 0; call < 2; ++call) {
    ASSERT_TRUE(k.kernel->Forward(args).ok());
    ASSERT_TRUE(k.kernel->BackwardData(args).ok());
    const std::vector<double> y = ToDoubles(sig.output, k.buffers.y.data());
    const std::vector<double> dx = ToDoubles(sig.inputs[0], k.buffers.dx[0].data());
    int kept = 0;
    for (int64_t i = 0; i < count; ++i) {
      // The mask is the documented counter-based one: seed 0, node 0, the
      // kernel's own call count as the step (no step counter given), element i.
      const bool keep = DropoutKeeps(DropoutKey(0, 0, call), i, 0.5);
      kept += keep;
      EXPECT_EQ(y[i], keep ? 2 * x[i] : 0.0) << i;
      EXPECT_EQ(dx[i], keep ? 6.0 : 0.0) << i;
    }
    EXPECT_GT(kept, 0);
    EXPECT_LT(kept, count);
  }
  // A new kernel starts the count again: the same first mask.
  KernelUnderTest again = Make(desc, GetParam());
  ASSERT_TRUE(FromDoubles(sig.inputs[0], again.buffers.x[0].data(), x).ok());
  ASSERT_TRUE(again.kernel->Forward(again.buffers.Args()).ok());
  for (int64_t i = 0; i < count; ++i)
    EXPECT_EQ(ToDoubles(sig.output, again.buffers.y.data())[i],
              DropoutKeeps(DropoutKey(0, 0, 0), i, 0.5) ? 2 * x[i] : 0.0);
  // Inference: identity, in both directions.
  KernelArgs inference = k.buffers.Args(/*training=*/false);
  ASSERT_TRUE(k.kernel->Forward(inference).ok());
  EXPECT_EQ(ToDoubles(sig.output, k.buffers.y.data()), x);
  ASSERT_TRUE(k.kernel->BackwardData(inference).ok());
  EXPECT_EQ(ToDoubles(sig.inputs[0], k.buffers.dx[0].data()), dy);
}

INSTANTIATE_TEST_SUITE_P(Types, ElementwiseTest, ::testing::Values(DType::kF32, DType::kF64));

TEST(DropoutTest, KeepsAboutOneMinusRate) {
  for (double rate : {0.0, 0.1, 0.5, 0.9}) {
    int kept = 0;
    const int count = 100000;
    for (int i = 0; i < count; ++i) kept += DropoutKeeps(DropoutKey(1, 2, 3), i, rate);
    EXPECT_NEAR(static_cast<double>(kept) / count, 1 - rate, 0.01) << rate;
  }
}

// The y of one training forward of dropout `desc` created with `options`, on
// x = 1 everywhere (so y is 0 or 1/(1-rate) per element), at `step` when given.
std::vector<double> DropoutOutput(const DropoutDesc& desc, const KernelOptions& options,
                                  const uint64_t* step) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  auto kernel = backend->Create(desc, options, {});
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  if (!kernel.ok()) return {};
  const KernelSignature& sig = (*kernel)->signature();
  const int64_t count = desc.dims.elements();
  std::vector<float> x(count, 1.0f), y(count, -1.0f);
  std::vector<uint8_t> saved(sig.saved_bytes);
  KernelArgs args;
  args.x = {x.data()};
  args.y = y.data();
  args.saved = saved.data();
  args.step = step;
  EXPECT_TRUE((*kernel)->Forward(args).ok());
  return std::vector<double>(y.begin(), y.end());
}

TEST(DropoutTest, TwoLayersOfOneShapeDrawDifferentMasks) {
  const DropoutDesc desc{{4, 8, 3, 3}, 0.5};
  KernelOptions a, b;
  a.seed = b.seed = 7;
  a.node = 3;
  b.node = 9;
  const uint64_t step = 5;
  EXPECT_NE(DropoutOutput(desc, a, &step), DropoutOutput(desc, b, &step));
  EXPECT_EQ(DropoutOutput(desc, a, &step), DropoutOutput(desc, a, &step));
}

TEST(DropoutTest, TheStepCounterInMemoryKeysTheMask) {
  const DropoutDesc desc{{4, 8, 3, 3}, 0.5};
  KernelOptions options;
  options.seed = 11;
  const uint64_t step0 = 0, step1 = 1;
  // A replayed step (same kernel, counter advanced in memory) draws a new mask.
  EXPECT_NE(DropoutOutput(desc, options, &step0), DropoutOutput(desc, options, &step1));
  // The documented key.
  const std::vector<double> y = DropoutOutput(desc, options, &step1);
  for (int64_t i = 0; i < desc.dims.elements(); ++i)
    ASSERT_EQ(y[i], DropoutKeeps(DropoutKey(11, 0, 1), i, 0.5) ? 2.0 : 0.0) << i;
}

TEST(DropoutTest, ReplicasDrawTheSlicesOfTheWholeBatchsMask) {
  // Two replicas at batch 3 (offsets 0 and 3) equal one replica at batch 6.
  const Dims4 whole{6, 4, 5, 5}, part{3, 4, 5, 5};
  KernelOptions options;
  options.seed = 3;
  options.node = 4;
  const uint64_t step = 2;
  const std::vector<double> all = DropoutOutput(DropoutDesc{whole, 0.5}, options, &step);
  std::vector<double> joined = DropoutOutput(DropoutDesc{part, 0.5}, options, &step);
  options.batch_offset = 3;
  const std::vector<double> second = DropoutOutput(DropoutDesc{part, 0.5}, options, &step);
  joined.insert(joined.end(), second.begin(), second.end());
  EXPECT_EQ(joined, all);
  // Not trivially so: the second replica's mask differs from the first's.
  EXPECT_NE(second, DropoutOutput(DropoutDesc{part, 0.5},
                                  KernelOptions{DType::kF32, Precision::kFp32, 3, 4, 0}, &step));
}

TEST(ElementwiseGradientTest, Relu) {
  for (Dims4 dims : {Dims4{2, 3, 5, 5}, Dims4{1, 1, 7, 3}}) {
    KernelUnderTest k = Make(ReluDesc{dims}, DType::kF64);
    FillDefaults(k.buffers, 17);
    // Keep |x| well above the step: relu has a kink at 0.
    const TensorSpec& spec = k.kernel->signature().inputs[0];
    std::vector<double> x = ToDoubles(spec, k.buffers.x[0].data());
    for (double& v : x) v = v < 0 ? v - 0.01 : v + 0.01;
    ASSERT_TRUE(FromDoubles(spec, k.buffers.x[0].data(), x).ok());
    absl::Status status = CheckGradients(*k.kernel, k.buffers);
    EXPECT_TRUE(status.ok()) << status;
  }
}

TEST(ElementwiseGradientTest, AddAndConcat) {
  ChannelPadDesc pad;
  pad.dims = {2, 3, 2, 3};
  pad.before = 2;
  pad.after = 1;
  for (OpDesc desc : {OpDesc(AddDesc{{2, 3, 3, 5}}), OpDesc(ConcatDesc{2, 3, 1, {1, 3, 2}}),
                      OpDesc(ConcatDesc{1, 5, 3, {4}}), OpDesc(pad)}) {
    KernelUnderTest k = Make(desc, DType::kF64);
    FillDefaults(k.buffers, 19);
    absl::Status status = CheckGradients(*k.kernel, k.buffers);
    EXPECT_TRUE(status.ok()) << OpDescToString(desc) << ": " << status;
  }
}

TEST(ElementwiseGradientTest, AddWithFusedRelu) {
  for (Dims4 dims : {Dims4{2, 3, 3, 5}, Dims4{1, 2, 1, 7}}) {
    AddDesc desc{dims};
    desc.activation = ActivationKind::kRelu;
    KernelUnderTest k = Make(desc, DType::kF64);
    FillDefaults(k.buffers, 29);
    // Keep |x0 + x1| well above the step: the ReLU has a kink at 0.
    const TensorSpec& spec = k.kernel->signature().inputs[0];
    std::vector<double> x0 = ToDoubles(spec, k.buffers.x[0].data());
    const std::vector<double> x1 = ToDoubles(spec, k.buffers.x[1].data());
    int masked = 0;
    for (size_t i = 0; i < x0.size(); ++i) {
      const double sum = x0[i] + x1[i];
      if (std::fabs(sum) < 0.01) x0[i] += sum < 0 ? -0.02 : 0.02;
      masked += x0[i] + x1[i] < 0;
    }
    ASSERT_GT(masked, 0);  // the mask matters somewhere
    ASSERT_TRUE(FromDoubles(spec, k.buffers.x[0].data(), x0).ok());
    absl::Status status = CheckGradients(*k.kernel, k.buffers);
    EXPECT_TRUE(status.ok()) << desc.ToString() << ": " << status;
  }
}

TEST(ElementwiseGradientTest, Dropout) {
  for (double rate : {0.0, 0.3, 0.5}) {
    const DropoutDesc desc{{2, 3, 3, 3}, rate};
    KernelUnderTest k = Make(desc, DType::kF64);
    FillDefaults(k.buffers, 23);
    GradientCheckOptions options;
    // The mask follows the call count: each evaluation starts from call 0.
    std::unique_ptr<Backend> backend = CreateReferenceBackend();
    options.fresh_kernel = [&]() { return backend->Create(desc, DType::kF64, {}); };
    absl::Status status = CheckGradients(*k.kernel, k.buffers, options);
    EXPECT_TRUE(status.ok()) << desc.ToString() << ": " << status;
  }
}

TEST(ElementwiseSignatureTest, Liveness) {
  struct Case {
    OpDesc desc;
    bool reads_inputs;
    size_t saved_bytes;
  };
  for (const Case& c :
       {Case{ReluDesc{{2, 3, 4, 5}}, true, 0}, Case{AddDesc{{2, 3, 4, 5}}, false, 0},
        Case{ConcatDesc{2, 4, 5, {1, 2}}, false, 0},
        Case{DropoutDesc{{2, 3, 4, 5}, 0.5}, false, 120}}) {
    KernelUnderTest k = Make(c.desc, DType::kF32);
    const KernelSignature& sig = k.kernel->signature();
    EXPECT_EQ(sig.backward_reads_inputs, c.reads_inputs) << OpDescToString(c.desc);
    EXPECT_FALSE(sig.backward_reads_output);
    EXPECT_GE(sig.saved_bytes, c.saved_bytes);
    EXPECT_TRUE(sig.params.empty());
    EXPECT_TRUE(sig.state.empty());
  }
}

}  // namespace
}  // namespace cnnbench
