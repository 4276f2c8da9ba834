// tf_cnn_benchmarks' CIFAR-10 models (and the official ResNets' two block
// forms, at 32 px) learn on the oneDNN backend in fp32:
// SGD steps on one fixed batch of 10 classes from the model's initial
// weights must bring the loss well below where it started. A backward pass
// that drops a path (a dense block's concat, a pre-activation's shortcut)
// or an update that misses a parameter leaves the loss near its start.
// (bf16, where the CPU has it: tests/train/bf16_zoo_test.cc.)
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/random.h"
#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "models/zoo.h"
#include "train/trainer.h"

namespace cnnbench {
namespace {

struct LearnCase {
  const char* model;
  int64_t batch, image_size;
  double learning_rate;
  int steps;
  double fall = 0.5;  // the last loss below this fraction of the first
};

void PrintTo(const LearnCase& c, std::ostream* os) {
  *os << c.model << " batch " << c.batch << " at " << c.image_size << " px";
}

constexpr int64_t kClasses = 10;

class CifarLearningTest : public testing::TestWithParam<LearnCase> {};

TEST_P(CifarLearningTest, LossFallsOnOneBatch) {
  const LearnCase c = GetParam();
  ModelOptions mo;
  mo.batch = c.batch;
  mo.image_size = c.image_size;
  mo.classes = kClasses;
  absl::StatusOr<Graph> graph = BuildModel(c.model, mo);
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<std::unique_ptr<Backend>> backend = CreateBackend("onednn", Device::Cpu());
  ASSERT_TRUE(backend.ok()) << backend.status();
  TrainOptions options;
  options.precision = Precision::kFp32;
  options.learning_rate = c.learning_rate;
  absl::StatusOr<std::unique_ptr<Trainer>> trainer =
      Trainer::Compile(*graph, backend->get(), options);
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  std::vector<float> images(graph->nodes[graph->images].output.num_elements());
  std::vector<int32_t> labels(c.batch);
  Rng rng(11);
  for (float& x : images) x = static_cast<float>(rng.Normal());
  for (int32_t& y : labels) y = static_cast<int32_t>(rng.Next() % kClasses);
  ASSERT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
  std::vector<float> losses;
  std::string curve;
  for (int step = 0; step < c.steps; ++step) {
    absl::Status s = (*trainer)->Step();
    ASSERT_TRUE(s.ok()) << "step " << step << ": " << s;
    absl::StatusOr<float> loss = (*trainer)->LastLoss();
    ASSERT_TRUE(loss.ok()) << loss.status();
    ASSERT_TRUE(std::isfinite(*loss)) << "step " << step << ":" << curve;
    losses.push_back(*loss);
    absl::StrAppend(&curve, " ", *loss);
  }
  // Ten classes start near ln 10 = 2.3; memorising the batch takes the
  // loss below half of that.
  EXPECT_NEAR(losses.front(), std::log(10.0), 1.5) << curve;
  EXPECT_LT(losses.back(), c.fall * losses.front()) << curve;
}

// The DenseNets learn at 4 px (blocks at 4, 2 and 1 px): the same layers
// and gradients on a 64th of the pixels, keeping the test command's time
// (DenseNet-100 is seconds a step at 32 px on two cores).
INSTANTIATE_TEST_SUITE_P(Models, CifarLearningTest,
                         testing::Values(LearnCase{"resnet20_v2", 8, 32, 0.05, 10},
                                         LearnCase{"resnet110_v2", 4, 16, 0.02, 10},
                                         LearnCase{"densenet40_k12", 4, 4, 0.05, 10},
                                         LearnCase{"densenet100_k12", 2, 4, 0.05, 8},
                                         LearnCase{"densenet100_k24", 2, 4, 0.05, 8},
                                         LearnCase{"alexnet_cifar", 8, 32, 0.01, 10},
                                         // The official ResNets' two block forms
                                         // (v1 basic blocks striding in the 3x3,
                                         // v2 pre-activation bottlenecks) at 32 px.
                                         LearnCase{"official_resnet18", 4, 32, 0.02, 10},
                                         LearnCase{"official_resnet50_v2", 4, 32, 0.02, 10},
                                         // Its one-unit ReLU layer (fc 3072 -> 1)
                                         // dies within a few steps; the layers
                                         // after it still learn the batch's
                                         // label frequencies: a quarter down.
                                         LearnCase{"trivial_cifar", 4, 32, 0.001, 10, 0.75}),
                         [](const testing::TestParamInfo<LearnCase>& info) {
                           return std::string(info.param.model);
                         });

}  // namespace
}  // namespace cnnbench
