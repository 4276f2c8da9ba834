// The cuda backend's fc and GEMM kernels. Host-only (run everywhere): the
// row-major -> cuBLASLt column-major translation of every pass, run through
// a model of cuBLASLt's arithmetic against the plain definitions, and the
// fc kernel's input/weight layouts. On a GPU: every precision against the
// reference, with the tolerances below.
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "kernels/cuda/gemm_plan.h"
#include "tests/kernels/cuda/cuda_test_util.h"

namespace cnnbench {
namespace {

using cuda::FcLayoutFor;
using cuda::LtMatmul;
using cuda::Operand;
using cuda::PassGemm;

// Row-major values of a (rows, cols) matrix: small distinct integers.
std::vector<double> Matrix(int64_t rows, int64_t cols, int salt) {
  std::vector<double> v(rows * cols);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((i * 7 + salt * 3) % 11) - 5;
  return v;
}

// Element (i, j) of op(stored): stored is (rows, cols) row-major, or
// (cols, rows) when transposed.
double At(const std::vector<double>& stored, bool transposed, int64_t rows, int64_t cols, int64_t i,
          int64_t j) {
  return transposed ? stored[j * rows + i] : stored[i * cols + j];
}

// Runs one pass GEMM through the cuBLASLt model.
std::vector<double> RunPass(const PassGemm& gemm, const std::vector<double>& a,
                            const std::vector<double>& b, const std::vector<double>& dy) {
  const LtMatmul lt = cuda::ToColumnMajor(gemm);
  auto pick = [&](Operand o) { return o == Operand::kA ? &a : o == Operand::kB ? &b : &dy; };
  std::vector<double> out(gemm.desc.m * gemm.desc.n, std::nan(""));
  cuda::ColumnMajorMatmul(lt, pick(lt.lt_a)->data(), pick(lt.lt_b)->data(), out.data());
  return out;
}

class GemmTranslationTest : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

TEST_P(GemmTranslationTest, EveryPassMatchesItsDefinition) {
  const auto [ta, tb] = GetParam();
  const int64_t m = 3, n = 5, k = 4;
  const GemmDesc desc{m, n, k, ta, tb};
  const std::vector<double> a = Matrix(ta ? k : m, ta ? m : k, 1);
  const std::vector<double> b = Matrix(tb ? n : k, tb ? k : n, 2);
  const std::vector<double> dy = Matrix(m, n, 3);

  // y(M,N) = op(A) op(B)
  const std::vector<double> y = RunPass(cuda::ForwardGemm(desc), a, b, dy);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += At(a, ta, m, k, i, p) * At(b, tb, k, n, p, j);
      EXPECT_EQ(y[i * n + j], sum) << "y " << i << "," << j;
    }
  // dA = dy op(B)^T, stored like A: (M,K), or (K,M) with ta.
  const PassGemm grad_a = cuda::GradientOfA(desc);
  EXPECT_EQ(grad_a.desc.m * grad_a.desc.n, m * k);
  const std::vector<double> da = RunPass(grad_a, a, b, dy);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) {
      double sum = 0;
      for (int64_t j = 0; j < n; ++j) sum += dy[i * n + j] * At(b, tb, k, n, p, j);
      EXPECT_EQ(da[ta ? p * m + i : i * k + p], sum) << "dA " << i << "," << p;
    }
  // dB = op(A)^T dy, stored like B: (K,N), or (N,K) with tb.
  const PassGemm grad_b = cuda::GradientOfB(desc);
  EXPECT_EQ(grad_b.desc.m * grad_b.desc.n, k * n);
  const std::vector<double> db = RunPass(grad_b, a, b, dy);
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t i = 0; i < m; ++i) sum += At(a, ta, m, k, i, p) * dy[i * n + j];
      EXPECT_EQ(db[tb ? j * k + p : p * n + j], sum) << "dB " << p << "," << j;
    }
}

INSTANTIATE_TEST_SUITE_P(AllTransposes, GemmTranslationTest,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool()));

TEST(GemmTranslationTest, ColumnMajorLayoutsAreTheStoredMatrices) {
  // y(2,3) = A(2,4) B(4,3): Lt's D is y^T (3,2), A is B^T stored (3,4) ld 3.
  const LtMatmul lt = cuda::ToColumnMajor(cuda::ForwardGemm(GemmDesc{2, 3, 4, false, false}));
  EXPECT_EQ(lt.m, 3);
  EXPECT_EQ(lt.n, 2);
  EXPECT_EQ(lt.k, 4);
  EXPECT_EQ(lt.lt_a, Operand::kB);
  EXPECT_EQ(lt.lt_b, Operand::kA);
  EXPECT_EQ(lt.a.rows, 3);
  EXPECT_EQ(lt.a.ld, 3);
  EXPECT_EQ(lt.b.rows, 4);
  EXPECT_EQ(lt.b.ld, 4);
  EXPECT_EQ(lt.d.ld, 3);
  const LtMatmul t = cuda::ToColumnMajor(cuda::ForwardGemm(GemmDesc{2, 3, 4, true, true}));
  EXPECT_TRUE(t.transpose_a);
  EXPECT_TRUE(t.transpose_b);
  EXPECT_EQ(t.a.rows, 4);  // B stored (3,4) row-major = (4,3) column-major
  EXPECT_EQ(t.b.rows, 2);  // A stored (4,2) row-major = (2,4) column-major
}

TEST(FcPlanTest, TheWeightGradientsLtBIsDyOverTheBatch) {
  // BGRADB sums Lt's B over k: that must be dy, over the batch, one per OC.
  const FcDesc fc{8, 64, 10, true};
  const LtMatmul lt = cuda::ToColumnMajor(cuda::GradientOfB(fc.AsGemm()));
  EXPECT_EQ(lt.lt_b, Operand::kDy);
  EXPECT_EQ(lt.lt_a, Operand::kA);
  EXPECT_EQ(lt.n, fc.oc);
  EXPECT_EQ(lt.k, fc.n);
  EXPECT_EQ(lt.m, fc.ic);
  // Forward: the bias epilogue adds one value per row of Lt's D, i.e. per OC.
  EXPECT_EQ(cuda::ToColumnMajor(cuda::ForwardGemm(fc.AsGemm())).m, fc.oc);
}

TEST(FcPlanTest, LayoutsFollowTheInput) {
  const FcDesc fc{4, 2 * 3 * 5, 7, true};
  auto plain = FcLayoutFor(fc, DType::kBF16, {});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->input.shape, (Shape{4, 30}));
  EXPECT_EQ(plain->weights.shape, (Shape{7, 30}));
  EXPECT_EQ(plain->weights.dtype, DType::kBF16);

  TensorSpec nchw = TensorSpec::Plain(DType::kF32, Shape{4, 2, 3, 5});
  auto from_nchw = FcLayoutFor(fc, DType::kF32, {nchw});
  ASSERT_TRUE(from_nchw.ok()) << from_nchw.status();
  EXPECT_EQ(from_nchw->input.layout, Layout::kNCHW);
  EXPECT_EQ(from_nchw->weights.shape, (Shape{7, 30}));

  TensorSpec nhwc = TensorSpec::Plain(DType::kF16, Shape{4, 2, 3, 5});
  nhwc.layout = Layout::kNHWC;
  auto from_nhwc = FcLayoutFor(fc, DType::kF16, {nhwc});
  ASSERT_TRUE(from_nhwc.ok()) << from_nhwc.status();
  EXPECT_EQ(from_nhwc->input.layout, Layout::kNHWC);
  EXPECT_EQ(from_nhwc->weights.shape, (Shape{7, 2, 3, 5}));
  EXPECT_EQ(from_nhwc->weights.layout, Layout::kNHWC);
  EXPECT_EQ(from_nhwc->weights.bytes, 7u * 30 * 2);

  // 1x1 spatial: both flattenings agree, so the weights stay a plain matrix.
  TensorSpec pooled = TensorSpec::Plain(DType::kF16, Shape{4, 30, 1, 1});
  pooled.layout = Layout::kNHWC;
  auto from_pooled = FcLayoutFor(fc, DType::kF16, {pooled});
  ASSERT_TRUE(from_pooled.ok()) << from_pooled.status();
  EXPECT_EQ(from_pooled->weights.shape, (Shape{7, 30}));

  EXPECT_FALSE(FcLayoutFor(fc, DType::kF32, {nhwc}).ok());  // dtype differs
  TensorSpec blocked = nchw;
  blocked.layout = Layout::kBlocked;
  EXPECT_FALSE(FcLayoutFor(fc, DType::kF32, {blocked}).ok());
  EXPECT_FALSE(FcLayoutFor(fc, DType::kF32, {TensorSpec::Plain(DType::kF32, Shape{4, 31})}).ok());
}

TEST(FcPlanTest, NhwcWeightsComputeTheReferencesFunction) {
  // x (N,C,H,W) and W (OC, C*H*W) in the reference's (NCHW) order; the same
  // values stored NHWC (x) and as the (OC,C,H,W) NHWC weights spec give the
  // same products when flattened row by row.
  const int64_t n = 2, c = 3, h = 2, w = 4, oc = 5, ic = c * h * w;
  const std::vector<double> x = Matrix(n, ic, 4), weights = Matrix(oc, ic, 5);
  auto nhwc_index = [&](int64_t row, int64_t flat) {  // NCHW flat index -> NHWC flat index
    const int64_t ci = flat / (h * w), yi = (flat / w) % h, xi = flat % w;
    return row * ic + (yi * w + xi) * c + ci;
  };
  std::vector<double> x_nhwc(x.size()), w_nhwc(weights.size());
  for (int64_t r = 0; r < n; ++r)
    for (int64_t f = 0; f < ic; ++f) x_nhwc[nhwc_index(r, f)] = x[r * ic + f];
  for (int64_t r = 0; r < oc; ++r)
    for (int64_t f = 0; f < ic; ++f) w_nhwc[nhwc_index(r, f)] = weights[r * ic + f];
  const PassGemm forward = cuda::ForwardGemm(FcDesc{n, ic, oc, false}.AsGemm());
  EXPECT_EQ(RunPass(forward, x, weights, {}), RunPass(forward, x_nhwc, w_nhwc, {}));
}

// On a GPU: against the reference.

#define SKIP_WITHOUT_GPU() \
  if (cuda_test::Cuda() == nullptr) GTEST_SKIP() << cuda_test::NoGpuReason()

// Integer inputs in [-3, 3]: every product and sum is exact in fp32, tf32,
// fp16 and bf16 inputs with fp32 accumulation, so only the output's
// rounding remains: none in fp32/tf32, half an ulp in fp16 (2^-11) and
// bf16 (2^-8), and the bias epilogue's second rounding.
cuda_test::CompareOptions Tolerances(Precision precision) {
  cuda_test::CompareOptions o;
  o.precision = precision;
  double rtol = 1e-6;
  if (precision == Precision::kFp16) rtol = 2e-3;
  if (precision == Precision::kBf16) rtol = 1.6e-2;
  o.forward_rtol = o.backward_rtol = rtol;
  o.forward_atol = o.backward_atol = 1e-6;
  return o;
}

constexpr Precision kAll[] = {Precision::kFp32, Precision::kTf32, Precision::kFp16,
                              Precision::kBf16};

TEST(CudaGemmTest, FcMatchesTheReference) {
  SKIP_WITHOUT_GPU();
  for (Precision p : kAll)
    for (bool bias : {true, false}) {
      const FcDesc fc{8, 64, 10, bias};
      EXPECT_TRUE(cuda_test::CompareWithReference(fc, Tolerances(p)).ok())
          << PrecisionName(p) << " " << fc.ToString() << ": "
          << cuda_test::CompareWithReference(fc, Tolerances(p));
    }
}

TEST(CudaGemmTest, FcFlattensA4DInputInEitherLayout) {
  SKIP_WITHOUT_GPU();
  const FcDesc fc{4, 8 * 3 * 5, 10, true};
  for (Precision p : kAll)
    for (Layout layout : {Layout::kNCHW, Layout::kNHWC}) {
      cuda_test::CompareOptions o = Tolerances(p);
      TensorSpec input = TensorSpec::Plain(ActivationType(p), Shape{4, 8, 3, 5});
      input.layout = layout;
      o.cuda_inputs = {input};
      const absl::Status status = cuda_test::CompareWithReference(fc, o);
      EXPECT_TRUE(status.ok()) << PrecisionName(p) << " " << LayoutName(layout) << ": " << status;
    }
}

TEST(CudaGemmTest, FcWithRealValuesInTf32) {
  SKIP_WITHOUT_GPU();
  // tf32 rounds inputs to 10 mantissa bits: about 1e-3 relative per product.
  cuda_test::CompareOptions o;
  o.precision = Precision::kTf32;
  o.integers = false;
  o.low = -1;
  o.high = 1;
  o.forward_rtol = o.backward_rtol = 1e-2;
  o.forward_atol = o.backward_atol = 2e-2;
  const absl::Status status = cuda_test::CompareWithReference(FcDesc{16, 256, 33, true}, o);
  EXPECT_TRUE(status.ok()) << status;
}

TEST(CudaGemmTest, GemmMatchesTheReferenceForEveryTranspose) {
  SKIP_WITHOUT_GPU();
  for (Precision p : kAll)
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (const GemmDesc& shape : {GemmDesc{24, 40, 56}, GemmDesc{7, 9, 13}}) {
          GemmDesc desc = shape;
          desc.transpose_a = ta;
          desc.transpose_b = tb;
          const absl::Status status = cuda_test::CompareWithReference(desc, Tolerances(p));
          EXPECT_TRUE(status.ok()) << PrecisionName(p) << " " << desc.ToString() << ": " << status;
        }
}

TEST(CudaGemmTest, ImplementationNamesTheAlgorithm) {
  SKIP_WITHOUT_GPU();
  auto kernel = cuda_test::Cuda()->Create(GemmDesc{256, 256, 256},
                                          KernelOptions::ForPrecision(Precision::kBf16), {});
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ((*kernel)->implementation().rfind("cublasLt:algo", 0), 0u)
      << (*kernel)->implementation();
}

// The heuristic's answer is cached per problem: a second kernel of a shape
// (made from the cache, no heuristic query) names the same algorithm and
// computes the reference's results too, and a fresh backend's first kernel
// (its own cache) names the same algorithm.
TEST(CudaGemmTest, ASecondKernelOfAShapeReusesTheAlgorithm) {
  SKIP_WITHOUT_GPU();
  const FcDesc fc{32, 96, 48, true};
  const KernelOptions options = KernelOptions::ForPrecision(Precision::kBf16);
  auto first = cuda_test::Cuda()->Create(fc, options, {});
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = cuda_test::Cuda()->Create(fc, options, {});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ((*first)->implementation(), (*second)->implementation());
  EXPECT_EQ((*first)->signature().scratch_bytes, (*second)->signature().scratch_bytes);
  auto fresh = CreateBackend("cuda", Device::Cuda(0));
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  auto third = (*fresh)->Create(fc, options, {});
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ((*first)->implementation(), (*third)->implementation());
  for (int run = 0; run < 2; ++run) {  // the second run's kernels come from the cache
    const absl::Status status = cuda_test::CompareWithReference(fc, Tolerances(Precision::kBf16));
    EXPECT_TRUE(status.ok()) << "run " << run << ": " << status;
  }
}

}  // namespace
}  // namespace cnnbench
