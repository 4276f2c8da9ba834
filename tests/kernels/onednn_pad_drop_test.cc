// The spatial pad (NASNet's shift) and drop-path ops: their strings, the
// reference's exact arithmetic on hand-worked cases, drop-path's mask (one
// draw per example, kept examples scaled by 1 / p, the backward under the
// same mask, the identity in inference) and its keep-probability ramp, and
// the oneDNN kernels against the reference in plain and blocked layouts.
#include <cstdint>
#include <string>
#include <vector>

#include "core/random.h"
#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "kernels/drop_path.h"
#include "kernels/op_traits.h"
#include "kernels/reference/reference_backend.h"
#include "tests/kernels/gradient_check.h"
#include "tests/kernels/onednn_test_util.h"

namespace cnnbench {
namespace {

using kernel_test::AllocateBuffers;
using kernel_test::FromDoubles;
using kernel_test::KernelBuffers;
using kernel_test::ToDoubles;
using onednn_test::CompareOptions;
using onednn_test::CompareWithReference;
using onednn_test::OneDnn;

template <typename T>
T ParseAs(const std::string& text) {
  absl::StatusOr<OpDesc> desc = ParseOpDesc(text);
  EXPECT_TRUE(desc.ok()) << desc.status();
  return std::get<T>(*desc);
}

void ExpectError(const std::string& text, const std::string& fragment) {
  absl::StatusOr<OpDesc> desc = ParseOpDesc(text);
  ASSERT_FALSE(desc.ok()) << text;
  EXPECT_NE(std::string(desc.status().message()).find(fragment), std::string::npos)
      << desc.status();
}

TEST(SpatialPadDescTest, RoundTripsWithSignedSides) {
  for (const char* text : {"spad:mb32ic44ih111iw111_t-1b1l-1r1", "spad:mb2ic3ih5iw4_t-1b2l1r-2",
                           "spad:mb1ic1ih1iw1_t0b0l0r0"}) {
    const auto d = ParseAs<SpatialPadDesc>(text);
    EXPECT_EQ(d.ToString(), text);
    EXPECT_EQ(OpDescToString(d), text);
  }
  const auto shift = ParseAs<SpatialPadDesc>("spad:mb32ic44ih111iw111_t-1b1l-1r1");
  EXPECT_EQ(shift.top, -1);
  EXPECT_EQ(shift.right, 1);
  EXPECT_EQ(shift.output(), (Dims4{32, 44, 111, 111}));
  EXPECT_EQ(ParseAs<SpatialPadDesc>("spad:mb2ic3ih5iw4_t-1b2l1r-2").output(), (Dims4{2, 3, 6, 3}));
  ExpectError("spad:mb1ic1ih2iw2_t-1b-1l0r0", "no output");
  ExpectError("spad:mb1ic1ih2iw2_t0b0l0", "'r'");
  ExpectError("spad:mb1ic1ih2iw2_t-b0l0r0", "'t'");
}

TEST(DropPathDescTest, RoundTripsAndChecksItsFields) {
  for (const char* text : {"droppath:mb16ic168ih42iw42_k0.7r250000", "droppath:mb6ic3ih2iw3_k0.5r0",
                           "droppath:mb1ic1ih1iw1_k1r0"}) {
    EXPECT_EQ(ParseAs<DropPathDesc>(text).ToString(), text);
  }
  const auto d = ParseAs<DropPathDesc>("droppath:mb16ic168ih42iw42_k0.7r250000");
  EXPECT_EQ(d.keep, 0.7);
  EXPECT_EQ(d.ramp_steps, 250000);
  ExpectError("droppath:mb2ic3ih4iw4_k0r0", "'k'");
  ExpectError("droppath:mb2ic3ih4iw4_k1.5r0", "'k'");
  ExpectError("droppath:mb2ic3ih4iw4_k0.5", "'r'");
  EXPECT_EQ(OpKind(d), "droppath");
}

// Values 1..n as a plain fp64 tensor of the kernel's input 0.
std::vector<double> Iota(int64_t count) {
  std::vector<double> v(count);
  for (int64_t i = 0; i < count; ++i) v[i] = static_cast<double>(i + 1);
  return v;
}

struct KernelRun {
  std::unique_ptr<Kernel> kernel;
  KernelBuffers buffers;
};

KernelRun Create(Backend& backend, const OpDesc& desc, const KernelOptions& options) {
  KernelRun run;
  auto kernel = backend.Create(desc, options, {});
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  run.kernel = *std::move(kernel);
  auto buffers = AllocateBuffers(run.kernel->signature());
  EXPECT_TRUE(buffers.ok()) << buffers.status();
  run.buffers = *std::move(buffers);
  return run;
}

// NASNet's shift on a 3x3 plane: y(i, j) = x(i + 1, j + 1), zeros on the
// last row and column; dx(i, j) = dy(i - 1, j - 1), zeros on the first.
TEST(SpatialPadReferenceTest, ShiftsByOnePixelAndBack) {
  std::unique_ptr<Backend> reference = CreateReferenceBackend();
  KernelRun r = Create(*reference, ParseAs<SpatialPadDesc>("spad:mb1ic1ih3iw3_t-1b1l-1r1"),
                       KernelOptions::ForDType(DType::kF64));
  const KernelSignature& sig = r.kernel->signature();
  ASSERT_TRUE(FromDoubles(sig.inputs[0], r.buffers.x[0].data(), Iota(9)).ok());
  ASSERT_TRUE(r.kernel->Forward(r.buffers.Args()).ok());
  EXPECT_EQ(ToDoubles(sig.output, r.buffers.y.data()),
            (std::vector<double>{5, 6, 0, 8, 9, 0, 0, 0, 0}));
  ASSERT_TRUE(FromDoubles(sig.output, r.buffers.dy.data(), Iota(9)).ok());
  ASSERT_TRUE(r.kernel->BackwardData(r.buffers.Args()).ok());
  EXPECT_EQ(ToDoubles(sig.inputs[0], r.buffers.dx[0].data()),
            (std::vector<double>{0, 0, 0, 0, 1, 2, 0, 4, 5}));
}

// A pad on top and left with a crop at the bottom and right: 2x3 -> 2x3.
TEST(SpatialPadReferenceTest, PadsAndCropsPerSide) {
  std::unique_ptr<Backend> reference = CreateReferenceBackend();
  KernelRun r = Create(*reference, ParseAs<SpatialPadDesc>("spad:mb1ic1ih2iw3_t1b-1l2r-2"),
                       KernelOptions::ForDType(DType::kF64));
  const KernelSignature& sig = r.kernel->signature();
  ASSERT_TRUE(FromDoubles(sig.inputs[0], r.buffers.x[0].data(), Iota(6)).ok());
  ASSERT_TRUE(r.kernel->Forward(r.buffers.Args()).ok());
  EXPECT_EQ(ToDoubles(sig.output, r.buffers.y.data()), (std::vector<double>{0, 0, 0, 0, 0, 1}));
}

TEST(OneDnnSpatialPadTest, MatchesTheReference) {
  ASSERT_NE(OneDnn(), nullptr);
  for (const char* text : {"spad:mb2ic3ih5iw4_t-1b2l1r-2", "spad:mb2ic16ih7iw7_t-1b1l-1r1",
                           "spad:mb1ic2ih3iw3_t2b2l-2r3"}) {
    const absl::Status status = CompareWithReference(*ParseOpDesc(text));
    EXPECT_TRUE(status.ok()) << text << ": " << status;
  }
}

// The examples `DropPathScale` keeps under the key of (seed, node, step),
// computed here from core/random.h directly.
std::vector<bool> ExpectedKept(uint64_t seed, uint64_t node, uint64_t step, int64_t first,
                               int64_t n, double p) {
  std::vector<bool> kept(n);
  for (int64_t i = 0; i < n; ++i)
    kept[i] = DropoutKeeps(DropoutKey(seed, node, step), static_cast<uint64_t>(first + i), 1 - p);
  return kept;
}

// At a fixed keep 0.5: each example wholly kept (x / 0.5) or zeroed, as
// core/random.h draws for its global index; the backward scales dy under
// the same mask; in inference both passes are the identity.
TEST(DropPathReferenceTest, DropsWholeExamplesAtAFixedRate) {
  std::unique_ptr<Backend> reference = CreateReferenceBackend();
  const auto d = ParseAs<DropPathDesc>("droppath:mb64ic2ih2iw1_k0.5r0");
  KernelOptions options = KernelOptions::ForDType(DType::kF64);
  options.seed = 11;
  options.node = 5;
  options.batch_offset = 128;
  KernelRun r = Create(*reference, d, options);
  const KernelSignature& sig = r.kernel->signature();
  const int64_t per = 4;
  ASSERT_TRUE(FromDoubles(sig.inputs[0], r.buffers.x[0].data(), Iota(64 * per)).ok());
  ASSERT_TRUE(FromDoubles(sig.output, r.buffers.dy.data(), Iota(64 * per)).ok());
  const uint64_t step = 3;
  KernelArgs args = r.buffers.Args();
  args.step = &step;
  ASSERT_TRUE(r.kernel->Forward(args).ok());
  ASSERT_TRUE(r.kernel->BackwardData(args).ok());
  const std::vector<double> y = ToDoubles(sig.output, r.buffers.y.data());
  const std::vector<double> dx = ToDoubles(sig.inputs[0], r.buffers.dx[0].data());
  const std::vector<bool> kept = ExpectedKept(11, 5, 3, 128, 64, 0.5);
  int kept_count = 0;
  for (int64_t n = 0; n < 64; ++n) {
    kept_count += kept[n];
    for (int64_t i = n * per; i < (n + 1) * per; ++i) {
      EXPECT_EQ(y[i], kept[n] ? 2.0 * (i + 1) : 0.0) << "example " << n;
      EXPECT_EQ(dx[i], kept[n] ? 2.0 * (i + 1) : 0.0) << "example " << n;
    }
  }
  EXPECT_GT(kept_count, 16);  // Binomial(64, 0.5): far inside [17, 47]
  EXPECT_LT(kept_count, 48);
  KernelArgs inference = r.buffers.Args(/*training=*/false);
  ASSERT_TRUE(r.kernel->Forward(inference).ok());
  ASSERT_TRUE(r.kernel->BackwardData(inference).ok());
  EXPECT_EQ(ToDoubles(sig.output, r.buffers.y.data()), Iota(64 * per));
  EXPECT_EQ(ToDoubles(sig.inputs[0], r.buffers.dx[0].data()), Iota(64 * per));
}

// nasnet_utils' ramp: p = 1 - min(1, step / ramp) * (1 - keep).
TEST(DropPathScheduleTest, RampsFromOneToKeep) {
  EXPECT_EQ(DropPathKeepAt(0.7, 250000, 0), 1.0);
  EXPECT_DOUBLE_EQ(DropPathKeepAt(0.7, 250000, 125000), 0.85);
  EXPECT_DOUBLE_EQ(DropPathKeepAt(0.7, 250000, 250000), 0.7);
  EXPECT_DOUBLE_EQ(DropPathKeepAt(0.7, 250000, 1000000), 0.7);
  EXPECT_EQ(DropPathKeepAt(0.7, 0, 0), 0.7);  // no ramp: the fixed rate
  // A benchmark's 110 steps of a 250000-step ramp keep nearly everything.
  EXPECT_GT(DropPathKeepAt(0.7, 250000, 110), 0.9998);
  EXPECT_EQ(DropPathScale(DropoutKey(1, 2, 3), 4, 1.0), 1.0);  // p = 1 keeps all, unscaled
}

// Through the kernel: at step 0 of a ramp every example is kept unscaled;
// half-way (p = 0.75) the kept ones are scaled by 4/3.
TEST(DropPathReferenceTest, ReadsTheStepForTheRamp) {
  std::unique_ptr<Backend> reference = CreateReferenceBackend();
  KernelRun r = Create(*reference, ParseAs<DropPathDesc>("droppath:mb32ic1ih1iw3_k0.5r100"),
                       KernelOptions::ForDType(DType::kF64));
  const KernelSignature& sig = r.kernel->signature();
  ASSERT_TRUE(FromDoubles(sig.inputs[0], r.buffers.x[0].data(), Iota(96)).ok());
  KernelArgs args = r.buffers.Args();
  uint64_t step = 0;
  args.step = &step;
  ASSERT_TRUE(r.kernel->Forward(args).ok());
  EXPECT_EQ(ToDoubles(sig.output, r.buffers.y.data()), Iota(96));
  step = 50;
  ASSERT_TRUE(r.kernel->Forward(args).ok());
  const std::vector<double> y = ToDoubles(sig.output, r.buffers.y.data());
  const std::vector<bool> kept = ExpectedKept(0, 0, 50, 0, 32, 0.75);
  for (int64_t i = 0; i < 96; ++i) EXPECT_DOUBLE_EQ(y[i], kept[i / 3] ? (i + 1) / 0.75 : 0.0) << i;
}

// Plain, from a channel-blocked producer (taken as it is) and one whose
// channels pad the block; in training and in inference.
TEST(OneDnnDropPathTest, MatchesTheReference) {
  ASSERT_NE(OneDnn(), nullptr);
  for (bool training : {true, false}) {
    CompareOptions o;
    o.training = training;
    EXPECT_TRUE(CompareWithReference(*ParseOpDesc("droppath:mb16ic3ih2iw3_k0.5r0"), o).ok());
    o.onednn_inputs = {onednn_test::ConvOutputSpec(8, 16, 3)};
    absl::Status status = CompareWithReference(*ParseOpDesc("droppath:mb8ic16ih3iw3_k0.6r0"), o);
    EXPECT_TRUE(status.ok()) << status;
    o.onednn_inputs = {onednn_test::ConvOutputSpec(8, 5, 3)};
    status = CompareWithReference(*ParseOpDesc("droppath:mb8ic5ih3iw3_k0.6r0"), o);
    EXPECT_TRUE(status.ok()) << status;
  }
}

TEST(OneDnnDropPathTest, KeepsABlockedLayoutAsGiven) {
  ASSERT_NE(OneDnn(), nullptr);
  const TensorSpec blocked = onednn_test::ConvOutputSpec(8, 16, 3);
  auto kernel =
      OneDnn()->Create(*ParseOpDesc("droppath:mb8ic16ih3iw3_k0.6r0"), DType::kF32, {blocked});
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ((*kernel)->signature().inputs[0].layout, blocked.layout);
}

}  // namespace
}  // namespace cnnbench
