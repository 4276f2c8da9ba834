// The cuda backend's convolution. Host-only (every build): the descriptor ->
// cuDNN translation (dims, NCHW/NHWC strides, pre/post padding, strides,
// dilation, groups), the scratch arithmetic, and the three cuDNN graphs
// built and validated (where the build has cudnn-frontend), and the
// epilogue's arithmetic (bias, then ReLU or ReLU6) against the reference.
// On a GPU: every pass against the reference, over the shapes the models use.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"

#include "gtest/gtest.h"
#include "kernels/cuda/conv_graph.h"
#include "kernels/cuda/conv_problem.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/op_math.h"
#include "kernels/cuda/plan_choices.h"
#include "kernels/desc.h"
#include "tests/kernels/cuda/cuda_test_util.h"
#include "tests/kernels/gradient_check.h"

namespace cnnbench {
namespace {

using cuda::ConvPass;
using cuda::ConvProblem;
using cuda::ConvTensor;
using cuda::MakeConvProblem;
using Dims = std::array<int64_t, 4>;

// Shapes the models use, small enough for the fp64 reference.
const char* const kShapes[] = {
    "conv:mb2_ic16oc32_ih14oh14kh3sh1ph1_iw14ow14kw3sw1pw1",       // 3x3
    "conv:mb2_ic8oc16_ih15oh8kh3sh2ph1_iw15ow8kw3sw2pw1",          // 3x3 stride 2
    "conv:mb2_ic32oc16_ih8oh4kh1sh2ph0_iw8ow4kw1sw2pw0",           // 1x1 stride 2
    "conv:mb2_ic3oc16_ih32oh16kh7sh2pt2pb3_iw32ow16kw7sw2pl2pr3",  // 7x7 stem, SAME
    "conv:mb2_ic3oc16_ih32oh16kh7sh2ph3_iw32ow16kw7sw2pw3",        // 7x7 stem, resnet's pads
    "conv:mb2_g4_ic16oc32_ih10oh10kh3sh1ph1_iw10ow10kw3sw1pw1",    // groups
    "conv:mb2_g16_ic16oc16_ih10oh10kh3sh1ph1_iw10ow10kw3sw1pw1",   // depthwise
    "conv:mb2_ic8oc8_ih9oh9kh4sh1pt1pb2_iw9ow9kw4sw1pl2pr1",       // asymmetric padding
    "conv:mb2_ic8oc8_ih12oh12kh3sh1ph2dh2_iw12ow12kw3sw1pw2dw2",   // dilation
    "conv:mb2_ic8oc16_ih8oh8kh3sh1ph1_iw8ow8kw3sw1pw1_bias",       // bias
    "conv:mb3_ic8oc8_ih11oh5kh3sh2pt0pb1_iw7ow7kw1sw1pw0_bias",    // rectangular, odd
};

ConvDesc Desc(const std::string& text) {
  auto desc = ConvDesc::Parse(text);
  EXPECT_TRUE(desc.ok()) << text << ": " << desc.status();
  return desc.ok() ? *desc : ConvDesc{};
}

TEST(ConvProblemTest, DenseStridesOfBothLayouts) {
  const Dims dims = {2, 3, 4, 5};
  EXPECT_EQ(cuda::DenseStrides(dims, Layout::kNCHW), (Dims{60, 20, 5, 1}));
  EXPECT_EQ(cuda::DenseStrides(dims, Layout::kNHWC), (Dims{60, 1, 15, 3}));
}

TEST(ConvProblemTest, Fp32IsNchwWithoutTf32) {
  ConvDesc d = Desc("conv:mb2_ic16oc32_ih14oh14kh3sh1ph1_iw14ow14kw3sw1pw1");
  auto p = MakeConvProblem(d, Precision::kFp32, Layout::kNCHW);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->io_type, DType::kF32);
  EXPECT_FALSE(p->allow_tf32);
  EXPECT_EQ(p->x.dims, (Dims{2, 16, 14, 14}));
  EXPECT_EQ(p->x.strides, (Dims{16 * 14 * 14, 14 * 14, 14, 1}));
  EXPECT_EQ(p->w.dims, (Dims{32, 16, 3, 3}));
  EXPECT_EQ(p->w.strides, (Dims{16 * 9, 9, 3, 1}));
  EXPECT_EQ(p->y.dims, (Dims{2, 32, 14, 14}));
  EXPECT_EQ(p->pre_padding, (std::array<int64_t, 2>{1, 1}));
  EXPECT_EQ(p->post_padding, (std::array<int64_t, 2>{1, 1}));
  EXPECT_EQ(p->stride, (std::array<int64_t, 2>{1, 1}));
  EXPECT_EQ(p->dilation, (std::array<int64_t, 2>{1, 1}));
  EXPECT_EQ(p->key, d.ToString() + "/fp32/nchw");
}

TEST(ConvProblemTest, TensorCorePrecisionsInNhwc) {
  ConvDesc d = Desc("conv:mb2_ic3oc16_ih32oh16kh7sh2pt2pb3_iw32ow16kw7sw2pl2pr3");
  auto half = MakeConvProblem(d, Precision::kFp16, Layout::kNHWC);
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_EQ(half->io_type, DType::kF16);
  // Logical dims, NHWC strides: (K,C,R,S) weights stored (K,R,S,C).
  EXPECT_EQ(half->x.dims, (Dims{2, 3, 32, 32}));
  EXPECT_EQ(half->x.strides, (Dims{3 * 32 * 32, 1, 32 * 3, 3}));
  EXPECT_EQ(half->w.dims, (Dims{16, 3, 7, 7}));
  EXPECT_EQ(half->w.strides, (Dims{7 * 7 * 3, 1, 7 * 3, 3}));
  EXPECT_EQ(half->y.strides, (Dims{16 * 16 * 16, 1, 16 * 16, 16}));
  // SAME padding of a 7x7 stride-2 window over 32: 2 before, 3 after.
  EXPECT_EQ(half->pre_padding, (std::array<int64_t, 2>{2, 2}));
  EXPECT_EQ(half->post_padding, (std::array<int64_t, 2>{3, 3}));
  EXPECT_EQ(half->stride, (std::array<int64_t, 2>{2, 2}));
  auto bf16 = MakeConvProblem(d, Precision::kBf16, Layout::kNHWC);
  ASSERT_TRUE(bf16.ok());
  EXPECT_EQ(bf16->io_type, DType::kBF16);
  auto tf32 = MakeConvProblem(d, Precision::kTf32, Layout::kNHWC);
  ASSERT_TRUE(tf32.ok());
  EXPECT_EQ(tf32->io_type, DType::kF32);
  EXPECT_TRUE(tf32->allow_tf32);
  EXPECT_NE(tf32->key, half->key);
}

TEST(ConvProblemTest, GroupsDilationAndAsymmetricPadding) {
  auto grouped = MakeConvProblem(Desc("conv:mb2_g4_ic16oc32_ih10oh10kh3sh1ph1_iw10ow10kw3sw1pw1"),
                                 Precision::kFp32, Layout::kNCHW);
  ASSERT_TRUE(grouped.ok());
  EXPECT_EQ(grouped->w.dims, (Dims{32, 4, 3, 3}));  // C/g input channels per filter
  auto depthwise =
      MakeConvProblem(Desc("conv:mb2_g16_ic16oc16_ih10oh10kh3sh1ph1_iw10ow10kw3sw1pw1"),
                      Precision::kBf16, Layout::kNHWC);
  ASSERT_TRUE(depthwise.ok());
  EXPECT_EQ(depthwise->w.dims, (Dims{16, 1, 3, 3}));
  auto padded = MakeConvProblem(Desc("conv:mb2_ic8oc8_ih9oh9kh4sh1pt1pb2_iw9ow9kw4sw1pl2pr1"),
                                Precision::kFp32, Layout::kNCHW);
  ASSERT_TRUE(padded.ok());
  EXPECT_EQ(padded->pre_padding, (std::array<int64_t, 2>{1, 2}));   // top, left
  EXPECT_EQ(padded->post_padding, (std::array<int64_t, 2>{2, 1}));  // bottom, right
  auto dilated = MakeConvProblem(Desc("conv:mb2_ic8oc8_ih12oh12kh3sh1ph2dh2_iw12ow12kw3sw1pw2dw2"),
                                 Precision::kFp32, Layout::kNCHW);
  ASSERT_TRUE(dilated.ok());
  EXPECT_EQ(dilated->dilation, (std::array<int64_t, 2>{2, 2}));
  auto strided = MakeConvProblem(Desc("conv:mb3_ic8oc8_ih11oh5kh3sh2pt0pb1_iw7ow7kw1sw1pw0_bias"),
                                 Precision::kFp32, Layout::kNCHW);
  ASSERT_TRUE(strided.ok());
  EXPECT_EQ(strided->stride, (std::array<int64_t, 2>{2, 1}));
  EXPECT_EQ(strided->pre_padding, (std::array<int64_t, 2>{0, 0}));
  EXPECT_EQ(strided->post_padding, (std::array<int64_t, 2>{1, 0}));
}

TEST(ConvProblemTest, RejectsWhatCudnnCannotBeAskedFor) {
  ConvDesc d = Desc("conv:mb2_ic16oc32_ih14oh14kh3sh1ph1_iw14ow14kw3sw1pw1");
  auto blocked = MakeConvProblem(d, Precision::kFp32, Layout::kBlocked);
  EXPECT_EQ(blocked.status().code(), absl::StatusCode::kInvalidArgument);
  ConvDesc wrong = d;
  wrong.h.out = 13;  // not what the window gives
  auto bad = MakeConvProblem(wrong, Precision::kFp32, Layout::kNCHW);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("conv:mb2"), std::string::npos)
      << bad.status();
}

TEST(ConvProblemTest, ScratchIsTheLargestWorkspaceAligned) {
  EXPECT_EQ(cuda::ConvScratchBytes({0, 0, 0}, 256), 0u);
  EXPECT_EQ(cuda::ConvScratchBytes({1, 0, 0}, 256), 256u);
  EXPECT_EQ(cuda::ConvScratchBytes({100, 5000, 300}, 256), 5120u);
  EXPECT_EQ(cuda::ConvScratchBytes({512, 256, 512}, 256), 512u);
  EXPECT_EQ(cuda::ConvScratchBytes({7, 3, 0}, 1), 7u);
}

// The validated graph's output tensor is the problem's: y for fprop, x for
// dgrad, w for wgrad, with the layout's strides.
void ExpectGraphsFit(const std::string& text, Precision precision, Layout layout) {
  SCOPED_TRACE(text + " " + std::string(PrecisionName(precision)));
  auto problem = MakeConvProblem(Desc(text), precision, layout);
  ASSERT_TRUE(problem.ok()) << problem.status();
  auto graphs = cuda::ConvGraphs::Validate(*problem);
  ASSERT_TRUE(graphs.ok()) << graphs.status();
  const ConvTensor fprop = (*graphs)->output(ConvPass::kForward);
  EXPECT_EQ(fprop.dims, problem->y.dims);
  EXPECT_EQ(fprop.strides, problem->y.strides);
  const ConvTensor dgrad = (*graphs)->output(ConvPass::kBackwardData);
  EXPECT_EQ(dgrad.dims, problem->x.dims);
  EXPECT_EQ(dgrad.strides, problem->x.strides);
  const ConvTensor wgrad = (*graphs)->output(ConvPass::kBackwardFilter);
  EXPECT_EQ(wgrad.dims, problem->w.dims);
  EXPECT_EQ(wgrad.strides, problem->w.strides);
  EXPECT_EQ((*graphs)->problem().key, problem->key);
}

TEST(ConvGraphTest, ThreeGraphsValidateWithoutADevice) {
  if (!cuda::ConvGraphsAvailable()) GTEST_SKIP() << cuda::ConvGraphsUnavailableReason();
  for (const char* shape : kShapes) {
    ExpectGraphsFit(shape, Precision::kFp32, Layout::kNCHW);
    ExpectGraphsFit(shape, Precision::kFp16, Layout::kNHWC);
  }
  ExpectGraphsFit(kShapes[0], Precision::kBf16, Layout::kNHWC);
  ExpectGraphsFit(kShapes[0], Precision::kTf32, Layout::kNHWC);
  ExpectGraphsFit(kShapes[3], Precision::kFp16, Layout::kNCHW);
}

TEST(ConvGraphTest, WithoutTheHeadersConvolutionIsUnsupported) {
  if (cuda::ConvGraphsAvailable()) GTEST_SKIP() << "this build has cudnn-frontend";
  auto problem = MakeConvProblem(Desc(kShapes[0]), Precision::kFp32, Layout::kNCHW);
  ASSERT_TRUE(problem.ok());
  auto graphs = cuda::ConvGraphs::Validate(*problem);
  ASSERT_FALSE(graphs.ok());
  EXPECT_EQ(graphs.status().message().rfind("unsupported: ", 0), 0u) << graphs.status();
  EXPECT_NE(std::string(graphs.status().message()).find("cudnn-frontend headers not found"),
            std::string::npos);
}

// On a GPU.

#define SKIP_WITHOUT_GPU() \
  if (cuda_test::Cuda() == nullptr) GTEST_SKIP() << cuda_test::NoGpuReason()

TEST(CudaConvTest, SignatureSaysWhatTheKernelReads) {
  SKIP_WITHOUT_GPU();
  const ConvDesc d = Desc("conv:mb2_ic8oc16_ih8oh8kh3sh1ph1_iw8ow8kw3sw1pw1_bias");
  auto fp32 = cuda_test::Cuda()->Create(d, KernelOptions::ForPrecision(Precision::kFp32), {});
  ASSERT_TRUE(fp32.ok()) << fp32.status();
  const KernelSignature& s = (*fp32)->signature();
  EXPECT_EQ(s.inputs[0].layout, Layout::kNCHW);
  EXPECT_EQ(s.params[0].layout, Layout::kNCHW);
  EXPECT_EQ(s.params[0].shape, d.weights_shape());
  EXPECT_EQ(s.params[1].dtype, DType::kF32);
  EXPECT_EQ((*fp32)->implementation().rfind("cudnn:fprop=", 0), 0u) << (*fp32)->implementation();
  auto bf16 = cuda_test::Cuda()->Create(d, KernelOptions::ForPrecision(Precision::kBf16), {});
  ASSERT_TRUE(bf16.ok()) << bf16.status();
  const KernelSignature& h = (*bf16)->signature();
  EXPECT_EQ(h.inputs[0].layout, Layout::kNHWC);
  EXPECT_EQ(h.output.layout, Layout::kNHWC);
  EXPECT_EQ(h.params[0].layout, Layout::kNHWC);  // (K,R,S,C/g) over logical (K,C/g,R,S)
  EXPECT_EQ(h.params[0].dtype, DType::kBF16);
  EXPECT_EQ(h.params[1].dtype, DType::kF32);
  EXPECT_EQ(h.scratch_bytes % 256, 0u);
  // The same descriptor twice: the plans come from the backend's cache.
  auto again = cuda_test::Cuda()->Create(d, KernelOptions::ForPrecision(Precision::kBf16), {});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->implementation(), (*bf16)->implementation());
}

void Compare(Precision precision, double rtol, double atol) {
  for (const char* shape : kShapes) {
    cuda_test::CompareOptions o;
    o.precision = precision;
    o.forward_rtol = o.backward_rtol = rtol;
    o.forward_atol = o.backward_atol = atol;
    absl::Status status = cuda_test::CompareWithReference(Desc(shape), o);
    if (status.ok()) continue;
    // The engines that ran (the kernel comes from the backend's cache).
    auto kernel =
        cuda_test::Cuda()->Create(Desc(shape), KernelOptions::ForPrecision(precision), {});
    ADD_FAILURE() << PrecisionName(precision) << " " << shape << ": " << status << " ["
                  << (kernel.ok() ? (*kernel)->implementation() : kernel.status().ToString())
                  << "]";
  }
}

// Small integers: products and fp32 sums are exact, so fp32 is held tight
// (only Winograd/FFT engines round); the low precisions round the results
// once (bf16 keeps 8 bits): rel 1e-2.
TEST(CudaConvTest, Fp32MatchesTheReference) {
  SKIP_WITHOUT_GPU();
  Compare(Precision::kFp32, 1e-5, 1e-3);
}

TEST(CudaConvTest, Tf32MatchesTheReference) {
  SKIP_WITHOUT_GPU();
  Compare(Precision::kTf32, 1e-2, 1e-2);
}

TEST(CudaConvTest, Fp16MatchesTheReference) {
  SKIP_WITHOUT_GPU();
  Compare(Precision::kFp16, 1e-2, 1e-2);
}

TEST(CudaConvTest, Bf16MatchesTheReference) {
  SKIP_WITHOUT_GPU();
  Compare(Precision::kBf16, 1e-2, 1e-2);
}

// The ReLU epilogue in forward-only kernels, with and without a bias, in
// every precision; a training kernel with it is refused (its backward is not
// written), so training plans keep the ReLU as a layer. ReLU6 the same.
TEST(CudaConvTest, ReluEpilogueMatchesTheReferenceForwardOnly) {
  SKIP_WITHOUT_GPU();
  for (const char* shape : {"conv:mb2_ic8oc16_ih8oh8kh3sh1ph1_iw8ow8kw3sw1pw1_bias_relu",
                            "conv:mb2_ic8oc16_ih15oh8kh3sh2ph1_iw15ow8kw3sw2pw1_relu",
                            "conv:mb2_ic8oc16_ih8oh8kh3sh1ph1_iw8ow8kw3sw1pw1_bias_relu6"}) {
    for (Precision precision :
         {Precision::kFp32, Precision::kTf32, Precision::kFp16, Precision::kBf16}) {
      cuda_test::CompareOptions o;
      o.precision = precision;
      o.backward = false;
      o.forward_rtol = precision == Precision::kFp32 ? 1e-5 : 1e-2;
      o.forward_atol = precision == Precision::kFp32 ? 1e-3 : 1e-2;
      absl::Status status = cuda_test::CompareWithReference(Desc(shape), o);
      EXPECT_TRUE(status.ok()) << PrecisionName(precision) << " " << shape << ": " << status;
    }
    KernelOptions options = KernelOptions::ForPrecision(Precision::kFp32);
    options.forward_only = true;
    auto kernel = cuda_test::Cuda()->Create(Desc(shape), options, {});
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    EXPECT_NE((*kernel)->implementation().find("relu"), std::string::npos)
        << (*kernel)->implementation();
    KernelArgs args;
    EXPECT_EQ((*kernel)->BackwardData(args).code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_EQ((*kernel)->BackwardWeights(args).code(), absl::StatusCode::kFailedPrecondition);
    options.forward_only = false;
    absl::Status training = cuda_test::Cuda()->Supports(Desc(shape), options);
    EXPECT_EQ(training.code(), absl::StatusCode::kUnimplemented) << training;
  }
}

// The epilogue kernel's arithmetic (op_math.h's ConvEpilogueValue), run on
// the host: applied to the reference's convolution without bias and
// activation, it gives the reference's fused one (ReLU, ReLU6) exactly, on
// integers whose outputs reach past both of ReLU6's clips.
TEST(CudaConvHostTest, EpilogueArithmeticMatchesTheReference) {
  const std::string plain = "conv:mb2_ic8oc16_ih6oh6kh3sh1ph1_iw6ow6kw3sw1pw1";
  for (ActivationKind kind : {ActivationKind::kRelu, ActivationKind::kRelu6}) {
    const std::string text = plain + "_bias" + ActivationSuffix(kind);
    auto bare = kernel_test::CreateKernelUnderTest(*cuda_test::Reference(), Desc(plain),
                                                   DType::kF64);
    auto fused = kernel_test::CreateKernelUnderTest(*cuda_test::Reference(), Desc(text),
                                                    DType::kF64);
    ASSERT_TRUE(bare.ok()) << bare.status();
    ASSERT_TRUE(fused.ok()) << fused.status();
    kernel_test::KernelBuffers& b = bare->buffers;
    kernel_test::KernelBuffers& f = fused->buffers;
    kernel_test::FillIntegers(b.signature.inputs[0], b.x[0].data(), 3, -3, 3);
    kernel_test::FillIntegers(b.signature.params[0], b.params[0].data(), 4, -1, 1);
    kernel_test::FillIntegers(f.signature.params[1], f.params[1].data(), 5, -2, 2);
    std::memcpy(f.x[0].data(), b.x[0].data(), b.x[0].size());
    std::memcpy(f.params[0].data(), b.params[0].data(), b.params[0].size());
    ASSERT_TRUE(bare->kernel->Forward(b.Args(/*training=*/false)).ok());
    ASSERT_TRUE(fused->kernel->Forward(f.Args(/*training=*/false)).ok());
    const std::vector<double> out = kernel_test::ToDoubles(b.signature.output, b.y.data());
    const std::vector<double> want = kernel_test::ToDoubles(f.signature.output, f.y.data());
    const std::vector<double> bias =
        kernel_test::ToDoubles(f.signature.params[1], f.params[1].data());
    int zeros = 0, sixes = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      const int64_t k = static_cast<int64_t>(i / 36) % 16;  // NCHW, 6x6 planes
      const float got = cuda::ConvEpilogueValue(static_cast<float>(out[i]),
                                                static_cast<float>(bias[k]), kind);
      ASSERT_EQ(got, static_cast<float>(want[i])) << text << ", element " << i;
      zeros += out[i] + bias[k] <= 0;
      sixes += out[i] + bias[k] >= 6;
    }
    EXPECT_GT(zeros, 0) << text;
    EXPECT_GT(sixes, 0) << text;
  }
}

// Forward only means forward only: an inference plan's convolution lowers,
// builds and times the forward pass alone, and a training kernel of the same
// descriptor later gets all three passes (the forward-only plans do not
// serve it).
TEST(CudaConvTest, AForwardOnlyKernelBuildsNoBackwardPlan) {
  SKIP_WITHOUT_GPU();
  const ConvDesc d = Desc("conv:mb2_ic16oc16_ih12oh12kh3sh1ph1_iw12ow12kw3sw1pw1");
  KernelOptions options = KernelOptions::ForPrecision(Precision::kBf16);
  options.forward_only = true;
  auto inference = cuda_test::Cuda()->Create(d, options, {});
  ASSERT_TRUE(inference.ok()) << inference.status();
  const std::string impl = (*inference)->implementation();
  EXPECT_NE(impl.find("dgrad=forward-only,wgrad=forward-only"), std::string::npos) << impl;
  EXPECT_EQ(impl.find("fprop=none"), std::string::npos) << impl;
  KernelArgs args;
  EXPECT_EQ((*inference)->BackwardData(args).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*inference)->BackwardWeights(args).code(), absl::StatusCode::kFailedPrecondition);
  options.forward_only = false;
  auto training = cuda_test::Cuda()->Create(d, options, {});
  ASSERT_TRUE(training.ok()) << training.status();
  EXPECT_EQ((*training)->implementation().find("forward-only"), std::string::npos)
      << (*training)->implementation();
}

// The plan-choice file on the GPU (kernels/cuda/plan_choices.h): a backend
// records each pass's chosen engine, unless cuDNN reports a knob of it
// that cudnn-frontend cannot name (RecordedEngine::CheckReplayable; seen on
// an H100 with cuDNN 9.19); the file read again (as a later process reads
// it) and a fresh backend (its own in-process cache) builds the recorded
// engines alone, with the same engine names and right results.
TEST(CudaConvTest, APlanChoiceFileIsWrittenAndReplayedByAnotherBackend) {
  SKIP_WITHOUT_GPU();
  if (!cuda::ConvGraphsAvailable()) GTEST_SKIP() << cuda::ConvGraphsUnavailableReason();
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/conv_plans.tsv";
  std::remove(path.c_str());
  cuda::PlanChoices& choices = cuda::PlanChoices::Process();
  const std::string before = choices.path();
  choices.Open(path);
  // A shape no other test of this file uses.
  const ConvDesc d = Desc("conv:mb3_ic24oc40_ih10oh10kh3sh1ph1_iw10ow10kw3sw1pw1");
  const KernelOptions options = KernelOptions::ForPrecision(Precision::kBf16);
  auto problem = MakeConvProblem(d, Precision::kBf16, Layout::kNHWC);
  ASSERT_TRUE(problem.ok()) << problem.status();
  // Each pass's engine name in an implementation ("cudnn:fprop=...,dgrad=...").
  auto engine_of = [](const std::string& implementation, const std::string& pass) {
    const size_t at = implementation.find(pass + "=");
    if (at == std::string::npos) return std::string();
    const size_t end = implementation.find(',', at);
    return implementation.substr(at, end == std::string::npos ? std::string::npos : end - at);
  };
  std::string first_implementation;
  std::vector<std::string> recorded_passes;
  {
    auto backend = CreateCudaBackend(Device::Cuda(0));
    ASSERT_TRUE(backend.ok()) << backend.status();
    const int recorded = choices.recorded();
    auto kernel = (*backend)->Create(d, options, {});
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    first_implementation = (*kernel)->implementation();
    for (const char* pass : {"fprop", "dgrad", "wgrad"}) {
      auto choice = choices.Find(cuda::ConvChoiceKey(problem->key, pass, false));
      if (!choice.has_value()) continue;
      ASSERT_EQ(choice->engines.size(), 1u) << pass;
      EXPECT_TRUE(choice->engines[0].CheckReplayable().ok()) << pass;
      recorded_passes.push_back(pass);
    }
    EXPECT_EQ(choices.recorded() - recorded, static_cast<int>(recorded_passes.size()));
  }
  if (recorded_passes.empty())
    GTEST_SKIP() << "no pass's engine can be replayed here: " << first_implementation;
  EXPECT_TRUE(absl::StrContains(choices.Open(path),
                                absl::StrCat(recorded_passes.size(), " choices read")))
      << choices.Open(path);
  auto backend = CreateCudaBackend(Device::Cuda(0));
  ASSERT_TRUE(backend.ok()) << backend.status();
  const int hits = choices.hits();
  auto kernel = (*backend)->Create(d, options, {});
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_EQ(choices.hits() - hits, static_cast<int>(recorded_passes.size()))
      << "every recorded pass from the file";
  for (const std::string& pass : recorded_passes)
    EXPECT_EQ(engine_of((*kernel)->implementation(), pass), engine_of(first_implementation, pass))
        << pass << " in " << (*kernel)->implementation();
  cuda_test::CompareOptions o;
  o.precision = Precision::kBf16;
  o.forward_rtol = o.backward_rtol = 1e-2;
  o.forward_atol = o.backward_atol = 1e-2;
  o.backend = backend->get();
  EXPECT_TRUE(cuda_test::CompareWithReference(d, o).ok());
  choices.Open(before);
}

// Real-valued inputs, where tf32 rounds each product's inputs to 10 bits.
TEST(CudaConvTest, Tf32OnRealValues) {
  SKIP_WITHOUT_GPU();
  cuda_test::CompareOptions o;
  o.precision = Precision::kTf32;
  o.integers = false;
  o.low = -1;
  o.high = 1;
  o.forward_rtol = o.backward_rtol = 1e-2;
  o.forward_atol = o.backward_atol = 5e-2;
  absl::Status status = cuda_test::CompareWithReference(Desc(kShapes[0]), o);
  EXPECT_TRUE(status.ok()) << status;
}

}  // namespace
}  // namespace cnnbench
