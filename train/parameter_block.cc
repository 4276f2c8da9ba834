#include "train/parameter_block.h"

#include <algorithm>
#include <variant>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "train/init.h"

namespace cnnbench {

absl::StatusOr<ParameterBlock> ParameterBlock::Allocate(const StepPlan& plan, Backend* backend) {
  const Device device = backend->device();
  ParameterBlock block;
  block.backend_ = backend;
  // Which working copies the optimizer may write (decided once, not per update).
  for (const StepPlan::Param& p : plan.params)
    block.bf16_copy_.push_back(p.low_precision && p.spec.dtype == DType::kBF16 &&
                               backend->CastsElementwise(p.master, p.spec));
  ASSIGN_OR_RETURN(block.masters_, Buffer::Allocate(device, plan.params_bytes));
  // A forward-only plan keeps no gradients and no optimizer state.
  const size_t trained = plan.options.forward_only ? 0 : plan.params_bytes;
  ASSIGN_OR_RETURN(block.gradients_, Buffer::Allocate(device, trained));
  ASSIGN_OR_RETURN(block.momentum_, Buffer::Allocate(device, trained));
  ASSIGN_OR_RETURN(block.lowp_weights_, Buffer::Allocate(device, plan.lowp_bytes));
  ASSIGN_OR_RETURN(block.lowp_gradients_,
                   Buffer::Allocate(device, plan.options.forward_only ? 0 : plan.lowp_bytes));
  return block;
}

absl::Status ParameterBlock::Clear() {
  for (Buffer* b : {&masters_, &gradients_, &momentum_, &lowp_weights_, &lowp_gradients_})
    RETURN_IF_ERROR(backend_->Fill(b->data(), 0, b->size()));
  return absl::OkStatus();
}

absl::Status ParameterBlock::Initialize(const StepPlan& plan, uint64_t seed) {
  const Graph& given = plan.original_graph;
  const auto consumers = given.Consumers();
  for (const StepPlan::Param& param : plan.params) {
    const StepPlan::Layer& layer = *plan.layers[param.layer];
    if (!plan.folded_bn.empty() && plan.folded_bn[layer.node] >= 0) continue;
    // The given graph's node and consumers: the same weights fused or not.
    const int node = plan.origin[layer.node];
    // A layer followed by a ReLU gets the ReLU-aware scale (as tf_cnn_benchmarks' affine).
    const bool relu_after = consumers[node].size() == 1 &&
                            std::holds_alternative<ReluDesc>(given.nodes[consumers[node][0]].op);
    std::vector<float> values =
        InitialParameter(given.nodes[node].op, param.index, param.spec.shape, relu_after,
                         ParameterSeed(seed, node, param.index));
    char* master = static_cast<char*>(masters_.data()) + param.offset;
    RETURN_IF_ERROR(backend_->Upload(TensorSpec::Plain(DType::kF32, param.spec.shape),
                                     values.data(), param.master, master));
    if (param.low_precision)
      RETURN_IF_ERROR(backend_->Reorder(param.master, master, param.spec, weights(param)));
  }
  return absl::OkStatus();
}

void* ParameterBlock::weights(const StepPlan::Param& p) const {
  return p.low_precision ? static_cast<char*>(lowp_weights_.data()) + p.lowp_offset
                         : static_cast<char*>(masters_.data()) + p.offset;
}

void* ParameterBlock::weight_gradient(const StepPlan::Param& p) const {
  return p.low_precision ? static_cast<char*>(lowp_gradients_.data()) + p.lowp_offset
                         : static_cast<char*>(gradients_.data()) + p.offset;
}

absl::Status ParameterBlock::CastGradients(const StepPlan& plan,
                                           const StepPlan::Layer& layer) const {
  for (int p : layer.params) {
    const StepPlan::Param& param = plan.params[p];
    if (param.low_precision)
      RETURN_IF_ERROR(backend_->Reorder(param.spec, weight_gradient(param), param.master,
                                        static_cast<char*>(gradients_.data()) + param.offset));
  }
  return absl::OkStatus();
}


std::vector<Bf16Copy> ParameterBlock::Bf16Copies(const StepPlan& plan) const {
  std::vector<Bf16Copy> copies;
  for (size_t p = 0; p < plan.params.size(); ++p) {
    if (!bf16_copy_[p]) continue;
    const StepPlan::Param& param = plan.params[p];
    Bf16Copy copy;
    copy.offset = static_cast<int64_t>(param.offset / sizeof(float));
    copy.count = static_cast<int64_t>(param.master.bytes / sizeof(float));
    copy.data = static_cast<uint16_t*>(weights(param));
    copies.push_back(copy);
  }
  std::sort(copies.begin(), copies.end(),
            [](const Bf16Copy& a, const Bf16Copy& b) { return a.offset < b.offset; });
  return copies;
}

absl::Status ParameterBlock::RefreshWorkingCopies(const StepPlan& plan,
                                                  bool except_bf16_copies) const {
  for (size_t p = 0; p < plan.params.size(); ++p) {
    const StepPlan::Param& param = plan.params[p];
    if (param.low_precision && !(except_bf16_copies && bf16_copy_[p]))
      RETURN_IF_ERROR(backend_->Reorder(param.master,
                                        static_cast<char*>(masters_.data()) + param.offset,
                                        param.spec, weights(param)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> ParameterBlock::Read(const StepPlan::Param& p) const {
  std::vector<float> out(p.spec.shape.num_elements());
  RETURN_IF_ERROR(backend_->stream().Synchronize());
  RETURN_IF_ERROR(backend_->Download(p.master, static_cast<const char*>(masters_.data()) + p.offset,
                                     TensorSpec::Plain(DType::kF32, p.spec.shape), out.data()));
  return out;
}

absl::Status ParameterBlock::Write(const StepPlan::Param& p,
                                   const std::vector<float>& values) const {
  if (static_cast<int64_t>(values.size()) != p.spec.shape.num_elements())
    return absl::InvalidArgumentError(absl::StrCat("parameter of ", p.spec.shape.num_elements(),
                                                   " values given ", values.size()));
  char* master = static_cast<char*>(masters_.data()) + p.offset;
  RETURN_IF_ERROR(backend_->Upload(TensorSpec::Plain(DType::kF32, p.spec.shape), values.data(),
                                   p.master, master));
  if (p.low_precision) RETURN_IF_ERROR(backend_->Reorder(p.master, master, p.spec, weights(p)));
  return absl::OkStatus();
}

size_t ParameterBlock::bytes() const {
  return masters_.size() + gradients_.size() + momentum_.size() + lowp_weights_.size() +
         lowp_gradients_.size();
}

}  // namespace cnnbench
