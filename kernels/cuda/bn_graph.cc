// BnGraphs on cudnn-frontend (see bn_graph.h).
#include "kernels/cuda/bn_graph.h"

#include <cudnn.h>
#include <cudnn_frontend.h>

#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/cuda/fe_status.h"

namespace cnnbench::cuda {
namespace {

namespace fe = cudnn_frontend;

// Tensor ids of the two graphs (the variant packs' keys).
enum Uid : int64_t {
  kUidX = 1,
  kUidScale,
  kUidBias,
  kUidY,
  kUidMean,
  kUidInvVariance,
  kUidDy,
  kUidDx,
  kUidDScale,
  kUidDBias,
  kUidEpsilon,
  kUidRunningMean,
  kUidRunningVar,
  kUidMomentum,
  kUidNextMean,
  kUidNextVar,
};

}  // namespace

struct BnGraphs::Impl {
  struct Pass {
    std::shared_ptr<fe::graph::Graph> graph;
    int64_t plan = -1;
    int64_t workspace = 0;
    std::string name;
  };
  BnProblem problem;
  Pass forward, backward;
  bool forward_running_stats = false;  // the forward graph has them

  std::string What(const char* pass) const { return absl::StrCat(problem.what, " ", pass); }
  std::shared_ptr<fe::graph::Graph> NewGraph(const char* pass) const;
  std::shared_ptr<fe::graph::Tensor_attributes> Activation(fe::graph::Graph& g, const char* name,
                                                           int64_t uid) const;
  std::shared_ptr<fe::graph::Tensor_attributes> Channel(fe::graph::Graph& g, const char* name,
                                                        int64_t uid) const;
  void MarkActivation(fe::graph::Tensor_attributes& t, int64_t uid) const;
  void MarkChannel(fe::graph::Tensor_attributes& t, int64_t uid) const;
  absl::Status BuildForward(bool running_stats);
  absl::Status BuildBackward();
  absl::Status Choose(Pass& pass, const char* name, cudnnHandle_t cudnn);
  absl::Status BuildFirst(Pass& pass, const std::string& where, int64_t first);
};

std::shared_ptr<fe::graph::Graph> BnGraphs::Impl::NewGraph(const char* pass) const {
  auto graph = std::make_shared<fe::graph::Graph>();
  graph->set_name(absl::StrCat(problem.what, "/", pass))
      .set_io_data_type(FeType(problem.io_type))
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  return graph;
}

void BnGraphs::Impl::MarkActivation(fe::graph::Tensor_attributes& t, int64_t uid) const {
  const BnProblem& p = problem;
  std::vector<int64_t> strides = p.nhwc ? std::vector<int64_t>{p.h * p.w * p.c, 1, p.w * p.c, p.c}
                                        : std::vector<int64_t>{p.c * p.h * p.w, p.h * p.w, p.w, 1};
  t.set_uid(uid).set_dim({p.n, p.c, p.h, p.w}).set_stride(strides).set_data_type(FeType(p.io_type));
}

void BnGraphs::Impl::MarkChannel(fe::graph::Tensor_attributes& t, int64_t uid) const {
  const int64_t c = problem.c;
  t.set_uid(uid)
      .set_dim({1, c, 1, 1})
      .set_stride({c, 1, c, c})
      .set_data_type(fe::DataType_t::FLOAT);
}

std::shared_ptr<fe::graph::Tensor_attributes> BnGraphs::Impl::Activation(fe::graph::Graph& g,
                                                                         const char* name,
                                                                         int64_t uid) const {
  fe::graph::Tensor_attributes t;
  t.set_name(name);
  MarkActivation(t, uid);
  return g.tensor(t);
}

std::shared_ptr<fe::graph::Tensor_attributes> BnGraphs::Impl::Channel(fe::graph::Graph& g,
                                                                      const char* name,
                                                                      int64_t uid) const {
  fe::graph::Tensor_attributes t;
  t.set_name(name);
  MarkChannel(t, uid);
  return g.tensor(t);
}

absl::Status BnGraphs::Impl::BuildForward(bool running_stats) {
  auto graph = NewGraph("forward");
  fe::graph::Graph& g = *graph;
  auto x = Activation(g, "x", kUidX);
  auto scale = Channel(g, "scale", kUidScale);
  auto bias = Channel(g, "bias", kUidBias);
  auto epsilon =
      g.tensor(static_cast<float>(problem.epsilon), fe::graph::ScalarType::RUNTIME_PARAM);
  epsilon->set_uid(kUidEpsilon);
  fe::graph::Batchnorm_attributes attributes;
  attributes.set_name("bn").set_epsilon(epsilon).set_compute_data_type(fe::DataType_t::FLOAT);
  if (running_stats) {
    // Engines that want the running statistics in the graph get them (the
    // updated ones go to scratch; the kernel's own update is what counts).
    auto running_mean = Channel(g, "running_mean", kUidRunningMean);
    auto running_var = Channel(g, "running_var", kUidRunningVar);
    auto momentum =
        g.tensor(static_cast<float>(1.0 - problem.momentum), fe::graph::ScalarType::RUNTIME_PARAM);
    momentum->set_uid(kUidMomentum);
    attributes.set_previous_running_stats(running_mean, running_var, momentum);
  }
  auto outputs = g.batchnorm(x, scale, bias, attributes);
  if (running_stats) {
    outputs[3]->set_output(true);
    MarkChannel(*outputs[3], kUidNextMean);
    outputs[4]->set_output(true);
    MarkChannel(*outputs[4], kUidNextVar);
  }
  std::shared_ptr<fe::graph::Tensor_attributes> y = outputs[0];
  if (problem.relu)
    y = g.pointwise(y, fe::graph::Pointwise_attributes()
                           .set_name("relu")
                           .set_mode(fe::PointwiseMode_t::RELU_FWD)
                           .set_compute_data_type(fe::DataType_t::FLOAT));
  y->set_output(true);
  MarkActivation(*y, kUidY);
  outputs[1]->set_output(true);
  MarkChannel(*outputs[1], kUidMean);
  outputs[2]->set_output(true);
  MarkChannel(*outputs[2], kUidInvVariance);
  FE_RETURN_IF_ERROR(g.validate(), What("forward"));
  forward = Pass{};
  forward.graph = std::move(graph);
  forward_running_stats = running_stats;
  return absl::OkStatus();
}

absl::Status BnGraphs::Impl::BuildBackward() {
  auto graph = NewGraph("backward");
  fe::graph::Graph& g = *graph;
  std::shared_ptr<fe::graph::Tensor_attributes> dy = Activation(g, "dy", kUidDy);
  auto x = Activation(g, "x", kUidX);
  auto scale = Channel(g, "scale", kUidScale);
  auto mean = Channel(g, "mean", kUidMean);
  auto inv_variance = Channel(g, "inv_variance", kUidInvVariance);
  if (problem.relu) {
    // dy where the forward's output y > 0 (y > 0 exactly where its input was).
    auto y = Activation(g, "y", kUidY);
    dy = g.pointwise(dy, y,
                     fe::graph::Pointwise_attributes()
                         .set_name("drelu")
                         .set_mode(fe::PointwiseMode_t::RELU_BWD)
                         .set_compute_data_type(fe::DataType_t::FLOAT));
  }
  auto outputs = g.batchnorm_backward(dy, x, scale,
                                      fe::graph::Batchnorm_backward_attributes()
                                          .set_name("dbn")
                                          .set_saved_mean_and_inv_variance(mean, inv_variance)
                                          .set_compute_data_type(fe::DataType_t::FLOAT));
  outputs[0]->set_output(true);
  MarkActivation(*outputs[0], kUidDx);
  outputs[1]->set_output(true);
  MarkChannel(*outputs[1], kUidDScale);
  outputs[2]->set_output(true);
  MarkChannel(*outputs[2], kUidDBias);
  FE_RETURN_IF_ERROR(g.validate(), What("backward"));
  backward.graph = std::move(graph);
  return absl::OkStatus();
}

absl::Status BnGraphs::Impl::Choose(Pass& pass, const char* name, cudnnHandle_t cudnn) {
  fe::graph::Graph& g = *pass.graph;
  const std::string where = What(name);
  FE_RETURN_IF_ERROR(g.build_operation_graph(cudnn), where);
  // Engines compiled at run time (NVRTC, seconds each) only when no
  // precompiled one builds: a network has dozens of these layers.
  std::vector<fe::NumericalNote_t> barred;
  if (problem.deterministic) barred.push_back(fe::NumericalNote_t::NONDETERMINISTIC);
  int64_t tried = 0;
  for (bool runtime_compiled : {false, true}) {
    ASSIGN_OR_RETURN(const int64_t listed, ListEngineConfigs(g, barred, runtime_compiled, where));
    RETURN_IF_ERROR(BuildFirst(pass, where, tried));
    if (pass.plan >= 0) return absl::OkStatus();
    tried = listed;
  }
  return absl::OkStatus();  // pass.plan < 0: none builds (pass.name says why)
}

// Keeps the first of the listed engine configurations that builds; when
// none does, pass.plan stays -1 and pass.name says why.
absl::Status BnGraphs::Impl::BuildFirst(Pass& pass, const std::string& where, int64_t first) {
  fe::graph::Graph& g = *pass.graph;
  const int64_t configs = g.get_execution_plan_count();
  std::string last_error;
  for (int64_t i = first; i < configs; ++i) {
    fe::error_t built = g.build_plan_at_index(i);
    if (built.is_bad()) {
      last_error = built.get_message();
      continue;
    }
    pass.plan = i;
    FE_RETURN_IF_ERROR(g.get_workspace_size_plan_at_index(i, pass.workspace), where);
    FE_RETURN_IF_ERROR(g.get_plan_name_at_index(i, pass.name), where);
    FE_RETURN_IF_ERROR(g.prepare_variant_pack_template(), where);
    return absl::OkStatus();
  }
  pass.name = absl::StrCat("none of cuDNN's ", configs - first, " engine configurations builds",
                           last_error.empty() ? "" : absl::StrCat(" (last: ", last_error, ")"));
  return absl::OkStatus();
}

BnGraphs::BnGraphs(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BnGraphs::~BnGraphs() = default;

absl::StatusOr<std::unique_ptr<BnGraphs>> BnGraphs::Validate(const BnProblem& problem) {
  if (problem.n < 1 || problem.c < 1 || problem.h < 1 || problem.w < 1)
    return absl::InvalidArgumentError(absl::StrCat(problem.what, ": empty batch norm"));
  auto impl = std::make_unique<Impl>();
  impl->problem = problem;
  RETURN_IF_ERROR(impl->BuildForward(/*running_stats=*/false));
  RETURN_IF_ERROR(impl->BuildBackward());
  return std::unique_ptr<BnGraphs>(new BnGraphs(std::move(impl)));
}

absl::Status BnGraphs::ChoosePlans(cudnnContext* cudnn) {
  Impl& impl = *impl_;
  RETURN_IF_ERROR(impl.Choose(impl.forward, "forward", cudnn));
  if (impl.forward.plan < 0) {  // perhaps the engines want the running statistics
    const std::string without = impl.forward.name;
    RETURN_IF_ERROR(impl.BuildForward(/*running_stats=*/true));
    RETURN_IF_ERROR(impl.Choose(impl.forward, "forward", cudnn));
    if (impl.forward.plan < 0)
      return absl::UnimplementedError(
          absl::StrCat("unsupported: ", impl.What("forward"), ": ", without,
                       "; with running statistics: ", impl.forward.name));
  }
  RETURN_IF_ERROR(impl.Choose(impl.backward, "backward", cudnn));
  if (impl.backward.plan < 0)
    return absl::UnimplementedError(
        absl::StrCat("unsupported: ", impl.What("backward"), ": ", impl.backward.name));
  return absl::OkStatus();
}

bool BnGraphs::forward_takes_running_stats() const { return impl_->forward_running_stats; }

absl::Status BnGraphs::Forward(cudnnContext* cudnn, const BnForwardBuffers& b,
                               void* workspace) const {
  const Impl::Pass& pass = impl_->forward;
  if (pass.plan < 0)
    return absl::FailedPreconditionError(absl::StrCat(impl_->What("forward"), ": no plan chosen"));
  std::unordered_map<int64_t, void*> pack = {{kUidX, const_cast<void*>(b.x)},
                                             {kUidScale, const_cast<void*>(b.scale)},
                                             {kUidBias, const_cast<void*>(b.bias)},
                                             {kUidY, b.y},
                                             {kUidMean, b.mean},
                                             {kUidInvVariance, b.inv_variance}};
  if (impl_->forward_running_stats) {
    if (b.running_mean == nullptr || b.running_var == nullptr || b.next_mean == nullptr ||
        b.next_var == nullptr)
      return absl::InvalidArgumentError(
          absl::StrCat(impl_->What("forward"), ": the graph needs the running statistics"));
    pack[kUidRunningMean] = const_cast<void*>(b.running_mean);
    pack[kUidRunningVar] = const_cast<void*>(b.running_var);
    pack[kUidNextMean] = b.next_mean;
    pack[kUidNextVar] = b.next_var;
  }
  FE_RETURN_IF_ERROR(pass.graph->execute_plan_at_index(cudnn, pack, workspace, pass.plan),
                     impl_->What("forward"));
  return absl::OkStatus();
}

absl::Status BnGraphs::Backward(cudnnContext* cudnn, const BnBackwardBuffers& b,
                                void* workspace) const {
  const Impl::Pass& pass = impl_->backward;
  if (pass.plan < 0)
    return absl::FailedPreconditionError(absl::StrCat(impl_->What("backward"), ": no plan chosen"));
  std::unordered_map<int64_t, void*> pack = {{kUidDy, const_cast<void*>(b.dy)},
                                             {kUidX, const_cast<void*>(b.x)},
                                             {kUidScale, const_cast<void*>(b.scale)},
                                             {kUidMean, const_cast<void*>(b.mean)},
                                             {kUidInvVariance, const_cast<void*>(b.inv_variance)},
                                             {kUidDx, b.dx},
                                             {kUidDScale, b.dscale},
                                             {kUidDBias, b.dbias}};
  if (impl_->problem.relu) pack[kUidY] = const_cast<void*>(b.y);
  FE_RETURN_IF_ERROR(pass.graph->execute_plan_at_index(cudnn, pack, workspace, pass.plan),
                     impl_->What("backward"));
  return absl::OkStatus();
}

int64_t BnGraphs::workspace_bytes() const {
  return std::max(impl_->forward.workspace, impl_->backward.workspace);
}

std::string BnGraphs::implementation() const {
  return absl::StrCat("cudnn:bn_graph:fwd=", impl_->forward.name, ",bwd=", impl_->backward.name);
}

}  // namespace cnnbench::cuda
