// A layer's kernel cases run what the training step runs on that layer:
// the case's shape string parses back to the layer's very descriptor, the
// backend picks the same implementation for the case as for the step, the
// cases have the passes the step runs, and the step's profile has an entry
// for every layer with cases. How their times compare is a measurement, not
// a test: //tools:step_breakdown --profile reports it.
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "bench/cases/kernel/kernel_runner.h"
#include "bench/cases/kernel/layer_cases.h"
#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "kernels/desc.h"
#include "models/net_builder.h"
#include "train/trainer.h"

namespace cnnbench::bench {
namespace {

template <typename T>
bool Equal(const OpDesc& a, const OpDesc& b) {
  const T* x = std::get_if<T>(&a);
  const T* y = std::get_if<T>(&b);
  return x != nullptr && y != nullptr && *x == *y;
}

// The families with kernel cases, field by field.
bool SameDesc(const OpDesc& a, const OpDesc& b) {
  return Equal<ConvDesc>(a, b) || Equal<FcDesc>(a, b) || Equal<PoolDesc>(a, b) ||
         Equal<BatchNormDesc>(a, b) || Equal<ReluDesc>(a, b);
}

std::vector<std::string> PassNames(const LayerCases& layer) {
  std::vector<std::string> names;
  for (const LayerPass& p : layer.passes) names.push_back(p.name);
  return names;
}

TEST(LayerAgreementTest, KernelCasesRunWhatTheStepRuns) {
  NetBuilder b(8, 32, 28, 28, 10);
  b.Conv(64, {3, 3});                     // conv0 -> relu0: reads the images
  b.Conv(64, {3, 3}, {.batch_norm = 1});  // conv1 -> bn -> relu1
  b.MaxPool({2, 2}, {.stride = 2});
  b.Fc(32);    // reads the pool's 4D activation -> relu
  b.Logits();  // reads a matrix
  auto graph = std::move(b).Build();
  ASSERT_TRUE(graph.ok()) << graph.status();
  // Timed convolutions: the case and the step must run the process's one
  // choice for each pass.
  OneDnnOptions onednn;
  onednn.conv_algorithm = CpuConvAlgorithm::kTimed;
  auto backend = CreateOneDnnBackend(onednn);
  ASSERT_TRUE(backend.ok()) << backend.status();
  TrainOptions options;
  options.profile = true;
  // The layer cases are the model's layers as written; the step would fold
  // relu1 into the batch norm (train/fusion.h), which fusion_test covers.
  options.fuse_relu = false;
  auto trainer = Trainer::Compile(*graph, backend->get(), options);
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  std::vector<float> images(8 * 32 * 28 * 28, 0.5f);
  std::vector<int32_t> labels(8, 1);
  ASSERT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
  ASSERT_TRUE((*trainer)->Step().ok());
  ASSERT_TRUE((*trainer)->Synchronize().ok());

  const std::vector<LayerCases> layers = GraphLayerCases(*graph);
  std::set<std::string> families;
  for (const LayerCases& layer : layers) {
    const Node& node = graph->nodes[layer.node];
    ASSERT_TRUE(layer.family.has_value());
    families.insert(FamilyName(*layer.family));
    SCOPED_TRACE(node.name + " " + layer.shape);

    // Same descriptor: the name's shape part is the layer's, to the field.
    auto parsed = ParseOpDesc(layer.shape);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_TRUE(SameDesc(*parsed, node.op));

    // Same implementation: what the backend runs for the case and the step.
    const LayerTime* in_step = nullptr;
    for (const LayerTime& t : (*trainer)->profile())
      if (t.name == node.name) in_step = &t;
    ASSERT_NE(in_step, nullptr) << "the step's profile has no entry for this layer";
    auto runner = KernelRunner::Create(backend->get(), *parsed, Precision::kFp32, layer.input);
    ASSERT_TRUE(runner.ok()) << runner.status();
    // Pass by pass (a timed oneDNN convolution may run Winograd in one
    // pass and direct in another: the process's one choice for both).
    EXPECT_EQ((*runner)->implementation(Pass::kForward), in_step->implementation);
    for (const LayerPass& pass : layer.passes) {
      if (pass.pass == Pass::kForward) continue;
      const std::string& backward = in_step->backward_implementation.empty()
                                        ? in_step->implementation
                                        : in_step->backward_implementation;
      EXPECT_TRUE(absl::StrContains(backward, (*runner)->implementation(pass.pass)))
          << pass.name << ": " << (*runner)->implementation(pass.pass) << " vs " << backward;
    }
    for (const LayerPass& pass : layer.passes)
      EXPECT_TRUE((*runner)->Run(pass.pass).ok()) << pass.name;
    EXPECT_TRUE((*runner)->stream().Synchronize().ok());
  }
  EXPECT_EQ(families, (std::set<std::string>{"conv", "batchnorm", "relu", "pool", "fc"}));

  // The passes the step runs: the first conv reads only the images, so it
  // has no backward-data case; every later layer has one (its input carries
  // the gradient the first conv's weights need).
  ASSERT_GE(layers.size(), 4u);
  EXPECT_EQ(PassNames(layers[0]), (std::vector<std::string>{"fwd", "bwd_filter"}));
  EXPECT_EQ(PassNames(layers[1]), (std::vector<std::string>{"fwd", "bwd"}));  // relu0
  EXPECT_EQ(PassNames(layers[2]), (std::vector<std::string>{"fwd", "bwd_data", "bwd_filter"}));
  for (const LayerCases& layer : layers) {
    if (layer.family == Family::kBatchNorm) {
      EXPECT_EQ(PassNames(layer), (std::vector<std::string>{"fwd", "bwd"}));
    } else if (layer.family == Family::kPool) {
      EXPECT_EQ(PassNames(layer), (std::vector<std::string>{"max/fwd", "max/bwd"}));
    } else if (layer.family == Family::kFc) {
      EXPECT_EQ(PassNames(layer), (std::vector<std::string>{"fwd", "bwd_data", "bwd_filter"}));
    }
  }
}

}  // namespace
}  // namespace cnnbench::bench
