// Host-only arithmetic of the cuda backend's GEMMs: row-major problems
// (docs/kernels.md's gemm and fc) as cuBLASLt's column-major matmuls, the
// GEMMs each backward pass runs, and the layouts an fc kernel takes. No CUDA
// headers, so it is built and tested everywhere.
#ifndef CNNBENCH_KERNELS_CUDA_GEMM_PLAN_H_
#define CNNBENCH_KERNELS_CUDA_GEMM_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/dtype.h"
#include "kernels/desc.h"
#include "kernels/kernel.h"

namespace cnnbench::cuda {

// The buffers a GEMM of a pass reads: the op's two operands (gemm: A and
// B; fc: x and the weights) and the output's gradient.
enum class Operand { kA, kB, kDy };

// Row-major out(M,N) = op(first) op(second): `first` is stored (M,K), or
// (K,M) when desc.transpose_a; `second` (K,N), or (N,K) when desc.transpose_b.
struct PassGemm {
  GemmDesc desc;
  Operand first = Operand::kA;
  Operand second = Operand::kB;
};

// The forward GEMM y = op(A) op(B), and the gradients of A and B, each
// stored as its operand is: dA = dy op(B)^T, dB = op(A)^T dy.
PassGemm ForwardGemm(const GemmDesc& desc);
PassGemm GradientOfA(const GemmDesc& desc);
PassGemm GradientOfB(const GemmDesc& desc);

// cuBLASLt's view of a row-major GEMM. A row-major (r,c) matrix is a
// column-major (c,r) one, so out^T(N,M) = op(second)^T op(first)^T: Lt's
// A is the row-major problem's second operand, Lt's B its first, with the
// same transposes. Layouts describe the stored (column-major) matrices.
struct LtMatrix {
  int64_t rows = 0, cols = 0, ld = 0;
};
struct LtMatmul {
  int64_t m = 0, n = 0, k = 0;  // D(m,n) = op(A)(m,k) op(B)(k,n), column-major
  bool transpose_a = false, transpose_b = false;
  LtMatrix a, b, d;
  Operand lt_a = Operand::kB;  // which buffer Lt's A reads
  Operand lt_b = Operand::kA;
  std::string ToString() const;  // for messages: "m1001n32k2048_ta ..."
};
LtMatmul ToColumnMajor(const PassGemm& gemm);

// Runs `lt` as cuBLASLt defines it, in double, on plain host arrays: what
// the host tests check the translation with.
void ColumnMajorMatmul(const LtMatmul& lt, const double* a, const double* b, double* d);

// What an fc kernel reads: its input spec and its weights' spec. A 4-D
// NCHW input (or any with H*W == 1) is read as the (N, C*H*W) matrix it
// flattens to, with plain (OC,IC) weights; a 4-D NHWC input with H*W > 1
// flattens in (H,W,C) order, so its weights are the 4-D (OC,C,H,W) spec in
// NHWC: the same logical values as the reference's (OC,IC) weights (their
// plain form is exactly those), stored in the input's flattening order.
// `inputs` empty: a plain (N,IC) matrix.
struct FcLayout {
  TensorSpec input;
  TensorSpec weights;
};
absl::StatusOr<FcLayout> FcLayoutFor(const FcDesc& desc, DType dtype,
                                     const std::vector<TensorSpec>& inputs);

}  // namespace cnnbench::cuda

#endif  // CNNBENCH_KERNELS_CUDA_GEMM_PLAN_H_
