// The trainable block on the oneDNN backend in bf16: the optimizer's update
// writes the bf16 working copies in its own pass (ParameterBlock::
// Bf16Copies), and every copy then holds its master rounded to bf16, as the
// separate refresh (the path before) would leave it.
#include "train/parameter_block.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "core/random.h"
#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "kernels/desc.h"
#include "tests/train/small_cnn.h"
#include "train/step_plan.h"

namespace cnnbench {
namespace {

using train_test::SmallCnn;

TEST(ParameterBlockTest, TheUpdateLeavesEveryBf16WorkingCopyTheCastOfItsMaster) {
  auto backend = CreateBackend("onednn", Device::Cpu());
  ASSERT_TRUE(backend.ok()) << backend.status();
  auto probe = (*backend)->Create(ReluDesc{{1, 1, 1, 16}}, DType::kBF16, {});
  if (!probe.ok()) GTEST_SKIP() << probe.status().message();
  StepPlanOptions options;
  options.precision = Precision::kBf16;
  auto plan = PlanStep(SmallCnn(), backend->get(), options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  auto block = ParameterBlock::Allocate(*plan, backend->get());
  ASSERT_TRUE(block.ok()) << block.status();
  ASSERT_TRUE(block->Clear().ok());
  ASSERT_TRUE(block->Initialize(*plan, 7).ok());

  // oneDNN keeps each bf16 parameter's master in its working layout, so the
  // update writes every working copy; at least one is blocked (a conv's).
  const std::vector<Bf16Copy> copies = block->Bf16Copies(*plan);
  int low_precision = 0, blocked = 0;
  for (const StepPlan::Param& p : plan->params) {
    low_precision += p.low_precision;
    blocked += p.low_precision && !p.spec.is_plain();
  }
  ASSERT_GT(blocked, 0);
  EXPECT_EQ(static_cast<int>(copies.size()), low_precision);

  SgdDesc sgd;
  sgd.count = static_cast<int64_t>(plan->params_bytes / sizeof(float));
  sgd.learning_rate = 0.5;
  sgd.momentum = 0.9;
  auto optimizer = (*backend)->CreateOptimizer(sgd);
  ASSERT_TRUE(optimizer.ok()) << optimizer.status();
  ASSERT_TRUE((*optimizer)->WritesBf16Copies());
  Rng rng(11);
  for (int64_t i = 0; i < sgd.count; ++i)
    block->gradients()[i] = static_cast<float>(2 * rng.Uniform() - 1);
  std::vector<std::vector<char>> before;
  for (const StepPlan::Param& p : plan->params) {
    const char* w = static_cast<const char*>(block->weights(p));
    before.emplace_back(w, w + p.spec.bytes);
  }
  UpdateArgs args;
  args.params = block->masters();
  args.grads = block->gradients();
  args.momentum = block->momentum();
  args.bf16_copies = copies.data();
  args.num_bf16_copies = static_cast<int>(copies.size());
  ASSERT_TRUE((*optimizer)->Update(args).ok());
  ASSERT_TRUE(block->RefreshWorkingCopies(*plan, /*except_bf16_copies=*/true).ok());

  for (size_t i = 0; i < plan->params.size(); ++i) {
    const StepPlan::Param& p = plan->params[i];
    if (!p.low_precision) continue;
    std::vector<char> cast(p.spec.bytes);
    ASSERT_TRUE((*backend)
                    ->Reorder(p.master, reinterpret_cast<char*>(block->masters()) + p.offset,
                              p.spec, cast.data())
                    .ok());
    EXPECT_EQ(std::memcmp(cast.data(), block->weights(p), cast.size()), 0) << "parameter " << i;
    EXPECT_NE(std::memcmp(before[i].data(), block->weights(p), cast.size()), 0)
        << "parameter " << i << " did not move";
  }
}

}  // namespace
}  // namespace cnnbench
