// The gradient check itself: it passes a correct kernel and catches a wrong
// gradient, an accumulating backward, and a kernel that reads an input its
// signature says backward does not read.
#include "tests/kernels/gradient_check.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cnnbench {
namespace {

using kernel_test::AllocateBuffers;
using kernel_test::CheckGradients;
using kernel_test::CompareTensors;
using kernel_test::FillUniform;
using kernel_test::KernelBuffers;
using ::testing::HasSubstr;

enum class Flaw { kNone, kWrongGradient, kAccumulates, kReadsInputAgainstSignature };

// y = x^2 * w (elementwise, 5 values; w a 1-element param); dx = 2 x w dy,
// dw = sum x^2 dy; with one deliberate flaw.
class SquareKernel : public Kernel {
 public:
  explicit SquareKernel(Flaw flaw) : flaw_(flaw) {
    signature_.inputs = {TensorSpec::Plain(DType::kF64, Shape{5})};
    signature_.output = TensorSpec::Plain(DType::kF64, Shape{5});
    signature_.params = {TensorSpec::Plain(DType::kF64, Shape{1})};
    signature_.saved_bytes = 5 * sizeof(double);  // 2 x w
    signature_.backward_reads_inputs = flaw != Flaw::kReadsInputAgainstSignature;
  }
  std::string implementation() const override { return "test"; }
  absl::Status Forward(const KernelArgs& a) override {
    const double* x = static_cast<const double*>(a.x[0]);
    const double w = *static_cast<const double*>(a.params[0]);
    for (int i = 0; i < 5; ++i) {
      static_cast<double*>(a.y)[i] = x[i] * x[i] * w;
      static_cast<double*>(a.saved)[i] = 2 * x[i] * w;
    }
    return absl::OkStatus();
  }
  absl::Status BackwardData(const KernelArgs& a) override {
    const double* x = static_cast<const double*>(a.x[0]);
    const double* dy = static_cast<const double*>(a.dy);
    const double* saved = static_cast<const double*>(a.saved);
    double* dx = static_cast<double*>(a.dx[0]);
    const double w = *static_cast<const double*>(a.params[0]);
    for (int i = 0; i < 5; ++i) {
      double g = (flaw_ == Flaw::kReadsInputAgainstSignature ? 2 * x[i] * w : saved[i]) * dy[i];
      if (flaw_ == Flaw::kWrongGradient && i == 3) g *= 1.001;
      dx[i] = flaw_ == Flaw::kAccumulates ? dx[i] + g : g;
    }
    return absl::OkStatus();
  }
  absl::Status BackwardWeights(const KernelArgs& a) override {
    const double* x = static_cast<const double*>(a.x[0]);
    const double* dy = static_cast<const double*>(a.dy);
    double sum = 0;
    for (int i = 0; i < 5; ++i) sum += x[i] * x[i] * dy[i];
    *static_cast<double*>(a.dparams[0]) = sum;
    return absl::OkStatus();
  }

 private:
  Flaw flaw_;
};

absl::Status Check(Flaw flaw) {
  SquareKernel kernel(flaw);
  absl::StatusOr<KernelBuffers> b = AllocateBuffers(kernel.signature());
  if (!b.ok()) return b.status();
  FillUniform(kernel.signature().inputs[0], b->x[0].data(), 1, -2, 2);
  FillUniform(kernel.signature().params[0], b->params[0].data(), 2, 0.5, 1.5);
  return CheckGradients(kernel, *b);
}

TEST(GradientCheckTest, PassesACorrectKernel) { EXPECT_TRUE(Check(Flaw::kNone).ok()); }

TEST(GradientCheckTest, CatchesAWrongGradient) {
  absl::Status status = Check(Flaw::kWrongGradient);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("dx0[3]"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("1 of 6"));
}

TEST(GradientCheckTest, CatchesAccumulationIntoDx) { EXPECT_FALSE(Check(Flaw::kAccumulates).ok()); }

TEST(GradientCheckTest, CatchesReadingInputsTheSignatureReleases) {
  EXPECT_FALSE(Check(Flaw::kReadsInputAgainstSignature).ok());
}

TEST(CompareTensorsTest, ReportsTheWorstMismatch) {
  EXPECT_TRUE(CompareTensors("y", {1, 2, 3}, {1, 2, 3}, 0, 0).ok());
  EXPECT_TRUE(CompareTensors("y", {1, 2, 3.0001}, {1, 2, 3}, 1e-4, 0).ok());
  absl::Status status = CompareTensors("y", {1, 2.5, 3.1}, {1, 2, 3}, 1e-3, 0);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("2 of 3"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("[1]"));
  EXPECT_FALSE(CompareTensors("y", {NAN}, {0}, 1, 1).ok());
  EXPECT_FALSE(CompareTensors("y", {1, 2}, {1}, 1, 1).ok());
}

}  // namespace
}  // namespace cnnbench
