// What every backend checks the same way, because Backend checks it once in
// its non-virtual entry points: a bad optimizer descriptor, AddN without
// inputs or with a null one, host data that is not plain, an update without
// its buffers, and a bad op descriptor. Run on each backend this machine
// has (cuda where a GPU is present).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/device.h"
#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "kernels/desc.h"
#include "kernels/kernel.h"
#include "kernels/op_traits.h"

namespace cnnbench {
namespace {

struct Param {
  std::string backend;
  Device device;
};

class BackendContractTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    if (GetParam().device.is_cuda() && CudaDeviceCount() == 0)
      GTEST_SKIP() << "no GPU: the cuda backend's contract is checked where one is present";
    auto backend = CreateBackend(GetParam().backend, GetParam().device);
    ASSERT_TRUE(backend.ok()) << backend.status();
    backend_ = *std::move(backend);
  }

  void* Device(size_t bytes) {
    auto buffer = Buffer::Allocate(backend_->device(), bytes);
    EXPECT_TRUE(buffer.ok()) << buffer.status();
    buffers_.push_back(*std::move(buffer));
    return buffers_.back().data();
  }

  std::unique_ptr<Backend> backend_;
  std::vector<Buffer> buffers_;
};

TEST_P(BackendContractTest, ABadOptimizerDescriptorIsNamed) {
  SgdDesc desc;
  desc.count = 0;
  auto optimizer = backend_->CreateOptimizer(desc);
  ASSERT_FALSE(optimizer.ok());
  EXPECT_EQ(optimizer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(optimizer.status().message(), "bad descriptor 'sgd:"))
      << optimizer.status();
}

TEST_P(BackendContractTest, AnUpdateWithoutItsBuffersIsAnError) {
  SgdDesc desc;
  desc.count = 16;
  auto optimizer = backend_->CreateOptimizer(desc);
  ASSERT_TRUE(optimizer.ok()) << optimizer.status();
  float* params = static_cast<float*>(Device(16 * sizeof(float)));
  float* grads = static_cast<float*>(Device(16 * sizeof(float)));
  const absl::Status no_grads = (*optimizer)->Update(params, nullptr, nullptr);
  EXPECT_EQ(no_grads.code(), absl::StatusCode::kInvalidArgument) << no_grads;
  EXPECT_TRUE(absl::StrContains(no_grads.message(), "null params or grads")) << no_grads;
  // momentum 0.9 (the default) needs the momentum buffer.
  const absl::Status no_momentum = (*optimizer)->Update(params, grads, nullptr);
  EXPECT_TRUE(absl::StrContains(no_momentum.message(), "momentum buffer")) << no_momentum;
}

TEST_P(BackendContractTest, AddNChecksItsArguments) {
  const TensorSpec spec = TensorSpec::Plain(DType::kF32, Shape{8});
  void* a = Device(spec.bytes);
  void* out = Device(spec.bytes);
  const absl::Status none = backend_->AddN(spec, {}, out);
  EXPECT_EQ(none.code(), absl::StatusCode::kInvalidArgument) << none;
  EXPECT_TRUE(absl::StrContains(none.message(), "no inputs or no output")) << none;
  const absl::Status null = backend_->AddN(spec, {a, nullptr}, out);
  EXPECT_EQ(null.code(), absl::StatusCode::kInvalidArgument) << null;
  EXPECT_TRUE(absl::StrContains(null.message(), "null input 1")) << null;
  EXPECT_FALSE(backend_->AddN(spec, {a}, nullptr).ok());
}

TEST_P(BackendContractTest, HostDataMustBePlain) {
  TensorSpec host = TensorSpec::Plain(DType::kF32, Shape{2, 3, 4, 4});
  const TensorSpec plain = host;
  host.layout = Layout::kBlocked;
  std::vector<float> data(96);
  void* device = Device(plain.bytes);
  const absl::Status up = backend_->Upload(host, data.data(), plain, device);
  EXPECT_EQ(up.code(), absl::StatusCode::kInvalidArgument) << up;
  EXPECT_TRUE(absl::StrContains(up.message(), "host data must be plain")) << up;
  const absl::Status down = backend_->Download(plain, device, host, data.data());
  EXPECT_EQ(down.code(), absl::StatusCode::kInvalidArgument) << down;
  EXPECT_TRUE(absl::StrContains(down.message(), "host data must be plain")) << down;
}

TEST_P(BackendContractTest, ABadOpDescriptorIsNamedBeforeAnyBackendSeesIt) {
  ReluDesc relu;
  relu.dims.n = 0;
  auto kernel = backend_->Create(relu, DType::kF32, {});
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(kernel.status().message(), "bad descriptor 'relu:"))
      << kernel.status();
}

// Every op of every backend comes from one dispatch (CreateOpKernel): each
// op's kernel is created through the common entry point, and is that op's
// kernel: its inputs, output, parameters and state have the shapes the
// reference backend's kernel of the same descriptor has.
TEST_P(BackendContractTest, EveryOpIsCreatedThroughTheOneDispatch) {
  const std::unique_ptr<Backend> reference = CreateReferenceBackend();
  auto shapes = [](const std::vector<TensorSpec>& specs) {
    std::vector<Shape> out;
    for (const TensorSpec& s : specs) out.push_back(s.shape);
    return out;
  };
  // Every alternative of OpDesc, by its traits' sample (kernels/op_traits.h).
  for (const absl::string_view text : OpSamples()) {
    auto desc = ParseOpDesc(text);
    ASSERT_TRUE(desc.ok()) << text << ": " << desc.status();
    auto kernel = backend_->Create(*desc, DType::kF32, {});
    // A fused activation a backend does not run stays a layer of its own
    // (the cuda backend's ReLU6); the reference and oneDNN run every one.
    const bool activation_sample = std::find(kActivationSamples.begin(), kActivationSamples.end(),
                                             text) != kActivationSamples.end();
    if (activation_sample && GetParam().backend == "cuda" &&
        absl::IsUnimplemented(kernel.status()))
      continue;
    ASSERT_TRUE(kernel.ok()) << text << ": " << kernel.status();
    auto truth = reference->Create(*desc, DType::kF32, {});
    ASSERT_TRUE(truth.ok()) << text << ": " << truth.status();
    const KernelSignature& ours = (*kernel)->signature();
    const KernelSignature& theirs = (*truth)->signature();
    EXPECT_EQ(shapes(ours.inputs), shapes(theirs.inputs)) << text;
    EXPECT_EQ(ours.output.shape, theirs.output.shape) << text;
    EXPECT_EQ(shapes(ours.params), shapes(theirs.params)) << text;
    EXPECT_EQ(shapes(ours.state), shapes(theirs.state)) << text;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, BackendContractTest,
                         ::testing::Values(Param{"reference", Device::Cpu()},
                                           Param{"onednn", Device::Cpu()},
                                           Param{"cuda", Device::Cuda(0)}),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return info.param.backend;
                         });

}  // namespace
}  // namespace cnnbench
