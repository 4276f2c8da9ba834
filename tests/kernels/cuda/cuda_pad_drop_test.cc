// The cuda spatial pad and drop-path kernels. Host-only (run everywhere):
// their per-element arithmetic (kernels/cuda/pad_drop_math.h) against the
// reference backend in NCHW and NHWC. On a GPU: both ops against the
// reference in every precision, in training and inference.
#include <cstdint>
#include <string>
#include <vector>

#include "core/random.h"
#include "gtest/gtest.h"
#include "kernels/cuda/pad_drop_math.h"
#include "kernels/desc.h"
#include "tests/kernels/cuda/cuda_test_util.h"
#include "tests/kernels/gradient_check.h"

namespace cnnbench {
namespace {

using cuda::ActivationGeometry;
using cuda_test::CompareOptions;
using cuda_test::CompareWithReference;
using cuda_test::Cuda;

#define SKIP_WITHOUT_GPU() \
  if (Cuda() == nullptr) GTEST_SKIP() << cuda_test::NoGpuReason()

// The reference's (fp64, plain) forward output and backward dx for `text`
// with x and dy the integers from `seed`.
struct ReferenceRun {
  std::vector<double> x, y, dy, dx;
};
ReferenceRun RunReference(const std::string& text, const KernelOptions& options) {
  ReferenceRun run;
  auto kernel = cuda_test::Reference()->Create(*ParseOpDesc(text), options, {});
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  const KernelSignature& sig = (*kernel)->signature();
  auto buffers = kernel_test::AllocateBuffers(sig);
  EXPECT_TRUE(buffers.ok());
  kernel_test::FillIntegers(sig.inputs[0], buffers->x[0].data(), 5, -9, 9);
  kernel_test::FillIntegers(sig.output, buffers->dy.data(), 6, -9, 9);
  EXPECT_TRUE((*kernel)->Forward(buffers->Args()).ok());
  EXPECT_TRUE((*kernel)->BackwardData(buffers->Args()).ok());
  run.x = kernel_test::ToDoubles(sig.inputs[0], buffers->x[0].data());
  run.y = kernel_test::ToDoubles(sig.output, buffers->y.data());
  run.dy = kernel_test::ToDoubles(sig.output, buffers->dy.data());
  run.dx = kernel_test::ToDoubles(sig.inputs[0], buffers->dx[0].data());
  return run;
}

// Logical (N,C,H,W) values stored as `g` says, and back.
std::vector<double> Store(const ActivationGeometry& g, const std::vector<double>& logical) {
  std::vector<double> stored(logical.size());
  for (int64_t i = 0; i < g.elements(); ++i) stored[i] = logical[g.LogicalIndex(i)];
  return stored;
}
std::vector<double> Logical(const ActivationGeometry& g, const std::vector<double>& stored) {
  std::vector<double> logical(stored.size());
  for (int64_t i = 0; i < g.elements(); ++i) logical[g.LogicalIndex(i)] = stored[i];
  return logical;
}

// What the copy kernel computes, element by element on the host.
std::vector<double> ShiftedCopy(const cuda::ShiftGeometry& g, const std::vector<double>& from) {
  std::vector<double> to(g.to.elements());
  for (int64_t at = 0; at < g.to.elements(); ++at) {
    const int64_t source = cuda::ShiftSource(g, at);
    to[at] = source < 0 ? 0.0 : from[source];
  }
  return to;
}

TEST(CudaPadDropHostTest, ShiftSourceIsTheReferencesPadInBothLayouts) {
  for (const char* text : {"spad:mb2ic3ih5iw4_t-1b2l1r-2", "spad:mb1ic4ih7iw7_t-1b1l-1r1"}) {
    const SpatialPadDesc d = std::get<SpatialPadDesc>(*ParseOpDesc(text));
    const ReferenceRun ref = RunReference(text, KernelOptions::ForDType(DType::kF64));
    for (bool nhwc : {false, true}) {
      const Dims4 in = d.dims, out = d.output();
      const ActivationGeometry gi{in.n, in.c, in.h, in.w, nhwc};
      const ActivationGeometry go{out.n, out.c, out.h, out.w, nhwc};
      const cuda::ShiftGeometry forward{gi, go, d.top, d.left};
      const cuda::ShiftGeometry backward{go, gi, -d.top, -d.left};
      EXPECT_EQ(Logical(go, ShiftedCopy(forward, Store(gi, ref.x))), ref.y) << text << nhwc;
      EXPECT_EQ(Logical(gi, ShiftedCopy(backward, Store(go, ref.dy))), ref.dx) << text << nhwc;
    }
  }
}

// Each stored element times its example's scale: the reference's drop-path
// for the same key, in both layouts.
TEST(CudaPadDropHostTest, DropPathScalesAreTheReferencesPerExample) {
  const std::string text = "droppath:mb16ic3ih2iw5_k0.5r0";
  const DropPathDesc d = std::get<DropPathDesc>(*ParseOpDesc(text));
  KernelOptions options = KernelOptions::ForDType(DType::kF64);
  options.seed = 9;
  options.node = 4;
  options.batch_offset = 32;
  const ReferenceRun ref = RunReference(text, options);
  const uint64_t key = DropoutKey(9, 4, 0);  // the first training forward: step 0
  for (bool nhwc : {false, true}) {
    const ActivationGeometry g{d.dims.n, d.dims.c, d.dims.h, d.dims.w, nhwc};
    const std::vector<double> x = Store(g, ref.x);
    std::vector<double> y(x.size());
    for (int64_t at = 0; at < g.elements(); ++at) {
      const double p = DropPathKeepAt(d.keep, d.ramp_steps, 0);
      y[at] = x[at] * DropPathScale(key, 32 + cuda::ExampleAt(g, at), p);
    }
    EXPECT_EQ(Logical(g, y), ref.y) << nhwc;
  }
}

constexpr Precision kAllPrecisions[] = {Precision::kFp32, Precision::kTf32, Precision::kFp16,
                                        Precision::kBf16};

TEST(CudaPadDropTest, MatchTheReferenceInEveryPrecision) {
  SKIP_WITHOUT_GPU();
  for (const char* text : {"spad:mb2ic3ih5iw4_t-1b2l1r-2", "spad:mb2ic16ih7iw7_t-1b1l-1r1",
                           "droppath:mb16ic3ih2iw3_k0.5r0", "droppath:mb8ic16ih3iw3_k0.7r100"})
    for (Precision p : kAllPrecisions)
      for (bool training : {true, false}) {
        CompareOptions o;
        o.precision = p;
        o.training = training;
        // Integers are exact in every type; a kept example's x / p rounds once.
        const double low = p == Precision::kBf16 ? 1.6e-2 : p == Precision::kFp16 ? 2e-3 : 1e-7;
        o.forward_rtol = o.backward_rtol = low;
        const absl::Status status = CompareWithReference(*ParseOpDesc(text), o);
        EXPECT_TRUE(status.ok()) << text << " " << PrecisionName(p) << ": " << status;
      }
}

}  // namespace
}  // namespace cnnbench
