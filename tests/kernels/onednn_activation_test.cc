// oneDNN's activations beyond ReLU: ReLU6 fused as a convolution's
// forward-only epilogue (inference, after batch norm folding) equals the
// reference, on outputs that cross both clips; in training the backend
// refuses it fused, so the plan keeps the ReLU6 a layer.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "tests/kernels/gradient_check.h"
#include "tests/kernels/onednn_test_util.h"

namespace cnnbench {
namespace {

using onednn_test::OneDnn;
using onednn_test::ReadPlain;
using onednn_test::Reference;
using onednn_test::WritePlain;

TEST(OneDnnActivationTest, ForwardOnlyConvRelu6EpilogueMatchesTheReference) {
  ASSERT_NE(OneDnn(), nullptr);
  const OpDesc desc = *ParseOpDesc("conv:mb2_ic8oc16_ih6oh6kh3sh1ph1_iw6ow6kw3sw1pw1_bias_relu6");
  KernelOptions options = KernelOptions::ForDType(DType::kF32);
  options.forward_only = true;
  auto onednn = kernel_test::CreateKernelUnderTest(*OneDnn(), desc, DType::kF32);
  EXPECT_FALSE(onednn.ok()) << "ReLU6 fused in training: a layer of its own on oneDNN";
  auto ours = OneDnn()->Create(desc, options, {});
  ASSERT_TRUE(ours.ok()) << ours.status();
  auto truth = kernel_test::CreateKernelUnderTest(*Reference(), desc, DType::kF32);
  ASSERT_TRUE(truth.ok()) << truth.status();
  auto buffers = kernel_test::AllocateBuffers((*ours)->signature());
  ASSERT_TRUE(buffers.ok()) << buffers.status();
  const KernelSignature& sig = (*ours)->signature();
  const KernelSignature& plain = truth->kernel->signature();
  // Integers: x in [-3, 3], weights in [-1, 1], bias 0: sums of 72 products
  // exact in fp32, reaching past 0 and 6.
  const std::vector<double> x = onednn_test::IntegerValues(plain.inputs[0].shape, 3, -3, 3);
  const std::vector<double> w = onednn_test::IntegerValues(plain.params[0].shape, 4, -1, 1);
  const std::vector<double> b(plain.params[1].shape.num_elements(), 0.0);
  ASSERT_TRUE(WritePlain(sig.inputs[0], buffers->x[0].data(), x).ok());
  ASSERT_TRUE(WritePlain(sig.params[0], buffers->params[0].data(), w).ok());
  ASSERT_TRUE(WritePlain(sig.params[1], buffers->params[1].data(), b).ok());
  ASSERT_TRUE(kernel_test::FromDoubles(plain.inputs[0], truth->buffers.x[0].data(), x).ok());
  ASSERT_TRUE(kernel_test::FromDoubles(plain.params[0], truth->buffers.params[0].data(), w).ok());
  ASSERT_TRUE(kernel_test::FromDoubles(plain.params[1], truth->buffers.params[1].data(), b).ok());
  ASSERT_TRUE((*ours)->Forward(buffers->Args(/*training=*/false)).ok());
  ASSERT_TRUE(truth->kernel->Forward(truth->buffers.Args(/*training=*/false)).ok());
  auto got = ReadPlain(sig.output, buffers->y.data());
  ASSERT_TRUE(got.ok()) << got.status();
  const std::vector<double> want = kernel_test::ToDoubles(plain.output, truth->buffers.y.data());
  EXPECT_EQ(*got, want);
  int zeros = 0, sixes = 0;
  for (double v : want) {
    zeros += v == 0;
    sixes += v == 6;
  }
  EXPECT_GT(zeros, 0);
  EXPECT_GT(sixes, 0);
}

}  // namespace
}  // namespace cnnbench
