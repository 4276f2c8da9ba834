// The reference backend as a whole: names, unsupported dtypes and layouts,
// descriptor and input-spec errors, binding errors, Reorder, and that no
// Forward or Backward call allocates memory.
#include "kernels/reference/reference_backend.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "tests/kernels/gradient_check.h"
#include "tests/testing/alloc_counter.h"

namespace cnnbench {
namespace {

using kernel_test::CreateKernelUnderTest;
using kernel_test::FillDefaults;
using kernel_test::FillIntegers;
using kernel_test::FromDoubles;
using kernel_test::KernelUnderTest;
using kernel_test::ToDoubles;
using ::testing::HasSubstr;

std::vector<OpDesc> EveryOp() {
  std::vector<OpDesc> ops;
  for (const char* text : {
           "conv:mb2_g2_ic4oc6_ih5oh3kh3sh2ph1_iw5ow3kw3sw2pw1_bias",
           "pool:max_mb2ic3_ih5oh3kh3sh2ph1_iw5ow3kw3sw2pw1",
           "pool:avgx_mb2ic3_ih5oh3kh3sh2ph1_iw5ow3kw3sw2pw1",
           "fc:mb2ic6oc3",
           "bn:mb2ic3ih2iw2_eps0.001mom0.997",
           "relu:mb2ic3ih2iw2",
           "lrn:mb2ic3ih2iw2_r2k1a0.0001b0.75",
           "dropout:mb2ic3ih2iw2_p0.5",
           "concat:mb2ih2iw2_ic1:2",
           "add:mb2ic3ih2iw2",
           "softmax_xent:mb2ic6",
       }) {
    absl::StatusOr<OpDesc> op = ParseOpDesc(text);
    EXPECT_TRUE(op.ok()) << op.status();
    ops.push_back(*op);
  }
  return ops;
}

TEST(ReferenceBackendTest, Identity) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  EXPECT_EQ(backend->name(), "reference");
  EXPECT_TRUE(backend->device().is_cpu());
}

TEST(ReferenceBackendTest, EveryOpInFp32AndFp64) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  for (const OpDesc& op : EveryOp())
    for (DType dtype : {DType::kF32, DType::kF64}) {
      absl::StatusOr<std::unique_ptr<Kernel>> k = backend->Create(op, dtype, {});
      ASSERT_TRUE(k.ok()) << OpDescToString(op) << ": " << k.status();
      EXPECT_EQ((*k)->implementation(), "reference");
      for (const TensorSpec& spec : (*k)->signature().params) EXPECT_EQ(spec.dtype, dtype);
    }
}

TEST(ReferenceBackendTest, OtherDTypesAreUnsupported) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  for (DType dtype : {DType::kBF16, DType::kF16, DType::kI32}) {
    absl::StatusOr<std::unique_ptr<Kernel>> k = backend->Create(EveryOp()[0], dtype, {});
    ASSERT_FALSE(k.ok());
    EXPECT_EQ(k.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_THAT(std::string(k.status().message()), HasSubstr("unsupported: "));
  }
}

TEST(ReferenceBackendTest, InvalidDescriptorNamesItsString) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  ConvDesc conv;
  conv.c = 3;
  conv.groups = 2;
  absl::StatusOr<std::unique_ptr<Kernel>> k = backend->Create(conv, DType::kF32, {});
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(k.status().message()), HasSubstr(conv.ToString()));
  EXPECT_THAT(std::string(k.status().message()), HasSubstr("groups"));
}

TEST(ReferenceBackendTest, InputSpecsMustMatchTheDescriptor) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  const OpDesc relu = ReluDesc{{2, 3, 4, 5}};
  // Wrong shape.
  absl::StatusOr<std::unique_ptr<Kernel>> k =
      backend->Create(relu, DType::kF32, {TensorSpec::Plain(DType::kF32, Shape{2, 3, 5, 4})});
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(k.status().message()), HasSubstr("relu:mb2ic3ih4iw5"));
  EXPECT_THAT(std::string(k.status().message()), HasSubstr("[2,3,5,4]"));
  // Wrong dtype, wrong count.
  EXPECT_FALSE(
      backend->Create(relu, DType::kF32, {TensorSpec::Plain(DType::kF64, Shape{2, 3, 4, 5})}).ok());
  EXPECT_FALSE(backend
                   ->Create(AddDesc{{2, 3, 4, 5}}, DType::kF32,
                            {TensorSpec::Plain(DType::kF32, Shape{2, 3, 4, 5})})
                   .ok());
  // The right spec is accepted and kept.
  k = backend->Create(relu, DType::kF32, {TensorSpec::Plain(DType::kF32, Shape{2, 3, 4, 5})});
  ASSERT_TRUE(k.ok()) << k.status();
  // Blocked and NHWC layouts are another backend's business.
  TensorSpec blocked = TensorSpec::Plain(DType::kF32, Shape{2, 3, 4, 5});
  blocked.layout = Layout::kBlocked;
  k = backend->Create(relu, DType::kF32, {blocked});
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), absl::StatusCode::kUnimplemented);
  TensorSpec nhwc = TensorSpec::Plain(DType::kF32, Shape{2, 3, 4, 5});
  nhwc.layout = Layout::kNHWC;
  EXPECT_EQ(backend->Create(relu, DType::kF32, {nhwc}).status().code(),
            absl::StatusCode::kUnimplemented);
}

TEST(ReferenceBackendTest, MissingBindingsAreErrors) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  absl::StatusOr<KernelUnderTest> k =
      CreateKernelUnderTest(*backend, FcDesc{2, 3, 4, true}, DType::kF32);
  ASSERT_TRUE(k.ok());
  KernelArgs args = k->buffers.Args();
  args.params.pop_back();
  absl::Status status = k->kernel->Forward(args);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("params"));
  args = k->buffers.Args();
  args.y = nullptr;
  EXPECT_FALSE(k->kernel->Forward(args).ok());
  args = k->buffers.Args();
  args.dy = nullptr;
  EXPECT_FALSE(k->kernel->BackwardData(args).ok());
  EXPECT_FALSE(k->kernel->BackwardWeights(args).ok());

  absl::StatusOr<KernelUnderTest> pool = CreateKernelUnderTest(
      *backend, *PoolDesc::Parse("pool:max_mb1ic1_ih4oh2kh2sh2ph0_iw4ow2kw2sw2pw0"), DType::kF32);
  ASSERT_TRUE(pool.ok());
  args = pool->buffers.Args();
  args.saved = nullptr;  // a training forward must save the argmax
  EXPECT_FALSE(pool->kernel->Forward(args).ok());
  EXPECT_FALSE(pool->kernel->BackwardData(args).ok());
  args.training = false;  // an inference forward need not
  EXPECT_TRUE(pool->kernel->Forward(args).ok());
}

TEST(ReferenceBackendTest, NoAllocationInsideCalls) {
  // The counter sees allocations at all (an escaping one, so it stays).
  std::vector<std::string> sink;
  testing::AllocationCounter::Start();
  sink.emplace_back(100, 'x');
  ASSERT_GT(testing::AllocationCounter::Stop(), 0);

  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  for (const OpDesc& op : EveryOp())
    for (DType dtype : {DType::kF32, DType::kF64}) {
      absl::StatusOr<KernelUnderTest> k = CreateKernelUnderTest(*backend, op, dtype);
      ASSERT_TRUE(k.ok()) << k.status();
      const KernelSignature& sig = k->kernel->signature();
      FillDefaults(k->buffers, 43);
      if (OpKind(op) == "softmax_xent")
        FillIntegers(sig.inputs[1], k->buffers.x[1].data(), 47, 0, 5);
      FromDoubles(sig.output, k->buffers.dy.data(),
                  std::vector<double>(sig.output.shape.num_elements(), 1.0))
          .IgnoreError();
      const KernelArgs args = k->buffers.Args();
      const KernelArgs inference = k->buffers.Args(/*training=*/false);
      testing::AllocationCounter::Start();
      absl::Status forward = k->kernel->Forward(args);
      absl::Status data = k->kernel->BackwardData(args);
      absl::Status weights = k->kernel->BackwardWeights(args);
      absl::Status infer = k->kernel->Forward(inference);
      const long allocations = testing::AllocationCounter::Stop();
      EXPECT_TRUE(forward.ok() && data.ok() && weights.ok() && infer.ok())
          << OpDescToString(op) << ": " << forward << " " << data << " " << weights << " " << infer;
      EXPECT_EQ(allocations, 0) << OpDescToString(op) << " " << DTypeName(dtype);
    }
}

TEST(ReferenceBackendTest, ReorderCopiesAndConverts) {
  std::unique_ptr<Backend> backend = CreateReferenceBackend();
  const TensorSpec f32 = TensorSpec::Plain(DType::kF32, Shape{2, 3});
  const TensorSpec f64 = TensorSpec::Plain(DType::kF64, Shape{2, 3});
  const std::vector<float> src = {1.5f, -2.0f, 3.25f, 0.0f, 1e-3f, 7.0f};
  std::vector<double> wide(6);
  ASSERT_TRUE(backend->Reorder(f32, src.data(), f64, wide.data()).ok());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(wide[i], static_cast<double>(src[i]));
  std::vector<float> back(6), copy(6);
  ASSERT_TRUE(backend->Reorder(f64, wide.data(), f32, back.data()).ok());
  EXPECT_EQ(back, src);
  ASSERT_TRUE(backend->Reorder(f32, src.data(), f32, copy.data()).ok());
  EXPECT_EQ(copy, src);

  // Differing shapes, blocked layouts and other dtypes are errors.
  EXPECT_EQ(
      backend->Reorder(f32, src.data(), TensorSpec::Plain(DType::kF32, Shape{3, 2}), copy.data())
          .code(),
      absl::StatusCode::kInvalidArgument);
  TensorSpec blocked = f32;
  blocked.layout = Layout::kBlocked;
  EXPECT_EQ(backend->Reorder(f32, src.data(), blocked, copy.data()).code(),
            absl::StatusCode::kUnimplemented);
  EXPECT_EQ(
      backend->Reorder(f32, src.data(), TensorSpec::Plain(DType::kBF16, Shape{2, 3}), copy.data())
          .code(),
      absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace cnnbench
