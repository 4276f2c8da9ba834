// A zoo model memorising one small batch on oneDNN (learn_batch.h).
#include "tests/models/learn_batch.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/random.h"
#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "models/zoo.h"
#include "train/trainer.h"

namespace cnnbench::models_test {

// Loss over `steps` SGD steps on one fixed batch.
std::vector<float> Losses(const std::string& model, int64_t batch, int64_t image,
                          Precision precision, int steps, double learning_rate) {
  absl::StatusOr<Graph> graph =
      BuildModel(model, {.batch = batch, .classes = 10, .image_size = image});
  EXPECT_TRUE(graph.ok()) << graph.status();
  auto backend = CreateBackend("onednn", Device::Cpu());
  EXPECT_TRUE(backend.ok()) << backend.status();
  if (!graph.ok() || !backend.ok()) return {};
  TrainOptions options;
  options.precision = precision;
  options.learning_rate = learning_rate;
  auto trainer = Trainer::Compile(*graph, backend->get(), options);
  EXPECT_TRUE(trainer.ok()) << trainer.status();
  if (!trainer.ok()) return {};
  std::vector<float> images(graph->nodes[graph->images].output.num_elements());
  std::vector<int32_t> labels(batch);
  Rng rng(7);
  for (float& x : images) x = static_cast<float>(rng.Normal());
  for (int32_t& y : labels) y = static_cast<int32_t>(rng.Next() % 10);
  EXPECT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
  std::vector<float> losses;
  for (int step = 0; step < steps; ++step) {
    const absl::Status s = (*trainer)->Step();
    absl::StatusOr<float> loss = (*trainer)->LastLoss();
    EXPECT_TRUE(s.ok() && loss.ok()) << s << " " << loss.status();
    if (!s.ok() || !loss.ok()) return {};
    losses.push_back(*loss);
  }
  return losses;
}

bool CpuRunsBf16() {
  auto backend = CreateBackend("onednn", Device::Cpu());
  return backend.ok() && (*backend)->Create(ReluDesc{{1, 1, 1, 16}}, DType::kBF16, {}).ok();
}

void ExpectLearnsABatch(const std::string& model) {
  std::vector<Precision> precisions = {Precision::kFp32};
  if (CpuRunsBf16()) precisions.push_back(Precision::kBf16);
  for (Precision p : precisions) {
    const std::vector<float> losses = Losses(model, 4, 32, p, 12, 0.01);
    ASSERT_EQ(losses.size(), 12u) << model << " " << PrecisionName(p);
    std::string curve;
    for (float l : losses) absl::StrAppend(&curve, " ", l);
    EXPECT_LT(*std::min_element(losses.begin() + 1, losses.end()), 0.5 * losses.front())
        << model << " " << PrecisionName(p) << ":" << curve;
  }
}

}  // namespace cnnbench::models_test
