// A layer's kernel case and that layer's time in the training step's
// per-layer profile measure the same thing (same descriptor, same backend,
// same layouts). Tolerance, on the fastest of 30 runs of each (the machine is
// shared; minima are robust to interference): 1.5x for the convolution;
// 3x for the memory-bound ReLU, whose case reruns on buffers hot in cache
// while inside the step its output goes to memory the next layer then reads.
#include <algorithm>
#include <chrono>
#include <limits>

#include "bench/kernel_runner.h"
#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "models/net_builder.h"
#include "train/trainer.h"

namespace cnnbench::bench {
namespace {

constexpr int kRuns = 30;

TEST(LayerAgreementTest, KernelCaseMatchesStepProfile) {
  NetBuilder b(8, 32, 28, 28, 10);
  b.Conv(64, {3, 3});
  const int conv = b.Conv(64, {3, 3}) - 1;  // conv -> relu (the top)
  const int relu = conv + 1;
  b.MaxPool({2, 2}, {.stride = 2});
  b.Logits();
  auto graph = std::move(b).Build();
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto backend = CreateBackend("onednn", Device::Cpu());
  ASSERT_TRUE(backend.ok()) << backend.status();
  TrainOptions options;
  options.profile = true;
  auto trainer = Trainer::Compile(*graph, backend->get(), options);
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  std::vector<float> images(8 * 32 * 28 * 28, 0.5f);
  std::vector<int32_t> labels(8, 1);
  ASSERT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
  ASSERT_TRUE((*trainer)->Step().ok());

  for (int node : {conv, relu}) {
    const std::string name = graph->nodes[node].name;
    double step_fwd = std::numeric_limits<double>::max();
    double step_bwd = std::numeric_limits<double>::max();
    for (int i = 0; i < kRuns; ++i) {
      (*trainer)->ResetProfile();
      ASSERT_TRUE((*trainer)->Step().ok());
      for (const LayerTime& t : (*trainer)->profile())
        if (t.name == name) {
          step_fwd = std::min(step_fwd, t.forward_seconds);
          step_bwd = std::min(step_bwd, t.backward_seconds);
        }
    }
    auto runner = KernelRunner::Create(backend->get(), graph->nodes[node].op, Precision::kFp32);
    ASSERT_TRUE(runner.ok()) << runner.status();
    auto best = [&](std::vector<Pass> passes) {
      double fastest = std::numeric_limits<double>::max();
      for (int i = 0; i < kRuns; ++i) {
        const auto start = std::chrono::steady_clock::now();
        for (Pass p : passes) EXPECT_TRUE((*runner)->Run(p).ok());
        fastest = std::min(
            fastest,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
      return fastest;
    };
    const double case_fwd = best({Pass::kForward});
    const bool is_conv = std::holds_alternative<ConvDesc>(graph->nodes[node].op);
    const double case_bwd = best(is_conv ? std::vector<Pass>{Pass::kBackwardData,
                                                             Pass::kBackwardWeights}
                                         : std::vector<Pass>{Pass::kBackwardData});
    EXPECT_EQ((*runner)->implementation(),
              [&] {
                for (const LayerTime& t : (*trainer)->profile())
                  if (t.name == name) return t.implementation;
                return std::string();
              }())
        << name;
    const double tolerance = is_conv ? 1.5 : 3.0;
    EXPECT_LT(std::max(case_fwd, step_fwd) / std::min(case_fwd, step_fwd), tolerance)
        << name << " forward: case " << case_fwd << " s, step " << step_fwd << " s";
    EXPECT_LT(std::max(case_bwd, step_bwd) / std::min(case_bwd, step_bwd), tolerance)
        << name << " backward: case " << case_bwd << " s, step " << step_bwd << " s";
  }
}

}  // namespace
}  // namespace cnnbench::bench
