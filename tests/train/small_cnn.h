// A small network and a learnable task shared by the executor's tests.
#ifndef CNNBENCH_TESTS_TRAIN_SMALL_CNN_H_
#define CNNBENCH_TESTS_TRAIN_SMALL_CNN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "kernels/kernel.h"
#include "models/graph.h"
#include "train/inference.h"
#include "train/trainer.h"

namespace cnnbench::train_test {

constexpr int kBatch = 16, kClasses = 4, kSize = 12;

// conv/bn/relu, a two-branch concat, max pool, a residual block, avg pool,
// fc, dropout and logits, at batch `batch`. Without batch norm the convs
// add a bias instead (a network whose gradient does not depend on how the
// batch is split, for data-parallel tests).
Graph SmallCnn(int batch = kBatch, bool batch_norm = true);

// A squeeze-and-excitation network (MobileNetV3's and EfficientNet's
// block: global average, 1x1 convs, a gate, the channel multiply) with
// every curved activation (SiLU, GELU, hard-swish, GELU tanh; the gates
// sigmoid and hard-sigmoid), an fc's (N,C) as the last block's scales, at
// batch `batch`: three channel multiplies; and ConvNeXt's residual (a
// depthwise conv, layer norm, a 1x1 conv, drop-path, the add).
Graph SqueezeExcitationNet(int batch = kBatch);

// Label = the quadrant holding a bright 4x4 patch; the rest is noise.
void MakeBatch(uint64_t seed, std::vector<float>* images, std::vector<int32_t>* labels,
               int batch = kBatch);

// The cuda backend on GPU 0 with deterministic engines (runs compare bit
// for bit), or null without a GPU (SKIP_WITHOUT_GPU).
std::unique_ptr<Backend> GpuBackend();
#define SKIP_WITHOUT_GPU(backend) \
  if ((backend) == nullptr) GTEST_SKIP() << "no GPU"

// One step, then its loss (Step() only enqueues; LastLoss() waits).
absl::StatusOr<float> StepAndLoss(Trainer& trainer);

// `steps` steps on MakeBatch(0), MakeBatch(1), ...: their losses.
absl::StatusOr<std::vector<float>> StepLosses(Trainer& trainer, int steps);

// One forward pass of `images` (a batch, plain fp32): its logits (empty,
// with a test failure, when a call fails).
std::vector<float> RunLogits(Inferencer& inferencer, const std::vector<float>& images);

// Each logit within `tolerance` times the largest |want| (at least 1).
void ExpectClose(const std::vector<float>& got, const std::vector<float>& want, double tolerance,
                 const std::string& what);

// The inference plan tests' cases: a CPU backend by name ("reference",
// "onednn") and a precision; the three every such test runs (reference
// fp32, oneDNN fp32 and bf16), and their test names ("onednn_bf16").
struct CpuPlanCase {
  const char* backend;
  Precision precision;
};
std::vector<CpuPlanCase> CpuPlanCases();
std::string CpuPlanCaseName(const ::testing::TestParamInfo<CpuPlanCase>& info);
// The backend (a test failure and null when it cannot be made), and whether
// it runs bf16 on this CPU.
std::unique_ptr<Backend> CpuBackend(const std::string& name);
bool RunsBf16(Backend& backend);
// A batch of the graph's images, normal(0, 1) from `seed`.
std::vector<float> RandomImages(const Graph& graph, uint64_t seed);

}  // namespace cnnbench::train_test

#endif  // CNNBENCH_TESTS_TRAIN_SMALL_CNN_H_
