// The step plan as a value: planned with a fake backend (the reference's
// kernels behind a wider alignment, and optionally no layout shared between
// producer and consumer, so every edge is reordered), nothing run. Its
// parameter layout, buffer lifetimes, gradient edges, forward-only variant
// and footprint are checked against the graph and against what the Trainer
// then allocates.
#include "train/step_plan.h"

#include <memory>
#include <utility>
#include <vector>

#include "core/status.h"
#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "tests/train/small_cnn.h"
#include "train/trainer.h"

namespace cnnbench {
namespace {

using train_test::SmallCnn;

// The reference backend's kernels, with another buffer alignment and,
// when asked, no two specs the same layout (so the plan reorders every edge).
class FakeBackend final : public Backend {
 public:
  FakeBackend(size_t alignment, bool reorder_every_edge)
      : inner_(CreateReferenceBackend()),
        alignment_(alignment),
        reorder_every_edge_(reorder_every_edge) {}

  absl::string_view name() const override { return "fake"; }
  Device device() const override { return Device::Cpu(); }
  const Stream& stream() const override { return inner_->stream(); }
  size_t alignment() const override { return alignment_; }
  absl::Status Reorder(const TensorSpec& from, const void* src, const TensorSpec& to,
                       void* dst) override {
    return inner_->Reorder(from, src, to, dst);
  }
  bool SameLayout(const TensorSpec& a, const TensorSpec& b) const override {
    return !reorder_every_edge_ && inner_->SameLayout(a, b);
  }
  int kernels_created() const { return kernels_created_; }
  // Kernels created with KernelOptions::forward_only.
  int forward_only_kernels() const { return forward_only_kernels_; }

 protected:
  absl::Status CheckSupported(const OpDesc& desc, const KernelOptions& options) const override {
    return inner_->Supports(desc, options);
  }
  absl::StatusOr<std::unique_ptr<Kernel>> CreateKernel(
      const OpDesc& desc, const KernelOptions& options,
      const std::vector<TensorSpec>& inputs) override {
    ++kernels_created_;
    forward_only_kernels_ += options.forward_only;
    return inner_->Create(desc, options, inputs);
  }
  absl::StatusOr<std::unique_ptr<Optimizer>> CreateSgd(const SgdDesc& desc) override {
    return inner_->CreateOptimizer(desc);
  }

 private:
  std::unique_ptr<Backend> inner_;
  size_t alignment_;
  bool reorder_every_edge_;
  int kernels_created_ = 0;
  int forward_only_kernels_ = 0;
};

StepPlan Plan(Backend* backend, const StepPlanOptions& options = {}) {
  absl::StatusOr<StepPlan> plan = PlanStep(SmallCnn(), backend, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *std::move(plan) : StepPlan();
}

TEST(StepPlanTest, ParametersAreLaidOutAtTheBackendsAlignment) {
  FakeBackend backend(4096, false);
  const StepPlan plan = Plan(&backend);
  ASSERT_FALSE(plan.params.empty());
  EXPECT_EQ(backend.kernels_created(), static_cast<int>(plan.layers.size()));
  EXPECT_EQ(plan.alignment, 4096u);
  size_t next = 0;
  int64_t count = 0;
  for (const StepPlan::Param& p : plan.params) {
    EXPECT_EQ(p.offset, next) << "parameters are packed in forward order";
    EXPECT_EQ(p.offset % 4096, 0u);
    next += AlignUp(p.master.bytes, 4096);
    count += p.spec.shape.num_elements();
    const StepPlan::Layer& layer = *plan.layers[p.layer];
    EXPECT_EQ(layer.kernel->signature().params[p.index].shape, p.spec.shape);
  }
  EXPECT_EQ(plan.params_bytes, next);
  EXPECT_EQ(plan.parameter_count, count);
  EXPECT_EQ(plan.lowp_bytes, 0u) << "fp32 kernels read the masters";
}

TEST(StepPlanTest, LifetimesCoverEveryReader) {
  FakeBackend backend(64, false);
  const StepPlan plan = Plan(&backend);
  const int steps = 2 * static_cast<int>(plan.graph.nodes.size());
  for (const BufferRequest& r : plan.requests) {
    EXPECT_LE(r.first, r.last) << r.name;
    EXPECT_GE(r.first, 0) << r.name;
    EXPECT_LT(r.last, steps) << r.name;
  }
  for (const auto& layer : plan.layers) {
    for (const StepPlan::Input& in : layer->inputs) {
      if (in.buffer < 0) continue;  // the images and labels live in the input slots
      const BufferRequest& read = plan.requests[in.buffer];
      EXPECT_GE(read.last, plan.forward_step(layer->node)) << layer->name << " reads " << read.name;
      if (layer->needs_grad && layer->kernel->signature().backward_reads_inputs) {
        EXPECT_GE(read.last, plan.backward_step(layer->node))
            << layer->name << "'s backward reads " << read.name;
      }
      if (in.needs_grad) {
        ASSERT_GE(in.grad, 0) << layer->name;
        const BufferRequest& grad = plan.requests[in.grad];
        EXPECT_EQ(grad.first, plan.backward_step(layer->node)) << grad.name;
        EXPECT_GE(grad.last, plan.backward_step(in.producer)) << grad.name;
      }
    }
  }
  // Every arena buffer's end is listed once, at its last step.
  size_t ends = 0;
  for (size_t step = 0; step < plan.ending_at.size(); ++step)
    for (int b : plan.ending_at[step]) {
      EXPECT_EQ(plan.requests[b].last, static_cast<int>(step));
      ++ends;
    }
  EXPECT_EQ(ends, plan.requests.size());
}

TEST(StepPlanTest, AnEdgeInAnotherLayoutGetsItsOwnBuffers) {
  FakeBackend same(64, false), different(64, true);
  const StepPlan direct = Plan(&same);
  const StepPlan reordered = Plan(&different);
  int edges = 0;
  for (const auto& layer : reordered.layers) {
    for (const StepPlan::Input& in : layer->inputs) {
      ASSERT_TRUE(in.reorder) << layer->name;
      ++edges;
      ASSERT_GE(in.buffer, 0) << layer->name;
      EXPECT_NE(in.buffer, in.source);
      EXPECT_EQ(reordered.requests[in.buffer].bytes, in.to.bytes);
      if (in.needs_grad) {
        EXPECT_GE(in.grad_tmp, 0) << layer->name;
      }
    }
  }
  EXPECT_GT(edges, 0);
  EXPECT_GT(reordered.requests.size(), direct.requests.size());
  for (const auto& layer : direct.layers)
    for (const StepPlan::Input& in : layer->inputs) EXPECT_FALSE(in.reorder) << layer->name;
}

// The seam inference plans through: the same kernels and parameters, no
// gradients, and every lifetime inside the forward pass, so the arena
// shrinks.
TEST(StepPlanTest, AForwardOnlyPlanKeepsNothingForABackwardPass) {
  FakeBackend backend(64, false);
  StepPlanOptions options;
  // The same layers (no ReLU as a convolution's epilogue: each one a layer
  // less, in either use).
  options.conv_relu = false;
  const StepPlan training = Plan(&backend, options);
  EXPECT_EQ(training.conv_relu_epilogues, 0);
  EXPECT_EQ(backend.forward_only_kernels(), 0);
  options.forward_only = true;
  const int created = backend.kernels_created();
  const StepPlan forward = Plan(&backend, options);
  // Every kernel of a forward-only plan is made forward only (no backward
  // primitives, no backward candidates timed).
  EXPECT_EQ(backend.forward_only_kernels(), backend.kernels_created() - created);
  EXPECT_GT(backend.forward_only_kernels(), 0);
  // The dropout, the identity in inference, is left out.
  EXPECT_EQ(forward.identities_skipped, 1);
  ASSERT_EQ(forward.layers.size() + 1, training.layers.size());
  options.conv_relu = true;
  const StepPlan fused = Plan(&backend, options);
  EXPECT_GT(fused.conv_relu_epilogues, 0);
  EXPECT_EQ(fused.layers.size() + fused.conv_relu_epilogues + 1, training.layers.size());
  // A training plan fuses the same ReLUs where the backend has the
  // epilogue's backward (the reference does).
  const StepPlan fused_training = Plan(&backend);
  EXPECT_EQ(fused_training.conv_relu_epilogues, fused.conv_relu_epilogues);
  EXPECT_EQ(forward.params_bytes, training.params_bytes);
  const int forward_steps = static_cast<int>(forward.graph.nodes.size());
  for (const BufferRequest& r : forward.requests)
    EXPECT_LT(r.last, forward_steps) << r.name << " outlives the forward pass";
  for (const auto& layer : forward.layers) {
    EXPECT_FALSE(layer->needs_grad) << layer->name;
    EXPECT_TRUE(layer->grad_edges.empty()) << layer->name;
    EXPECT_EQ(layer->dy, kNoBuffer) << layer->name;
  }
  EXPECT_LT(forward.requests.size(), training.requests.size());
  EXPECT_LT(forward.memory.arena_bytes, training.memory.arena_bytes);
  EXPECT_LT(forward.FootprintBytes(), training.FootprintBytes());
}

// What the plan says the step needs is what the Trainer allocates.
TEST(StepPlanTest, TheFootprintIsWhatTheTrainerAllocates) {
  for (size_t alignment : {64, 4096}) {
    FakeBackend backend(alignment, false);
    absl::StatusOr<std::unique_ptr<Trainer>> trainer =
        Trainer::Compile(SmallCnn(), &backend, TrainOptions());
    ASSERT_TRUE(trainer.ok()) << trainer.status();
    EXPECT_EQ((*trainer)->peak_memory_bytes(), (*trainer)->step_plan().FootprintBytes())
        << "alignment " << alignment;
  }
}

TEST(StepPlanTest, AnAbsurdBatchIsOomBeforeAnyKernelIsCreated) {
  FakeBackend backend(64, false);
  StepPlanOptions options;
  options.memory_limit_bytes = 1024;
  absl::StatusOr<StepPlan> plan = PlanStep(SmallCnn(), &backend, options);
  ASSERT_FALSE(plan.ok());
  EXPECT_TRUE(IsOutOfMemory(plan.status())) << plan.status();
  EXPECT_EQ(backend.kernels_created(), 0);
}

}  // namespace
}  // namespace cnnbench
