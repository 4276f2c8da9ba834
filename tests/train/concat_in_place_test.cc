// A concatenation's inputs written in place (inference plans at batch 1:
// KernelSignature::input_views, StepPlanOptions::concat_in_place): which
// producers' outputs become views of the concat's output and which must
// not (one read by another layer too, the images, batch 2), a view of a
// view where a concat feeds an outer one, the buffers' lifetimes, and that
// the plan gives the copying plan's logits on both CPU backends (bf16 too
// where the CPU has it), in the suite's Inception models too.
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "models/net_builder.h"
#include "models/zoo.h"
#include "tests/train/small_cnn.h"
#include "train/inference.h"

namespace cnnbench {
namespace {

using train_test::CpuBackend;
using train_test::CpuPlanCase;
using train_test::CpuPlanCaseName;
using train_test::CpuPlanCases;
using train_test::ExpectClose;
using train_test::kClasses;
using train_test::kSize;
using train_test::RandomImages;
using train_test::RunLogits;
using train_test::RunsBf16;

// Channel counts are multiples of 16, so each branch's slice starts on a
// channel block of oneDNN's blocked layouts (8 or 16 channels).
//   block 1: a 1x1 conv; a 1x1 -> 3x3 conv; an inner concat of two convs
//            (a view of a view); a 3x3 max pool of the block's input.
//   block 2: a 1x1 conv whose output an add reads too (not a view); a 3x3
//            conv (a view).
// then the add, avg pool and logits.
Graph InceptionBlocks(int batch) {
  NetBuilder b(batch, 3, kSize, kSize, kClasses);
  b.Conv(32, {3, 3});
  const int stem = b.top();
  const int one = b.Conv(16, {1, 1});
  b.set_top(stem);
  b.Conv(16, {1, 1});
  const int three = b.Conv(32, {3, 3});
  b.set_top(stem);
  const int inner_a = b.Conv(16, {1, 3});
  b.set_top(stem);
  const int inner_b = b.Conv(16, {3, 1});
  const int inner = b.Concat({inner_a, inner_b});
  b.set_top(stem);
  const int pool = b.MaxPool({3, 3}, {.padding = Padding::kSame});
  const int block1 = b.Concat({one, three, inner, pool});  // 16 + 32 + 32 + 32
  const int shared = b.Conv(48, {1, 1});
  b.set_top(block1);
  const int other = b.Conv(64, {3, 3});
  const int block2 = b.Concat({shared, other});
  b.set_top(block2);
  const int squeeze = b.Conv(48, {1, 1});
  b.Add(squeeze, shared);
  b.AvgPool({3, 3}, {.stride = 2, .padding = Padding::kSame});
  b.Logits();
  return std::move(b).Build().value();
}

const StepPlan::Layer& Named(const StepPlan& plan, const std::string& name) {
  for (const auto& layer : plan.layers)
    if (layer->name == name) return *layer;
  ADD_FAILURE() << "no layer " << name;
  return *plan.layers.front();
}

// Every view in the plan: inside the concat that reads its producer, at the
// offset that concat's kernel gave for that input, living as long as its
// root; the concats' own counts.
void ExpectViewsWhereTheConcatsSay(const StepPlan& plan) {
  for (const auto& layer : plan.layers) {
    const auto& views = layer->kernel->signature().input_views;
    for (size_t k = 0; k < layer->inputs.size() && !views.empty(); ++k) {
      const StepPlan::Input& in = layer->inputs[k];
      if (in.buffer < 0 || plan.requests[in.buffer].view_of < 0) continue;
      const BufferRequest& view = plan.requests[in.buffer];
      EXPECT_EQ(view.view_of, layer->y) << layer->name << " input " << k;
      EXPECT_EQ(view.view_offset, views[k]) << layer->name << " input " << k;
      EXPECT_EQ(plan.memory.offsets[in.buffer], plan.memory.offsets[layer->y] + views[k]);
      const BufferRequest& root = plan.requests[RootOf(plan.requests, in.buffer)];
      EXPECT_EQ(view.first, root.first);
      EXPECT_EQ(view.last, root.last);
    }
  }
}

class ConcatInPlaceTest : public ::testing::TestWithParam<CpuPlanCase> {};

// At batch 1: the five convs and the max pool read only by a concat write
// its output in place (the inner concat's two convs in the inner one, which
// is itself a view of the outer), the conv an add reads too does not; the
// logits are the copying plan's, twice. At batch 2 no input is a view.
TEST_P(ConcatInPlaceTest, WritesInPlaceWhatOnlyTheConcatReadsWithTheSameLogits) {
  auto backend = CpuBackend(GetParam().backend);
  ASSERT_NE(backend, nullptr);
  if (GetParam().precision == Precision::kBf16 && !RunsBf16(*backend))
    GTEST_SKIP() << "no bf16 on this CPU";
  InferOptions in_place;
  in_place.precision = GetParam().precision;
  InferOptions copied = in_place;
  copied.concat_in_place = false;
  for (int batch : {1, 2}) {
    const Graph graph = InceptionBlocks(batch);
    const std::string what = absl::StrCat("batch ", batch);
    auto with = Inferencer::Compile(graph, backend.get(), in_place);
    ASSERT_TRUE(with.ok()) << what << ": " << with.status();
    auto without = Inferencer::Compile(graph, backend.get(), copied);
    ASSERT_TRUE(without.ok()) << what << ": " << without.status();
    const StepPlan& plan = (*with)->step_plan();
    EXPECT_EQ((*without)->step_plan().concat_inputs_in_place, 0) << what;
    EXPECT_EQ((*without)->concats_in_place(), 0) << what;
    if (batch == 1) {
      // one, three, inner_a, inner_b, inner, pool; other.
      EXPECT_EQ(plan.concat_inputs_in_place, 7) << what;
      EXPECT_EQ((*with)->concats_in_place(), 2) << what << ": the inner concat and block 1";
      const StepPlan::Layer& inner = Named(plan, "concat0");
      const StepPlan::Layer& block1 = Named(plan, "concat1");
      EXPECT_EQ(plan.requests[inner.y].view_of, block1.y);
      EXPECT_EQ(plan.requests[inner.inputs[0].buffer].view_of, inner.y);
      EXPECT_EQ(RootOf(plan.requests, inner.inputs[0].buffer), block1.y);
      const StepPlan::Layer& block2 = Named(plan, "concat2");
      EXPECT_LT(plan.requests[block2.inputs[0].buffer].view_of, 0) << "the add reads it too";
      EXPECT_EQ(plan.requests[block2.inputs[1].buffer].view_of, block2.y);
    } else {
      EXPECT_EQ(plan.concat_inputs_in_place, 0) << what;
    }
    ExpectViewsWhereTheConcatsSay(plan);
    const std::vector<float> images = RandomImages(graph, 3);
    const std::vector<float> want = RunLogits(**without, images);
    ExpectClose(RunLogits(**with, images), want, 1e-6, what);
    ExpectClose(RunLogits(**with, images), want, 1e-6, what + ", run twice");
  }
}

INSTANTIATE_TEST_SUITE_P(Cpu, ConcatInPlaceTest, ::testing::ValuesIn(CpuPlanCases()),
                         CpuPlanCaseName);

// The kernel copies in an input given apart from its view (the images, or
// a producer another layer reads): the reference at batch 1 with the
// images themselves as one of the concat's inputs.
TEST(ConcatInPlaceTest, CopiesInAnInputThatIsNotAView) {
  NetBuilder b(1, 16, kSize, kSize, kClasses);
  const int images = b.top();
  const int conv = b.Conv(16, {3, 3});
  b.Concat({images, conv});
  b.AvgPool({3, 3}, {.stride = 2, .padding = Padding::kSame});
  b.Logits();
  const Graph graph = std::move(b).Build().value();
  auto backend = CpuBackend("reference");
  ASSERT_NE(backend, nullptr);
  InferOptions in_place;
  InferOptions copied = in_place;
  copied.concat_in_place = false;
  auto with = Inferencer::Compile(graph, backend.get(), in_place);
  ASSERT_TRUE(with.ok()) << with.status();
  auto without = Inferencer::Compile(graph, backend.get(), copied);
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_EQ((*with)->step_plan().concat_inputs_in_place, 1);
  EXPECT_EQ((*with)->concats_in_place(), 0);
  const std::vector<float> images_in = RandomImages(graph, 4);
  ExpectClose(RunLogits(**with, images_in), RunLogits(**without, images_in), 1e-6, "mixed");
}

// googlenet and inception3 at batch 1 (small images) on oneDNN: every
// inception block's concat copies nothing, and the logits are the copying
// plan's.
TEST(ConcatInPlaceZooTest, InceptionBlocksCopyNothing) {
  struct Model {
    const char* name;
    int64_t image_size;
    int concats;
  };
  auto backend = CpuBackend("onednn");
  ASSERT_NE(backend, nullptr);
  for (const Model& m : {Model{"googlenet", 64, 9}, Model{"inception3", 96, 11}}) {
    auto graph = BuildModel(m.name, {.batch = 1, .image_size = m.image_size});
    ASSERT_TRUE(graph.ok()) << m.name << ": " << graph.status();
    InferOptions in_place;
    in_place.fold_batch_norm = true;
    InferOptions copied = in_place;
    copied.concat_in_place = false;
    auto with = Inferencer::Compile(*graph, backend.get(), in_place);
    ASSERT_TRUE(with.ok()) << m.name << ": " << with.status();
    auto without = Inferencer::Compile(*graph, backend.get(), copied);
    ASSERT_TRUE(without.ok()) << m.name << ": " << without.status();
    int concats = 0;
    for (const auto& layer : (*with)->step_plan().layers)
      concats +=
          std::holds_alternative<ConcatDesc>((*with)->step_plan().graph.nodes[layer->node].op);
    EXPECT_GE(concats, m.concats) << m.name;
    EXPECT_EQ((*with)->concats_in_place(), concats) << m.name;
    ExpectViewsWhereTheConcatsSay((*with)->step_plan());
    const std::vector<float> images = RandomImages(*graph, 8);
    ExpectClose(RunLogits(**with, images), RunLogits(**without, images), 1e-6, m.name);
  }
}

}  // namespace
}  // namespace cnnbench
