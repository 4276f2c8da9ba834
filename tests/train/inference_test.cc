// The inference executor on the CPU backends: its forward-only plan gives
// the outputs of the graph evaluated node by node with every output kept
// (no memory reuse, dropout as the identity, batch norm with running
// statistics), on every zoo model; each example's logits do not depend on
// the rest of its batch; its memory is the forward pass's only; and the
// top-k count is TensorFlow's in_top_k.
#include "train/inference.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "kernels/op_traits.h"
#include "models/zoo.h"
#include "tests/train/small_cnn.h"
#include "train/trainer.h"

namespace cnnbench {
namespace {

using train_test::ExpectClose;
using train_test::MakeBatch;
using train_test::RunLogits;
using train_test::SmallCnn;

std::unique_ptr<Backend> MakeBackend(const std::string& name) {
  auto backend = CreateBackend(name, Device::Cpu());
  EXPECT_TRUE(backend.ok()) << backend.status();
  return *std::move(backend);
}

// The graph's forward pass in inference mode, node by node on `backend`
// with every output in its own buffer, the weights and state read from
// `source` (plain fp32): the logits, plain fp32. Dropout is the identity
// here, not the kernel's inference mode.
std::vector<float> InterpretLogits(const Graph& graph, Backend* backend, const Inferencer& source,
                                   const std::vector<float>& images) {
  struct Value {
    TensorSpec spec;
    Buffer buffer;
  };
  std::vector<Value> values(graph.nodes.size());
  auto upload = [&](const TensorSpec& spec, const void* host, DType host_type) {
    Buffer b = *Buffer::Allocate(Device::Cpu(), spec.bytes);
    EXPECT_TRUE(
        backend->Upload(TensorSpec::Plain(host_type, spec.shape), host, spec, b.data()).ok());
    return b;
  };
  values[graph.images].spec = TensorSpec::Plain(DType::kF32, graph.nodes[graph.images].output);
  values[graph.images].buffer = upload(values[graph.images].spec, images.data(), DType::kF32);
  const std::vector<int32_t> labels(graph.batch, 0);
  values[graph.labels].spec = TensorSpec::Plain(DType::kI32, graph.nodes[graph.labels].output);
  values[graph.labels].buffer = upload(values[graph.labels].spec, labels.data(), DType::kI32);
  for (int i = 0; i < static_cast<int>(graph.nodes.size()); ++i) {
    const Node& node = graph.nodes[i];
    if (node.kind != Node::Kind::kOp || i == graph.loss) continue;
    if (std::holds_alternative<DropoutDesc>(node.op)) {
      values[i].spec = values[node.inputs[0]].spec;
      values[i].buffer = *Buffer::Allocate(Device::Cpu(), values[i].spec.bytes);
      EXPECT_TRUE(backend
                      ->Copy(values[i].buffer.data(), values[node.inputs[0]].buffer.data(),
                             values[i].spec.bytes)
                      .ok());
      continue;
    }
    std::vector<TensorSpec> in_specs;
    for (int in : node.inputs) {
      TensorSpec spec = values[in].spec;
      const std::optional<Shape> expected = ReshapedInput(node.op);
      if (expected && spec.is_plain() && spec.shape != *expected &&
          spec.shape.num_elements() == expected->num_elements())
        spec = TensorSpec::Plain(spec.dtype, *expected);
      in_specs.push_back(spec);
    }
    auto kernel = backend->Create(node.op, DType::kF32, in_specs);
    EXPECT_TRUE(kernel.ok()) << node.name << ": " << kernel.status();
    if (!kernel.ok()) return {};
    const KernelSignature& sig = (*kernel)->signature();
    KernelArgs args;
    args.training = false;
    std::vector<Buffer> keep;
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      if (backend->SameLayout(in_specs[k], sig.inputs[k])) {
        args.x.push_back(values[node.inputs[k]].buffer.data());
      } else {
        keep.push_back(*Buffer::Allocate(Device::Cpu(), sig.inputs[k].bytes));
        EXPECT_TRUE(backend
                        ->Reorder(in_specs[k], values[node.inputs[k]].buffer.data(), sig.inputs[k],
                                  keep.back().data())
                        .ok());
        args.x.push_back(keep.back().data());
      }
      args.dx.push_back(nullptr);
    }
    for (size_t p = 0; p < sig.params.size(); ++p) {
      auto host = source.ReadParameter(i, static_cast<int>(p));
      EXPECT_TRUE(host.ok()) << node.name << ": " << host.status();
      keep.push_back(upload(sig.params[p], host->data(), DType::kF32));
      args.params.push_back(keep.back().data());
    }
    for (size_t s = 0; s < sig.state.size(); ++s) {
      auto host = source.ReadState(i, static_cast<int>(s));
      EXPECT_TRUE(host.ok()) << node.name << ": " << host.status();
      keep.push_back(upload(sig.state[s], host->data(), DType::kF32));
      args.state.push_back(keep.back().data());
    }
    keep.push_back(*Buffer::Allocate(Device::Cpu(), std::max<size_t>(sig.scratch_bytes, 1)));
    args.scratch = keep.back().data();
    values[i].spec = sig.output;
    values[i].buffer = *Buffer::Allocate(Device::Cpu(), sig.output.bytes);
    args.y = values[i].buffer.data();
    absl::Status s = (*kernel)->Forward(args);
    EXPECT_TRUE(s.ok()) << node.name << ": " << s;
    EXPECT_TRUE(backend->stream().Synchronize().ok());
  }
  const Value& logits = values[graph.nodes[graph.loss].inputs[0]];
  std::vector<float> out(logits.spec.shape.num_elements());
  EXPECT_TRUE(backend
                  ->Download(logits.spec, logits.buffer.data(),
                             TensorSpec::Plain(DType::kF32, logits.spec.shape), out.data())
                  .ok());
  return out;
}

// An inference plan of `graph` holding the weights and running statistics
// of a trainer after three steps (far from their start), or null with a
// test failure.
std::unique_ptr<Inferencer> TrainedInferencer(const Graph& graph, Backend* backend) {
  auto trainer = Trainer::Compile(graph, backend, TrainOptions());
  EXPECT_TRUE(trainer.ok()) << trainer.status();
  if (!trainer.ok()) return nullptr;
  std::vector<float> images;
  std::vector<int32_t> labels;
  for (int step = 0; step < 3; ++step) {
    MakeBatch(step, &images, &labels);
    EXPECT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
    EXPECT_TRUE((*trainer)->Step().ok());
  }
  EXPECT_TRUE((*trainer)->Synchronize().ok());
  auto inferencer = Inferencer::Compile(graph, backend, InferOptions());
  EXPECT_TRUE(inferencer.ok()) << inferencer.status();
  if (!inferencer.ok()) return nullptr;
  EXPECT_TRUE((*inferencer)->CopyWeightsFrom(**trainer).ok());
  return *std::move(inferencer);
}

class InferenceTest : public ::testing::TestWithParam<const char*> {};

// Trained for a few steps first, so the running statistics are far from
// their start (mean 0, variance 1) and the copied weights are the trained ones.
TEST_P(InferenceTest, MatchesTheGraphEvaluatedNodeByNodeAfterTraining) {
  auto backend = MakeBackend(GetParam());
  const Graph graph = SmallCnn();
  std::unique_ptr<Inferencer> inferencer = TrainedInferencer(graph, backend.get());
  ASSERT_NE(inferencer, nullptr);
  std::vector<float> images;
  std::vector<int32_t> labels;
  // The running statistics moved in training and were copied.
  int bn_node = -1;
  for (int i = 0; i < static_cast<int>(graph.nodes.size()); ++i)
    if (std::holds_alternative<BatchNormDesc>(graph.nodes[i].op)) bn_node = i;
  ASSERT_GE(bn_node, 0);
  auto mean = inferencer->ReadState(bn_node, 0);
  ASSERT_TRUE(mean.ok()) << mean.status();
  EXPECT_NE((*mean)[0], 0.0f);
  MakeBatch(50, &images, &labels);
  const std::vector<float> got = RunLogits(*inferencer, images);
  // Against the node-by-node evaluation on the reference backend.
  auto reference = MakeBackend("reference");
  const std::vector<float> want = InterpretLogits(graph, reference.get(), *inferencer, images);
  ExpectClose(got, want, 1e-3, GetParam());
  // No dropout: the same batch gives the same logits again.
  EXPECT_EQ(RunLogits(*inferencer, images), got);
}

// The squeeze-and-excitation network after a few training steps: its
// inference plan (the curved activations as convolution epilogues on
// oneDNN, forward only) gives the node-by-node logits on the reference.
TEST_P(InferenceTest, SqueezeExcitationNetMatchesTheGraphEvaluatedNodeByNode) {
  auto backend = MakeBackend(GetParam());
  const Graph graph = train_test::SqueezeExcitationNet();
  std::unique_ptr<Inferencer> inferencer = TrainedInferencer(graph, backend.get());
  ASSERT_NE(inferencer, nullptr);
  std::vector<float> images;
  std::vector<int32_t> labels;
  // Every conv's activation runs as its epilogue (none was fused in training).
  EXPECT_EQ(inferencer->conv_relu_epilogues(), 7);
  // The drop-path is left out, so the residual add joins the conv before it.
  EXPECT_EQ(inferencer->identities_skipped(), 1);
  EXPECT_EQ(inferencer->conv_residual_adds(), 1);
  MakeBatch(60, &images, &labels);
  const std::vector<float> got = RunLogits(*inferencer, images);
  auto reference = MakeBackend("reference");
  ExpectClose(got, InterpretLogits(graph, reference.get(), *inferencer, images), 1e-4, GetParam());
}

// The plan's convolutions with a ReLU epilogue, counted from its layers
// (and checked against what the plan says it fused).
int Epilogues(const Inferencer& inferencer) {
  int count = 0;
  for (const Node& node : inferencer.step_plan().graph.nodes)
    if (const auto* conv = std::get_if<ConvDesc>(&node.op);
        node.kind == Node::Kind::kOp && conv != nullptr &&
        conv->activation != ActivationKind::kNone)
      ++count;
  EXPECT_EQ(count, inferencer.conv_relu_epilogues());
  return count;
}

// Folding each batch norm into its convolution gives the unfolded plan's
// logits, with the running statistics training moved away from their start.
TEST_P(InferenceTest, FoldedBatchNormsGiveTheUnfoldedLogits) {
  auto backend = MakeBackend(GetParam());
  const Graph graph = SmallCnn();
  auto trainer = Trainer::Compile(graph, backend.get(), TrainOptions());
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  std::vector<float> images;
  std::vector<int32_t> labels;
  for (int step = 0; step < 3; ++step) {
    MakeBatch(step, &images, &labels);
    ASSERT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
    ASSERT_TRUE((*trainer)->Step().ok());
  }
  auto unfolded = Inferencer::Compile(graph, backend.get(), InferOptions());
  ASSERT_TRUE(unfolded.ok()) << unfolded.status();
  InferOptions options;
  options.fold_batch_norm = true;
  auto folded = Inferencer::Compile(graph, backend.get(), options);
  ASSERT_TRUE(folded.ok()) << folded.status();
  // SmallCnn: the stem's and the residual branch's conv + batch norm.
  EXPECT_EQ((*folded)->folded_batch_norms(), 2);
  EXPECT_EQ((*unfolded)->folded_batch_norms(), 0);
  // The residual branch's batch norm goes; the stem's batch norm + ReLU
  // becomes the ReLU alone, which the folded convolution takes as its
  // epilogue, as the branch's two convolutions take theirs in both plans;
  // the folded branch's last convolution then absorbs the add and its ReLU
  // (InferOptions::conv_add). With conv_relu off: three ReLU layers more,
  // and the add (its convolution would take its ReLU).
  EXPECT_EQ((*folded)->step_plan().layers.size() + 3, (*unfolded)->step_plan().layers.size());
  EXPECT_EQ((*folded)->conv_residual_adds(), 1);
  EXPECT_EQ((*unfolded)->conv_residual_adds(), 0);
  EXPECT_EQ(Epilogues(**folded), 4);
  EXPECT_EQ(Epilogues(**unfolded), 2);
  InferOptions apart = options;
  apart.conv_relu = false;
  auto relu_apart = Inferencer::Compile(graph, backend.get(), apart);
  ASSERT_TRUE(relu_apart.ok()) << relu_apart.status();
  EXPECT_EQ(Epilogues(**relu_apart), 0);
  EXPECT_EQ((*relu_apart)->conv_residual_adds(), 0);
  EXPECT_EQ((*relu_apart)->step_plan().layers.size(), (*folded)->step_plan().layers.size() + 4);
  MakeBatch(60, &images, &labels);
  // The initial weights, then the trained ones.
  ExpectClose(RunLogits(**folded, images), RunLogits(**unfolded, images), 1e-4, "initial");
  ASSERT_TRUE((*unfolded)->CopyWeightsFrom(**trainer).ok());
  ASSERT_TRUE((*folded)->CopyWeightsFrom(**trainer).ok());
  const std::vector<float> want = RunLogits(**unfolded, images);
  ExpectClose(RunLogits(**folded, images), want, 1e-4, "trained");
  ASSERT_TRUE((*relu_apart)->CopyWeightsFrom(**trainer).ok());
  ExpectClose(RunLogits(**relu_apart, images), want, 1e-4, "trained, the ReLU a layer");
  // A fold with the statistics left out (mean 0, variance 1) is not the same.
  auto start = Inferencer::Compile(graph, backend.get(), options);
  ASSERT_TRUE(start.ok());
  const std::vector<float> initial = RunLogits(**start, images);
  double differs = 0;
  for (size_t i = 0; i < want.size(); ++i)
    differs = std::max(differs, std::abs(double(initial[i]) - want[i]));
  EXPECT_GT(differs, 1e-2);
}

TEST_P(InferenceTest, ATrainingPlanCannotFoldBatchNorms) {
  auto backend = MakeBackend(GetParam());
  StepPlanOptions options;
  options.fold_batch_norm = true;
  EXPECT_EQ(PlanStep(SmallCnn(), backend.get(), options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Batch statistics would make an example's output depend on the others.
TEST_P(InferenceTest, AnExamplesLogitsDoNotDependOnTheRestOfTheBatch) {
  auto backend = MakeBackend(GetParam());
  const Graph graph = SmallCnn();
  auto inferencer = Inferencer::Compile(graph, backend.get(), InferOptions());
  ASSERT_TRUE(inferencer.ok()) << inferencer.status();
  std::vector<float> a, b;
  std::vector<int32_t> labels;
  MakeBatch(1, &a, &labels);
  MakeBatch(2, &b, &labels);
  const size_t image = a.size() / graph.batch;
  std::copy(a.begin(), a.begin() + image, b.begin());  // the same first example
  const std::vector<float> la = RunLogits(**inferencer, a), lb = RunLogits(**inferencer, b);
  const int64_t classes = graph.classes;
  ASSERT_EQ(la.size(), static_cast<size_t>(graph.batch * classes));
  ASSERT_EQ(lb.size(), la.size());
  for (int64_t c = 0; c < classes; ++c) EXPECT_NEAR(la[c], lb[c], 1e-5) << "class " << c;
  bool others_differ = false;
  for (size_t i = classes; i < la.size(); ++i) others_differ |= la[i] != lb[i];
  EXPECT_TRUE(others_differ);
}

TEST_P(InferenceTest, HoldsTheForwardPassOnly) {
  auto backend = MakeBackend(GetParam());
  const Graph graph = SmallCnn();
  auto inferencer = Inferencer::Compile(graph, backend.get(), InferOptions());
  ASSERT_TRUE(inferencer.ok()) << inferencer.status();
  auto trainer = Trainer::Compile(graph, backend.get(), TrainOptions());
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  const StepPlan& plan = (*inferencer)->step_plan();
  EXPECT_EQ((*inferencer)->peak_memory_bytes(), plan.FootprintBytes());
  EXPECT_LT((*inferencer)->peak_memory_bytes(), (*trainer)->peak_memory_bytes());
  EXPECT_LT(plan.memory.arena_bytes, (*trainer)->arena_bytes());
  EXPECT_EQ((*inferencer)->parameter_count(), (*trainer)->parameter_count());
  for (const BufferRequest& r : plan.requests)
    EXPECT_LT(r.last, static_cast<int>(plan.graph.nodes.size())) << r.name;
}

TEST_P(InferenceTest, RunBeforeABatchAndLogitsBeforeARunAreErrors) {
  auto backend = MakeBackend(GetParam());
  auto inferencer = Inferencer::Compile(SmallCnn(), backend.get(), InferOptions());
  ASSERT_TRUE(inferencer.ok()) << inferencer.status();
  EXPECT_EQ((*inferencer)->Run().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*inferencer)->Logits().status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*inferencer)->SetBatch(nullptr).code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(InferenceTest, CopyingWeightsFromAnotherGraphsTrainerIsAnError) {
  auto backend = MakeBackend(GetParam());
  auto trainer = Trainer::Compile(SmallCnn(), backend.get(), TrainOptions());
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  auto inferencer =
      Inferencer::Compile(SmallCnn(train_test::kBatch, false), backend.get(), InferOptions());
  ASSERT_TRUE(inferencer.ok()) << inferencer.status();
  absl::Status copied = (*inferencer)->CopyWeightsFrom(**trainer);
  EXPECT_EQ(copied.code(), absl::StatusCode::kInvalidArgument) << copied;
}

// A capture on the CPU always fails: the runs go on eagerly, with the same logits.
TEST_P(InferenceTest, AFailedCaptureFallsBackToEagerRuns) {
  auto backend = MakeBackend(GetParam());
  InferOptions options;
  options.capture_on_cpu_for_testing = true;
  auto inferencer = Inferencer::Compile(SmallCnn(), backend.get(), options);
  ASSERT_TRUE(inferencer.ok()) << inferencer.status();
  std::vector<float> images;
  std::vector<int32_t> labels;
  MakeBatch(3, &images, &labels);
  const std::vector<float> first = RunLogits(**inferencer, images);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(RunLogits(**inferencer, images), first);
  EXPECT_FALSE((*inferencer)->cuda_graph_failure().empty());
  EXPECT_FALSE((*inferencer)->cuda_graph_active());
}

// The logits a training step keeps are the ones its loss was computed from
// (not overwritten by the backward pass): their mean cross-entropy is the loss.
TEST_P(InferenceTest, ATrainersLastLogitsGiveItsLoss) {
  auto backend = MakeBackend(GetParam());
  const Graph graph = SmallCnn();
  auto trainer = Trainer::Compile(graph, backend.get(), TrainOptions());
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  EXPECT_EQ((*trainer)->LastLogits().status().code(), absl::StatusCode::kFailedPrecondition);
  std::vector<float> images;
  std::vector<int32_t> labels;
  for (int step = 0; step < 2; ++step) {
    MakeBatch(step, &images, &labels);
    ASSERT_TRUE((*trainer)->SetBatch(images.data(), labels.data()).ok());
    ASSERT_TRUE((*trainer)->Step().ok());
  }
  auto loss = (*trainer)->LastLoss();
  ASSERT_TRUE(loss.ok()) << loss.status();
  auto logits = (*trainer)->LastLogits();
  ASSERT_TRUE(logits.ok()) << logits.status();
  const int64_t classes = graph.classes;
  ASSERT_EQ(logits->size(), static_cast<size_t>(graph.batch * classes));
  double sum = 0;
  for (int64_t r = 0; r < graph.batch; ++r) {
    const float* row = logits->data() + r * classes;
    const double most = *std::max_element(row, row + classes);
    double z = 0;
    for (int64_t c = 0; c < classes; ++c) z += std::exp(row[c] - most);
    sum += std::log(z) + most - row[labels[r]];
  }
  EXPECT_NEAR(sum / graph.batch, *loss, 1e-4 * (1 + std::abs(*loss)));
  // Not kept: an error, not stale numbers.
  TrainOptions options;
  options.keep_logits = false;
  auto unkept = Trainer::Compile(graph, backend.get(), options);
  ASSERT_TRUE(unkept.ok()) << unkept.status();
  ASSERT_TRUE((*unkept)->SetBatch(images.data(), labels.data()).ok());
  ASSERT_TRUE((*unkept)->Step().ok());
  EXPECT_EQ((*unkept)->LastLogits().status().code(), absl::StatusCode::kFailedPrecondition);
}

INSTANTIATE_TEST_SUITE_P(Cpu, InferenceTest, ::testing::Values("reference", "onednn"));

// Every zoo model at a reduced size on oneDNN: the plan with its memory
// reuse and reorders against the node-by-node evaluation on oneDNN.
class ZooInferenceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooInferenceTest, MatchesTheGraphEvaluatedNodeByNode) {
  auto info = FindModel(GetParam());
  ASSERT_TRUE(info.ok()) << info.status();
  // The smallest size at least 32 the model admits, or from 4 for the 32 px
  // CIFAR-10 models (oneDNN runs DenseNet's growth convolutions in its
  // reference implementation: minutes at 32 px).
  int64_t size = info->image_size;
  for (int64_t s = info->image_size == 32 ? 4 : 32; s < info->image_size; ++s)
    if (BuildModel(info->name, {.batch = 2, .image_size = s}).ok()) {
      size = s;
      break;
    }
  auto graph = BuildModel(info->name, {.batch = 2, .image_size = size});
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto backend = MakeBackend("onednn");
  auto inferencer = Inferencer::Compile(*graph, backend.get(), InferOptions());
  ASSERT_TRUE(inferencer.ok()) << info->name << ": " << inferencer.status();
  std::mt19937 rng(7);
  std::normal_distribution<float> pixel(0.0f, 1.0f);
  std::vector<float> images(graph->nodes[graph->images].output.num_elements());
  for (float& v : images) v = pixel(rng);
  const std::vector<float> got = RunLogits(**inferencer, images);
  const std::vector<float> want = InterpretLogits(*graph, backend.get(), **inferencer, images);
  ExpectClose(got, want, 1e-4, info->name);
  for (float v : got) ASSERT_TRUE(std::isfinite(v)) << info->name;
  // With every batch norm after a convolution folded into it: the same.
  InferOptions fold;
  fold.fold_batch_norm = true;
  auto folded = Inferencer::Compile(*graph, backend.get(), fold);
  ASSERT_TRUE(folded.ok()) << info->name << ": " << folded.status();
  ExpectClose(RunLogits(**folded, images), got, 1e-4, info->name + " folded");
  // Every ReLU that reads only a convolution is that convolution's epilogue
  // by default; as layers of their own (conv_relu = false): the same.
  InferOptions apart;
  apart.conv_relu = false;
  apart.fold_batch_norm = true;
  auto relu_apart = Inferencer::Compile(*graph, backend.get(), apart);
  ASSERT_TRUE(relu_apart.ok()) << info->name << ": " << relu_apart.status();
  EXPECT_EQ(Epilogues(**relu_apart), 0) << info->name;
  ExpectClose(RunLogits(**relu_apart, images), got, 1e-4, info->name + " folded, ReLUs apart");
  // Every zoo model with a convolution has one followed by a ReLU (a batch
  // norm's, once folded).
  bool has_conv = false;
  for (const Node& node : graph->nodes)
    has_conv |= node.kind == Node::Kind::kOp && std::holds_alternative<ConvDesc>(node.op);
  if (has_conv) {
    EXPECT_GT(Epilogues(**folded), 0) << info->name;
  }
}

// Every model but those whose layers another one here already runs at the
// same sizes, the costliest: official_resnet101/152/200 (v1 and v2) repeat
// official_resnet50's blocks, DenseNet-100 densenet40_k12's layers.
bool RepeatsAnotherModel(const std::string& name) {
  for (const char* repeat :
       {"official_resnet101", "official_resnet152", "official_resnet200", "densenet100_k"})
    if (name.rfind(repeat, 0) == 0) return true;
  return false;
}

std::vector<std::string> ModelNames() {
  std::vector<std::string> names;
  for (const ModelInfo& info : ListModels())
    if (!RepeatsAnotherModel(info.name)) names.push_back(info.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooInferenceTest, ::testing::ValuesIn(ModelNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

TEST(CountInTopKTest, CountsAsInTopKWithTiesAtTheBoundaryIn) {
  // Three rows of four classes.
  const std::vector<float> logits = {
      0.1f, 0.9f, 0.3f, 0.2f,  // label 1: the highest
      0.5f, 0.5f, 0.5f, 0.1f,  // label 2: tied for first with two others
      0.4f, 0.3f, 0.2f, 0.1f,  // label 3: the lowest
  };
  const std::vector<int32_t> labels = {1, 2, 3};
  EXPECT_EQ(*CountInTopK(logits, labels, 4, 1), 2);  // the tie counts as in
  EXPECT_EQ(*CountInTopK(logits, labels, 4, 3), 2);
  EXPECT_EQ(*CountInTopK(logits, labels, 4, 4), 3);
  // Label 0: the lowest of row 0 (never in the top 2), tied first in row 1,
  // the highest in row 2.
  EXPECT_EQ(*CountInTopK(logits, {0, 0, 0}, 4, 1), 2);
  EXPECT_EQ(*CountInTopK(logits, {0, 0, 0}, 4, 3), 2);
}

TEST(CountInTopKTest, ANonFiniteScoreIsNeverInAndBadInputIsAnError) {
  const std::vector<float> logits = {NAN, 0.0f, INFINITY, 0.0f};
  EXPECT_EQ(*CountInTopK(logits, {0, 0}, 2, 2), 0);
  EXPECT_FALSE(CountInTopK(logits, {0, 2}, 2, 1).ok());  // label outside [0, 2)
  EXPECT_FALSE(CountInTopK(logits, {0}, 2, 1).ok());     // 4 logits, 1 row of 2
  EXPECT_FALSE(CountInTopK(logits, {0, 0}, 2, 0).ok());
}

}  // namespace
}  // namespace cnnbench
