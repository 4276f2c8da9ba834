// The cuda backend's pooling, batch norm, LRN, dropout, concat, add and
// softmax cross-entropy. Host-only (run everywhere): the per-element
// arithmetic of the own kernels (kernels/cuda/op_math.h) against the
// reference backend in NCHW and NHWC, and dropout's mask against
// core/random.h. On a GPU: every op against the reference in every
// precision, with stated tolerances and poisoned outputs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/random.h"
#include "gtest/gtest.h"
#include "kernels/cuda/bn_graph.h"
#include "kernels/cuda/conv_graph.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/op_math.h"
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

constexpr Precision kAllPrecisions[] = {Precision::kFp32, Precision::kTf32, Precision::kFp16,
                                        Precision::kBf16};

PoolDesc MakePool(PoolAlgorithm algorithm, int64_t n, int64_t c, int64_t h, int64_t w,
                  int64_t kernel, int64_t stride, Padding padding, int64_t pad_before = 0,
                  int64_t pad_after = 0) {
  PoolDesc d;
  d.algorithm = algorithm;
  d.n = n;
  d.c = c;
  d.h = *MakeWindowDim(h, kernel, stride, padding, 1, pad_before, pad_after);
  d.w = *MakeWindowDim(w, kernel, stride, padding, 1, pad_before, pad_after);
  return d;
}

// Odd sizes, stride > 1, SAME's pad after, explicit symmetric pads, VALID.
std::vector<PoolDesc> PoolCases() {
  std::vector<PoolDesc> cases;
  for (PoolAlgorithm a :
       {PoolAlgorithm::kMax, PoolAlgorithm::kAvg, PoolAlgorithm::kAvgExcludePad}) {
    cases.push_back(MakePool(a, 2, 3, 7, 9, 3, 2, Padding::kSame));
    cases.push_back(MakePool(a, 1, 5, 6, 5, 3, 2, Padding::kExplicit, 1, 1));
    cases.push_back(MakePool(a, 3, 2, 5, 5, 2, 1, Padding::kValid));
    cases.push_back(MakePool(a, 2, 4, 8, 8, 3, 3, Padding::kSame));
  }
  return cases;
}

// Logical (N,C,H,W) values stored as `g` says.
std::vector<float> Store(const ActivationGeometry& g, const std::vector<double>& logical) {
  std::vector<float> stored(logical.size());
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t y = 0; y < g.h; ++y)
        for (int64_t x = 0; x < g.w; ++x)
          stored[g.Offset(n, c, y, x)] =
              static_cast<float>(logical[((n * g.c + c) * g.h + y) * g.w + x]);
  return stored;
}

std::vector<double> Logical(const ActivationGeometry& g, const std::vector<float>& stored) {
  std::vector<double> logical(stored.size());
  for (int64_t i = 0; i < static_cast<int64_t>(stored.size()); ++i)
    logical[g.LogicalIndex(i)] = stored[i];
  return logical;
}

cuda::PoolGeometry PoolGeometryOf(const PoolDesc& d, bool nhwc) {
  cuda::PoolGeometry g;
  g.kind = d.algorithm == PoolAlgorithm::kMax   ? cuda::PoolKind::kMax
           : d.algorithm == PoolAlgorithm::kAvg ? cuda::PoolKind::kAvg
                                                : cuda::PoolKind::kAvgExcludePad;
  g.input = ActivationGeometry{d.n, d.c, d.h.in, d.w.in, nhwc};
  g.output = ActivationGeometry{d.n, d.c, d.h.out, d.w.out, nhwc};
  g.h = cuda::PoolWindow{d.h.in, d.h.out, d.h.kernel, d.h.stride, d.h.pad_before};
  g.w = cuda::PoolWindow{d.w.in, d.w.out, d.w.kernel, d.w.stride, d.w.pad_before};
  return g;
}

TEST(CudaOpsHostTest, GeometryOffsetsAndLogicalIndicesAgree) {
  for (bool nhwc : {false, true}) {
    const ActivationGeometry g{2, 3, 4, 5, nhwc};
    std::vector<bool> seen(static_cast<size_t>(g.elements()), false);
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t c = 0; c < 3; ++c)
        for (int64_t y = 0; y < 4; ++y)
          for (int64_t x = 0; x < 5; ++x) {
            const int64_t at = g.Offset(n, c, y, x);
            EXPECT_EQ(g.LogicalIndex(at), ((n * 3 + c) * 4 + y) * 5 + x);
            int64_t n2, c2, y2, x2;
            g.Coordinates(at, &n2, &c2, &y2, &x2);
            EXPECT_TRUE(n2 == n && c2 == c && y2 == y && x2 == x) << at;
            seen[at] = true;
          }
    for (bool s : seen) EXPECT_TRUE(s);
  }
}

// The pooling kernels' arithmetic, run on the host, against the reference.
TEST(CudaOpsHostTest, PoolArithmeticMatchesTheReference) {
  for (const PoolDesc& desc : PoolCases()) {
    for (bool integers : {true, false}) {
      auto ref = kernel_test::CreateKernelUnderTest(*cuda_test::Reference(), desc, DType::kF64);
      ASSERT_TRUE(ref.ok()) << ref.status();
      kernel_test::KernelBuffers& b = ref->buffers;
      const TensorSpec& xs = b.signature.inputs[0];
      const TensorSpec& ys = b.signature.output;
      // Integers make max ties: the first maximum in row-major order must win.
      if (integers) {
        kernel_test::FillIntegers(xs, b.x[0].data(), 5, -2, 2);
        kernel_test::FillIntegers(ys, b.dy.data(), 6, -3, 3);
      } else {
        kernel_test::FillUniform(xs, b.x[0].data(), 5, -1, 1);
        kernel_test::FillUniform(ys, b.dy.data(), 6, -1, 1);
      }
      ASSERT_TRUE(ref->kernel->Forward(b.Args()).ok());
      ASSERT_TRUE(ref->kernel->BackwardData(b.Args()).ok());
      const std::vector<double> x = kernel_test::ToDoubles(xs, b.x[0].data());
      const std::vector<double> dy = kernel_test::ToDoubles(ys, b.dy.data());
      for (bool nhwc : {false, true}) {
        const cuda::PoolGeometry g = PoolGeometryOf(desc, nhwc);
        const std::vector<float> x_stored = Store(g.input, x), dy_stored = Store(g.output, dy);
        std::vector<float> y(static_cast<size_t>(g.output.elements()));
        std::vector<int32_t> argmax(y.size(), -1);
        for (int64_t at = 0; at < g.output.elements(); ++at) {
          int64_t n, c, p, q;
          g.output.Coordinates(at, &n, &c, &p, &q);
          y[at] = cuda::PoolForwardAt(
              g, n, c, p, q, [&](int64_t i) { return x_stored[i]; }, &argmax[at]);
        }
        std::vector<float> dx(static_cast<size_t>(g.input.elements()));
        for (int64_t at = 0; at < g.input.elements(); ++at) {
          int64_t n, c, h, w;
          g.input.Coordinates(at, &n, &c, &h, &w);
          dx[at] = cuda::PoolBackwardAt(
              g, n, c, h, w, [&](int64_t i) { return dy_stored[i]; },
              [&](int64_t i) { return argmax[i]; });
        }
        const std::string what = absl::StrCat(desc.ToString(), nhwc ? " nhwc" : " nchw");
        EXPECT_TRUE(kernel_test::CompareTensors(what + " y", Logical(g.output, y),
                                                kernel_test::ToDoubles(ys, b.y.data()), 1e-6, 1e-6)
                        .ok())
            << what;
        absl::Status dx_status =
            kernel_test::CompareTensors(what + " dx", Logical(g.input, dx),
                                        kernel_test::ToDoubles(xs, b.dx[0].data()), 1e-6, 1e-6);
        EXPECT_TRUE(dx_status.ok()) << dx_status;
      }
    }
  }
}

// The running statistics the graph path updates from a batch's mean and
// inverse std (op_math.h), against the reference batch norm's own update
// (unbiased variance, factor 1 - momentum), starting from the same state.
TEST(CudaOpsHostTest, BatchNormRunningUpdateMatchesTheReference) {
  for (const char* text : {"bn:mb4ic3ih5iw2_eps0.001mom0.9", "bn:mb2ic2ih1iw1_eps1e-05mom0.5",
                           "bn:mb3ic4ih3iw3_eps0.1mom0.997_relu"}) {
    const BatchNormDesc desc = std::get<BatchNormDesc>(*ParseOpDesc(text));
    auto ref = kernel_test::CreateKernelUnderTest(*cuda_test::Reference(), desc, DType::kF64);
    ASSERT_TRUE(ref.ok()) << ref.status();
    kernel_test::KernelBuffers& b = ref->buffers;
    kernel_test::FillUniform(b.signature.inputs[0], b.x[0].data(), 7, -2, 3);
    for (size_t i = 0; i < b.params.size(); ++i)
      kernel_test::FillUniform(b.signature.params[i], b.params[i].data(), 8 + i, -1, 1);
    kernel_test::FillUniform(b.signature.state[0], b.state[0].data(), 11, -1, 1);
    kernel_test::FillUniform(b.signature.state[1], b.state[1].data(), 12, 0.5, 2);
    const std::vector<double> x = kernel_test::ToDoubles(b.signature.inputs[0], b.x[0].data());
    std::vector<double> running_mean =
        kernel_test::ToDoubles(b.signature.state[0], b.state[0].data());
    std::vector<double> running_var =
        kernel_test::ToDoubles(b.signature.state[1], b.state[1].data());
    ASSERT_TRUE(ref->kernel->Forward(b.Args()).ok());
    const Dims4& d = desc.dims;
    const int64_t m = d.n * d.h * d.w;
    for (int64_t c = 0; c < d.c; ++c) {
      double sum = 0, sq = 0;
      for (int64_t n = 0; n < d.n; ++n)
        for (int64_t i = 0; i < d.h * d.w; ++i) {
          const double v = x[(n * d.c + c) * d.h * d.w + i];
          sum += v;
          sq += v * v;
        }
      const double mean = sum / m, var = sq / m - mean * mean;
      float rm = static_cast<float>(running_mean[c]), rv = static_cast<float>(running_var[c]);
      cuda::BatchNormRunningUpdate(static_cast<float>(mean),
                                   static_cast<float>(1 / std::sqrt(var + desc.epsilon)),
                                   desc.epsilon, m, desc.momentum, &rm, &rv);
      EXPECT_NEAR(rm, kernel_test::GetElement(b.signature.state[0], b.state[0].data(), c), 1e-6)
          << text << " channel " << c;
      EXPECT_NEAR(rv, kernel_test::GetElement(b.signature.state[1], b.state[1].data(), c),
                  2e-6 * (1 + std::fabs(rv)))
          << text << " channel " << c;
    }
  }
}

// The batch norm graphs (forward with the ReLU, backward with the dReLU)
// validate without a device for the layouts and types the kernel asks for.
TEST(CudaOpsHostTest, BatchNormGraphsValidateWithoutADevice) {
  if (!cuda::ConvGraphsAvailable()) GTEST_SKIP() << cuda::ConvGraphsUnavailableReason();
  for (DType type : {DType::kBF16, DType::kF16, DType::kF32})
    for (bool relu : {false, true}) {
      cuda::BnProblem p;
      p.n = 4;
      p.c = 24;
      p.h = 7;
      p.w = 5;
      p.io_type = type;
      p.relu = relu;
      p.what = "bn";
      auto graphs = cuda::BnGraphs::Validate(p);
      ASSERT_TRUE(graphs.ok()) << DTypeName(type) << (relu ? " relu: " : ": ") << graphs.status();
      // With a ReLU, the form cudnn-frontend's samples build (a boolean
      // mask from the forward graph) validates, and is tried first.
      EXPECT_EQ((*graphs)->relu_form(), relu ? cuda::BnReluForm::kMask : cuda::BnReluForm::kNone)
          << DTypeName(type);
    }
  cuda::BnProblem empty;
  empty.what = "bn:empty";
  auto graphs = cuda::BnGraphs::Validate(empty);
  EXPECT_FALSE(graphs.ok());
}

// The LRN kernels' arithmetic, run on the host, against the reference.
TEST(CudaOpsHostTest, LrnArithmeticMatchesTheReference) {
  for (const char* text : {"lrn:mb2ic7ih3iw5_r2k1a0.1b0.75", "lrn:mb1ic16ih2iw3_r5k2a0.05b0.5",
                           "lrn:mb2ic3ih2iw2_r4k1a0.0001b0.75"}) {
    auto parsed = ParseOpDesc(text);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    const LrnDesc desc = std::get<LrnDesc>(*parsed);
    auto ref = kernel_test::CreateKernelUnderTest(*cuda_test::Reference(), desc, DType::kF64);
    ASSERT_TRUE(ref.ok()) << ref.status();
    kernel_test::KernelBuffers& b = ref->buffers;
    const TensorSpec& spec = b.signature.inputs[0];
    kernel_test::FillUniform(spec, b.x[0].data(), 7, -2, 2);
    kernel_test::FillUniform(spec, b.dy.data(), 8, -1, 1);
    ASSERT_TRUE(ref->kernel->Forward(b.Args()).ok());
    ASSERT_TRUE(ref->kernel->BackwardData(b.Args()).ok());
    const std::vector<double> x = kernel_test::ToDoubles(spec, b.x[0].data());
    const std::vector<double> dy = kernel_test::ToDoubles(spec, b.dy.data());
    for (bool nhwc : {false, true}) {
      cuda::LrnGeometry g;
      g.dims = ActivationGeometry{desc.dims.n, desc.dims.c, desc.dims.h, desc.dims.w, nhwc};
      g.radius = desc.depth_radius;
      g.bias = static_cast<float>(desc.bias);
      g.alpha = static_cast<float>(desc.alpha);
      g.beta = static_cast<float>(desc.beta);
      const std::vector<float> xv = Store(g.dims, x), dyv = Store(g.dims, dy);
      std::vector<float> y(xv.size()), s(xv.size()), dx(xv.size());
      for (int64_t at = 0; at < g.dims.elements(); ++at) {
        int64_t n, c, h, w;
        g.dims.Coordinates(at, &n, &c, &h, &w);
        s[at] = cuda::LrnScaleAt(g, n, c, h, w, [&](int64_t i) { return xv[i]; });
        y[at] = cuda::LrnOutput(g, xv[at], s[at]);
      }
      for (int64_t at = 0; at < g.dims.elements(); ++at) {
        int64_t n, c, h, w;
        g.dims.Coordinates(at, &n, &c, &h, &w);
        dx[at] = cuda::LrnBackwardAt(
            g, n, c, h, w, [&](int64_t i) { return xv[i]; }, [&](int64_t i) { return dyv[i]; },
            [&](int64_t i) { return s[i]; });
      }
      const std::string what = absl::StrCat(text, nhwc ? " nhwc" : " nchw");
      absl::Status y_status = kernel_test::CompareTensors(
          what + " y", Logical(g.dims, y), kernel_test::ToDoubles(spec, b.y.data()), 1e-5, 1e-6);
      EXPECT_TRUE(y_status.ok()) << y_status;
      absl::Status dx_status =
          kernel_test::CompareTensors(what + " dx", Logical(g.dims, dx),
                                      kernel_test::ToDoubles(spec, b.dx[0].data()), 1e-5, 1e-5);
      EXPECT_TRUE(dx_status.ok()) << dx_status;
    }
  }
}

// In any stored layout, the element's mask bit is DropoutKeeps of its
// global logical index (the batch offset counts whole examples).
TEST(CudaOpsHostTest, DropoutMaskIsCoreRandomsForTheGlobalLogicalIndex) {
  const uint64_t key = DropoutKey(7, 3, 5);
  for (bool nhwc : {false, true}) {
    cuda::DropoutGeometry g;
    g.dims = ActivationGeometry{2, 3, 4, 5, nhwc};
    g.first_index = 6 * 60;  // six examples before this batch
    g.rate = 0.3;
    int kept = 0;
    for (int64_t at = 0; at < g.dims.elements(); ++at) {
      const bool keep = cuda::DropoutKeepsAt(g, key, at);
      ASSERT_EQ(keep, DropoutKeeps(key, 360 + static_cast<uint64_t>(g.dims.LogicalIndex(at)), 0.3));
      kept += keep;
      EXPECT_EQ(cuda::DropoutScaled(g, 3.0, keep), keep ? 3.0 * (1.0 / 0.7) : 0.0);
    }
    EXPECT_GT(kept, 60);
    EXPECT_LT(kept, 110);
  }
}

TEST(CudaOpsHostTest, BadLabelRecordsRoundTripAndTheFirstExampleWins) {
  for (int32_t label : {-1, 1001, 2147483647, -2147483647 - 1}) {
    const uint64_t record = cuda::PackBadLabel(12, label);
    EXPECT_EQ(cuda::BadLabelExample(record), 12);
    EXPECT_EQ(cuda::BadLabelValue(record), label);
    EXPECT_LT(record, cuda::kNoBadLabel);
    EXPECT_LT(cuda::PackBadLabel(11, -1), record);  // atomicMin keeps the smallest example
  }
}

// ---- On a GPU: every op against the reference -----------------------------

// Tolerances per precision: fp32 and tf32 (these ops run no tensor-core
// math) tight, fp16 and bf16 by their storage's rounding.
CompareOptions Tolerances(Precision p, double fp32_rtol, double fp32_atol, double low_scale) {
  CompareOptions o;
  o.precision = p;
  double tolerance = 0;  // rtol and atol of the low-precision types
  if (p == Precision::kFp16) tolerance = 2e-3 * low_scale;
  if (p == Precision::kBf16) tolerance = 1.6e-2 * low_scale;
  const bool low = p == Precision::kFp16 || p == Precision::kBf16;
  const double rtol = low ? tolerance : fp32_rtol, atol = low ? tolerance : fp32_atol;
  o.forward_rtol = o.backward_rtol = rtol;
  o.forward_atol = o.backward_atol = atol;
  return o;
}

TEST(CudaOpsTest, PoolingMatchesTheReferenceInEveryPrecision) {
  SKIP_WITHOUT_GPU();
  for (const PoolDesc& desc : PoolCases())
    for (Precision p : kAllPrecisions) {
      CompareOptions o = Tolerances(p, 1e-6, 1e-6, 1.0);  // integer inputs: ties included
      absl::Status status = CompareWithReference(desc, o);
      EXPECT_TRUE(status.ok()) << PrecisionName(p) << ": " << status;
    }
  // Reals in fp32, and bf16 read from a producer's plain NCHW spec.
  const PoolDesc max = MakePool(PoolAlgorithm::kMax, 2, 3, 7, 9, 3, 2, Padding::kSame);
  CompareOptions reals = Tolerances(Precision::kFp32, 1e-6, 1e-6, 1.0);
  reals.integers = false;
  EXPECT_TRUE(CompareWithReference(max, reals).ok());
  CompareOptions plain = Tolerances(Precision::kBf16, 0, 0, 1.0);
  plain.cuda_inputs = {TensorSpec::Plain(DType::kBF16, max.input().shape())};
  absl::Status status = CompareWithReference(max, plain);
  EXPECT_TRUE(status.ok()) << status;
}

TEST(CudaOpsTest, BatchNormMatchesTheReferenceInEveryPrecision) {
  SKIP_WITHOUT_GPU();
  for (const char* text :
       {"bn:mb4ic5ih7iw3_eps0.001mom0.997", "bn:mb3ic6ih5iw5_eps1e-05mom0.9_noscale",
        "bn:mb16ic3ih1iw1_eps0.001mom0.5", "bn:mb4ic5ih7iw3_eps0.001mom0.997_relu",
        "bn:mb3ic6ih5iw5_eps1e-05mom0.9_noscale_relu"})
    for (bool training : {true, false})
      for (Precision p : kAllPrecisions) {
        // Normalised outputs are O(gamma * 3): absolute tolerances of a few
        // ulps of 8 in the low-precision types.
        CompareOptions o = Tolerances(p, 1e-4, 1e-4, 4.0);
        o.training = training;
        absl::Status status = CompareWithReference(*ParseOpDesc(text), o);
        EXPECT_TRUE(status.ok()) << text << " " << PrecisionName(p)
                                 << (training ? " training: " : " inference: ") << status;
      }
}

// Both batch norm paths on NHWC activations: the cuDNN graphs (the default;
// their engines named, or why none built) and the legacy calls, against the
// reference, training and with the fused ReLU.
TEST(CudaOpsTest, BatchNormGraphsAndLegacyCallsBothMatchTheReference) {
  SKIP_WITHOUT_GPU();
  CudaBackendOptions legacy_options;
  legacy_options.batch_norm_graphs = false;
  auto legacy = CreateCudaBackend(Device::Cuda(0), legacy_options);
  ASSERT_TRUE(legacy.ok()) << legacy.status();
  for (const char* text :
       {"bn:mb8ic64ih14iw14_eps1e-05mom0.9_relu", "bn:mb4ic24ih7iw5_eps0.001mom0.997",
        "bn:mb4ic5ih7iw3_eps0.001mom0.997_relu"})
    for (Precision p : {Precision::kBf16, Precision::kFp16}) {
      for (Backend* backend : {Cuda(), legacy->get()}) {
        auto kernel = backend->Create(*ParseOpDesc(text), KernelOptions::ForPrecision(p), {});
        ASSERT_TRUE(kernel.ok()) << kernel.status();
        const std::string impl = (*kernel)->implementation();
        // Printed: which engine ran (or why no graph) is what a GPU run reports.
        std::printf("%s %s: %s\n", text, std::string(PrecisionName(p)).c_str(), impl.c_str());
        if (backend == legacy->get()) {
          EXPECT_EQ(impl.rfind("cudnn:batchnorm_spatial", 0), 0u) << impl;
        } else if (absl::StrContains(text, "ic64")) {  // a ResNet shape: an engine must build
          EXPECT_EQ(impl.rfind("cudnn:bn_graph:", 0), 0u) << impl;
        }
        CompareOptions o = Tolerances(p, 1e-4, 1e-4, 4.0);  // integers: no ReLU mask flips
        o.backend = backend;
        absl::Status status = CompareWithReference(*ParseOpDesc(text), o);
        EXPECT_TRUE(status.ok()) << text << " " << PrecisionName(p) << " " << impl << ": "
                                 << status;
      }
    }
}

TEST(CudaOpsTest, LrnMatchesTheReferenceInEveryPrecision) {
  SKIP_WITHOUT_GPU();
  for (const char* text : {"lrn:mb2ic7ih3iw5_r2k1a0.1b0.75", "lrn:mb2ic16ih5iw3_r5k2a0.05b0.5"})
    for (Precision p : kAllPrecisions) {
      CompareOptions o = Tolerances(p, 1e-5, 1e-5, 1.0);
      o.integers = false;
      o.low = -2;
      o.high = 2;
      if (p == Precision::kFp16 || p == Precision::kBf16) o.integers = true;  // exact inputs
      absl::Status status = CompareWithReference(*ParseOpDesc(text), o);
      EXPECT_TRUE(status.ok()) << text << " " << PrecisionName(p) << ": " << status;
    }
}

TEST(CudaOpsTest, DropoutMatchesTheReferenceInEveryPrecision) {
  SKIP_WITHOUT_GPU();
  for (const char* text : {"dropout:mb3ic5ih3iw7_p0.5", "dropout:mb2ic33ih1iw1_p0.25"})
    for (Precision p : kAllPrecisions)
      for (bool training : {true, false}) {
        // fp32 rounds x / (1 - p) once, as the reference's fp32 kernel does.
        CompareOptions o = Tolerances(p, 1e-7, 0, 1.0);
        o.training = training;
        absl::Status status = CompareWithReference(*ParseOpDesc(text), o);
        EXPECT_TRUE(status.ok()) << text << " " << PrecisionName(p) << ": " << status;
      }
}

// The mask from a device step counter and a batch offset: core/random.h's
// for (seed, node, step) and the global index, in the stored layout.
TEST(CudaOpsTest, DropoutMaskIsTheCpusForTheSameKeyAndGlobalIndex) {
  SKIP_WITHOUT_GPU();
  const DropoutDesc desc = std::get<DropoutDesc>(*ParseOpDesc("dropout:mb2ic6ih3iw5_p0.4"));
  for (Precision p : {Precision::kFp32, Precision::kBf16}) {
    KernelOptions options = KernelOptions::ForPrecision(p);
    options.seed = 7;
    options.node = 3;
    options.batch_offset = 4;
    auto kernel = Cuda()->Create(desc, options, {});
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    const KernelSignature& sig = (*kernel)->signature();
    auto buffers = cuda_test::AllocateFor(sig);
    ASSERT_TRUE(buffers.ok()) << buffers.status();
    auto step = Buffer::Allocate(Device::Cuda(0), sizeof(uint64_t));
    ASSERT_TRUE(step.ok());
    const uint64_t step_value = 5;
    ASSERT_TRUE(CopyBytes(step->data(), Device::Cuda(0), &step_value, Device::Cpu(), 8).ok());
    ASSERT_TRUE(cuda_test::Write(sig.inputs[0], buffers->x[0].data(),
                                 std::vector<double>(desc.dims.elements(), 1.0))
                    .ok());
    KernelArgs args = buffers->Args();
    args.step = static_cast<const uint64_t*>(step->data());
    for (int call = 0; call < 2; ++call) {  // the device step, not the call count, keys it
      ASSERT_TRUE((*kernel)->Forward(args).ok());
      ASSERT_TRUE(Cuda()->stream().Synchronize().ok());
      std::vector<uint8_t> mask(sig.saved_bytes);
      ASSERT_TRUE(
          CopyBytes(mask.data(), Device::Cpu(), buffers->saved.data(), Device::Cuda(0), mask.size())
              .ok());
      auto y = cuda_test::Read(sig.output, buffers->y.data());
      ASSERT_TRUE(y.ok());
      const ActivationGeometry g{desc.dims.n, desc.dims.c, desc.dims.h, desc.dims.w,
                                 sig.inputs[0].layout == Layout::kNHWC};
      EXPECT_EQ(g.nhwc, p != Precision::kFp32);
      const uint64_t key = DropoutKey(7, 3, step_value);
      const uint64_t first = 4 * static_cast<uint64_t>(desc.dims.c * desc.dims.h * desc.dims.w);
      for (int64_t at = 0; at < g.elements(); ++at) {
        const int64_t logical = g.LogicalIndex(at);
        const bool keep = DropoutKeeps(key, first + static_cast<uint64_t>(logical), desc.rate);
        ASSERT_EQ(mask[at], keep ? 1 : 0) << at;
        ASSERT_EQ((*y)[logical] != 0.0, keep) << logical;
        if (p == Precision::kFp32 && keep) {
          ASSERT_EQ((*y)[logical], static_cast<double>(static_cast<float>(1.0 / 0.6)));
        }
      }
    }
  }
}

TEST(CudaOpsTest, DropoutWithoutAStepCountsItsOwnCalls) {
  SKIP_WITHOUT_GPU();
  const DropoutDesc desc = std::get<DropoutDesc>(*ParseOpDesc("dropout:mb2ic64ih1iw1_p0.5"));
  auto kernel = Cuda()->Create(desc, DType::kF32, {});
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  auto buffers = cuda_test::AllocateFor((*kernel)->signature());
  ASSERT_TRUE(buffers.ok());
  const KernelArgs args = buffers->Args();
  for (uint64_t call = 0; call < 3; ++call) {
    ASSERT_TRUE((*kernel)->Forward(args).ok());
    std::vector<uint8_t> mask(128);
    ASSERT_TRUE(Cuda()->stream().Synchronize().ok());
    ASSERT_TRUE(
        CopyBytes(mask.data(), Device::Cpu(), buffers->saved.data(), Device::Cuda(0), 128).ok());
    for (int i = 0; i < 128; ++i)
      ASSERT_EQ(mask[i], DropoutKeeps(DropoutKey(0, 0, call), i, 0.5) ? 1 : 0) << call << " " << i;
  }
}

TEST(CudaOpsTest, ConcatAndAddMatchTheReferenceInNchwAndNhwc) {
  SKIP_WITHOUT_GPU();
  for (const char* text :
       {"concat:mb2ih5iw3_ic3:4:1", "concat:mb3ih1iw1_ic8:16", "add:mb2ic5ih3iw7",
        "add:mb4ic16ih1iw1", "add:mb2ic5ih3iw7_relu", "add:mb4ic16ih1iw1_relu",
        "chpad:mb2ic3ih5iw3_b2a1", "chpad:mb3ic16ih4iw4_b8a8"})
    for (Precision p : kAllPrecisions) {  // fp32 NCHW, the others NHWC
      absl::Status status = CompareWithReference(*ParseOpDesc(text), Tolerances(p, 0, 0, 0));
      EXPECT_TRUE(status.ok()) << text << " " << PrecisionName(p) << ": " << status;
    }
}

// The fused add's backward as the executor calls it: the output's gradient
// as 1, 3 or 17 parts (more than one launch takes), one buffer bound to both
// inputs' gradients, or two. Integers: exact in every storage type.
TEST(CudaOpsTest, FusedAddSumsGradientPartsMaskedByItsOutput) {
  SKIP_WITHOUT_GPU();
  const OpDesc desc = *ParseOpDesc("add:mb2ic5ih3iw7_relu");
  for (Precision p : {Precision::kFp32, Precision::kBf16})
    for (int num_parts : {1, 3, 17})
      for (bool shared : {true, false}) {
        SCOPED_TRACE(absl::StrCat(PrecisionName(p), " parts ", num_parts, shared ? " shared" : ""));
        auto kernel = Cuda()->Create(desc, KernelOptions::ForPrecision(p), {});
        ASSERT_TRUE(kernel.ok()) << kernel.status();
        const KernelSignature& sig = (*kernel)->signature();
        EXPECT_TRUE(sig.shared_input_gradient);
        EXPECT_TRUE(sig.sums_output_gradient);
        EXPECT_TRUE(sig.backward_reads_output);
        const TensorSpec& spec = sig.output;
        const int64_t count = spec.shape.num_elements();
        auto values = [&](uint64_t seed, int64_t low, int64_t high) {
          std::vector<double> v(static_cast<size_t>(count));
          Rng rng(seed);
          for (double& e : v)
            e = static_cast<double>(low + static_cast<int64_t>(rng.Uniform() * (high - low + 1)));
          return v;
        };
        auto device = [&](const std::vector<double>& v) {
          Buffer b = *Buffer::Allocate(Cuda()->device(), spec.bytes);
          EXPECT_TRUE(cuda_test::Write(spec, b.data(), v).ok());
          return b;
        };
        const std::vector<double> x0 = values(1, -3, 3), x1 = values(2, -3, 3);
        std::vector<std::vector<double>> parts;
        for (int k = 0; k < num_parts; ++k) parts.push_back(values(10 + k, -4, 4));
        Buffer a = device(x0), b = device(x1);
        Buffer y = *Buffer::Allocate(Cuda()->device(), spec.bytes);
        Buffer dx0 = *Buffer::Allocate(Cuda()->device(), spec.bytes);
        Buffer dx1 = *Buffer::Allocate(Cuda()->device(), spec.bytes);
        ASSERT_TRUE(cuda_test::Poison(y).ok());
        ASSERT_TRUE(cuda_test::Poison(dx0).ok());
        ASSERT_TRUE(cuda_test::Poison(dx1).ok());
        std::vector<Buffer> part_buffers;
        KernelArgs args;
        for (const auto& v : parts) {
          part_buffers.push_back(device(v));
          args.dy_parts.push_back(part_buffers.back().data());
        }
        if (num_parts == 1) {
          args.dy = args.dy_parts[0];
          args.dy_parts.clear();
        }
        args.x = {a.data(), b.data()};
        args.y = y.data();
        args.dx = {dx0.data(), shared ? dx0.data() : dx1.data()};
        ASSERT_TRUE((*kernel)->Forward(args).ok());
        ASSERT_TRUE((*kernel)->BackwardData(args).ok());
        ASSERT_TRUE(Cuda()->stream().Synchronize().ok());
        std::vector<double> want_y(static_cast<size_t>(count)), want_dx(static_cast<size_t>(count));
        int masked = 0;
        for (int64_t i = 0; i < count; ++i) {
          want_y[i] = std::max(x0[i] + x1[i], 0.0);
          double sum = 0;
          for (const auto& v : parts) sum += v[i];
          want_dx[i] = want_y[i] > 0 ? sum : 0.0;
          masked += want_y[i] > 0 ? 0 : 1;
        }
        ASSERT_GT(masked, 0);
        ASSERT_LT(masked, count);
        EXPECT_EQ(*cuda_test::Read(spec, y.data()), want_y);
        EXPECT_EQ(*cuda_test::Read(spec, dx0.data()), want_dx);
        if (!shared) {
          EXPECT_EQ(*cuda_test::Read(spec, dx1.data()), want_dx);
        }
      }
}

TEST(CudaOpsTest, SoftmaxXentMatchesTheReferenceInEveryPrecision) {
  SKIP_WITHOUT_GPU();
  for (const char* text :
       {"softmax_xent:mb5ic1001", "softmax_xent:mb3ic7", "softmax_xent:mb1ic300"})
    for (Precision p : kAllPrecisions) {
      CompareOptions o = Tolerances(p, 1e-5, 1e-6, 0.5);
      // Integer logits are exact in every storage type; reals in fp32.
      o.integers = p == Precision::kFp16 || p == Precision::kBf16;
      absl::Status status = CompareWithReference(*ParseOpDesc(text), o);
      EXPECT_TRUE(status.ok()) << text << " " << PrecisionName(p) << ": " << status;
    }
}

// A bad label: that step's loss is NaN, and the kernel's next call fails
// naming the example and the label.
TEST(CudaOpsTest, SoftmaxXentReportsAnOutOfRangeLabel) {
  SKIP_WITHOUT_GPU();
  const OpDesc desc = *ParseOpDesc("softmax_xent:mb4ic10");
  auto kernel = Cuda()->Create(desc, DType::kF32, {});
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  const KernelSignature& sig = (*kernel)->signature();
  auto buffers = cuda_test::AllocateFor(sig);
  ASSERT_TRUE(buffers.ok());
  ASSERT_TRUE(
      cuda_test::Write(sig.inputs[0], buffers->x[0].data(), std::vector<double>(40, 0.5)).ok());
  ASSERT_TRUE(cuda_test::Write(sig.inputs[1], buffers->x[1].data(), {1, 9, 10, -3}).ok());
  ASSERT_TRUE((*kernel)->Forward(buffers->Args()).ok());  // no waiting inside the call
  ASSERT_TRUE(Cuda()->stream().Synchronize().ok());
  auto loss = cuda_test::Read(sig.output, buffers->y.data());
  ASSERT_TRUE(loss.ok());
  EXPECT_TRUE(std::isnan((*loss)[0]));
  absl::Status status = (*kernel)->BackwardData(buffers->Args());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_NE(status.message().find("label 10 of example 2"), std::string::npos) << status;
  EXPECT_EQ((*kernel)->Forward(buffers->Args()).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace cnnbench
