// BnGraphs on cudnn-frontend (see bn_graph.h).
#include "kernels/cuda/bn_graph.h"

#include <cudnn.h>
#include <cudnn_frontend.h>

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/compile_log.h"
#include "core/dtype.h"
#include "core/status.h"
#include "kernels/cuda/engine_pick.h"
#include "kernels/cuda/fe_status.h"
#include "kernels/cuda/plan_choices.h"

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
  kUidMask,
  kUidZero,
};

}  // namespace

struct BnGraphs::Impl {
  struct Pass {
    std::shared_ptr<fe::graph::Graph> graph;
    int64_t plan = -1;
    int64_t workspace = 0;
    std::string name;
    bool from_record = false;  // the plan-choice file's engine
    bool relaxed = false;
  };
  BnProblem problem;
  std::vector<BnReluForm> forms;  // that validate, in the order tried
  BnReluForm form = BnReluForm::kNone;
  Pass forward, backward;
  bool forward_running_stats = false;  // the forward graph has them

  std::string What(const char* pass) const {
    return absl::StrCat(problem.what, " ", pass,
                        problem.relu ? absl::StrCat(" (relu ", BnReluFormName(form), ")") : "");
  }
  std::shared_ptr<fe::graph::Graph> NewGraph(const char* pass) const;
  std::shared_ptr<fe::graph::Tensor_attributes> Activation(fe::graph::Graph& g, const char* name,
                                                           int64_t uid) const;
  std::shared_ptr<fe::graph::Tensor_attributes> Channel(fe::graph::Graph& g, const char* name,
                                                        int64_t uid) const;
  void MarkActivation(fe::graph::Tensor_attributes& t, int64_t uid) const;
  void MarkChannel(fe::graph::Tensor_attributes& t, int64_t uid) const;
  absl::Status BuildForward(bool running_stats);
  absl::Status BuildBackward();
  // Both graphs of `form` (forward without the running statistics).
  absl::Status BuildForm(BnReluForm form);
  // The plans of the current form's graphs; pass.plan < 0 and pass.name
  // says why where none builds.
  // With `recorded`, that engine first (plan_choices.h).
  absl::Status Choose(Pass& pass, const char* name, cudnnHandle_t cudnn,
                      const RecordedEngine* recorded = nullptr);
  // The plan-choice file's key and form text, and the chosen plans as a
  // choice to record.
  std::string ChoiceKey() const;
  std::string FormText() const;
  // The recorded form and engines: OK with both plans chosen, or OK with
  // *why_not set (the search then runs as without a file).
  absl::Status ChooseRecorded(cudnnHandle_t cudnn, const PlanChoice& recorded,
                              std::string* why_not);
  void Record() const;
  absl::Status ChooseForm(cudnnHandle_t cudnn, std::string* why_not);
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
  if (problem.relu) {
    y = g.pointwise(y, fe::graph::Pointwise_attributes()
                           .set_name("relu")
                           .set_mode(fe::PointwiseMode_t::RELU_FWD)
                           .set_compute_data_type(fe::DataType_t::FLOAT));
  }
  y->set_output(true);
  MarkActivation(*y, kUidY);
  if (form == BnReluForm::kMask) {
    // The backward pass's mask, y > 0 (exactly where the ReLU's input was).
    auto zero = g.tensor(0.0f, fe::graph::ScalarType::RUNTIME_PARAM);
    zero->set_uid(kUidZero);
    auto mask = g.pointwise(y, zero,
                            fe::graph::Pointwise_attributes()
                                .set_name("relu_mask")
                                .set_mode(fe::PointwiseMode_t::CMP_GT)
                                .set_compute_data_type(fe::DataType_t::FLOAT));
    mask->set_output(true);
    MarkActivation(*mask, kUidMask);
    mask->set_data_type(fe::DataType_t::BOOLEAN);
  }
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
  if (form == BnReluForm::kMask) {
    auto mask = Activation(g, "relu_mask", kUidMask);
    mask->set_data_type(fe::DataType_t::BOOLEAN);
    dy = g.pointwise(dy, mask,
                     fe::graph::Pointwise_attributes()
                         .set_name("drelu")
                         .set_mode(fe::PointwiseMode_t::MUL)
                         .set_compute_data_type(fe::DataType_t::FLOAT));
    dy->set_data_type(FeType(problem.io_type));  // as the samples set it
  } else if (form == BnReluForm::kReluBwd) {
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
  backward = Pass{};
  backward.graph = std::move(graph);
  return absl::OkStatus();
}

absl::Status BnGraphs::Impl::BuildForm(BnReluForm f) {
  form = f;
  RETURN_IF_ERROR(BuildForward(/*running_stats=*/false));
  return BuildBackward();
}

std::string BnGraphs::Impl::ChoiceKey() const {
  return absl::StrCat(problem.what, "/", DTypeName(problem.io_type),
                      problem.deterministic ? "/deterministic" : "");
}

std::string BnGraphs::Impl::FormText() const {
  return absl::StrCat(BnReluFormName(form), "/running_stats=",
                      forward_running_stats ? "yes" : "no");
}

absl::Status BnGraphs::Impl::ChooseRecorded(cudnnHandle_t cudnn, const PlanChoice& recorded,
                                            std::string* why_not) {
  std::optional<BnReluForm> chosen;
  bool running_stats = false;
  for (BnReluForm f : forms)
    for (bool stats : {false, true})
      if (recorded.form == absl::StrCat(BnReluFormName(f), "/running_stats=",
                                        stats ? "yes" : "no")) {
        chosen = f;
        running_stats = stats;
      }
  if (!chosen.has_value() || recorded.engines.size() != 2) {
    *why_not = absl::StrCat("the recorded form \"", recorded.form, "\" with ",
                            recorded.engines.size(), " engines is not one this build makes");
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(BuildForm(*chosen));
  if (running_stats) RETURN_IF_ERROR(BuildForward(/*running_stats=*/true));
  RETURN_IF_ERROR(Choose(forward, "forward", cudnn, &recorded.engines[0]));
  if (forward.plan >= 0) RETURN_IF_ERROR(Choose(backward, "backward", cudnn, &recorded.engines[1]));
  if (forward.plan < 0 || backward.plan < 0)
    *why_not = forward.plan < 0 ? forward.name : backward.name;
  return absl::OkStatus();
}

void BnGraphs::Impl::Record() const {
  if (problem.plan_choices == nullptr || (forward.from_record && backward.from_record)) return;
  PlanChoice choice;
  choice.form = FormText();
  for (const Pass* pass : {&forward, &backward}) {
    absl::StatusOr<RecordedEngine> engine =
        DescribePlan(*pass->graph, pass->plan, pass->relaxed, problem.what);
    if (!engine.ok()) {
      ClearLastErrors();
      CompileLog({{"plan_cache", problem.plan_choices->path()},
                  {"note", absl::StrCat("not recorded: ", engine.status().message())}});
      return;
    }
    choice.engines.push_back(*std::move(engine));
  }
  problem.plan_choices->Record(ChoiceKey(), choice).IgnoreError();  // logged there
}

absl::Status BnGraphs::Impl::Choose(Pass& pass, const char* name, cudnnHandle_t cudnn,
                                    const RecordedEngine* recorded) {
  fe::graph::Graph& g = *pass.graph;
  const std::string where = What(name);
  const absl::Time start = absl::Now();
  // cuDNN refusing the graph (lowering it, or listing no engine for it) is
  // "no engine" here, so the next form or the legacy calls are tried.
  EnginePick pick;
  absl::Status listed = [&]() -> absl::Status {
    FE_RETURN_IF_ERROR(g.build_operation_graph(cudnn), where);
    std::vector<fe::NumericalNote_t> barred;
    if (problem.deterministic) barred.push_back(fe::NumericalNote_t::NONDETERMINISTIC);
    FeEngineListing listing(g, barred, barred, /*has_relaxed=*/false, where);
    ASSIGN_OR_RETURN(pick, PickEngines(listing, /*wanted=*/1, problem.runtime_compiled_attempts,
                                       problem.runtime_compiled_budget, recorded));
    return absl::OkStatus();
  }();
  if (IsOutOfMemory(listed) || IsCompileDeadline(listed)) return listed;
  if (!listed.ok()) {
    ClearLastErrors();
    pick = EnginePick{};
    pick.last_error = std::string(listed.message());
  }
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  CompileLogFields fields = {{"kernel", "batchnorm"},
                             {"op", problem.what},
                             {"pass", name},
                             {"graph", "yes"}};
  if (problem.relu) fields.push_back({"relu", BnReluFormName(form)});
  if (recorded != nullptr)
    fields.push_back({"plan_cache", pick.from_record
                                        ? std::string("hit")
                                        : absl::StrCat("stale: ", pick.record_error)});
  pass.from_record = pick.from_record;
  pass.relaxed = pick.relaxed;
  if (&pass == &forward) fields.push_back({"running_stats", forward_running_stats ? "yes" : "no"});
  if (pick.built.empty()) {
    pass.plan = -1;
    pass.name = listed.ok() ? NoEngineReason(pick, problem.runtime_compiled_attempts)
                            : std::string(listed.message());
    fields.push_back({"engine", "none"});
    fields.push_back({"tried", absl::StrCat(pick.precompiled_tried, "+",
                                            pick.runtime_compiled_tried, "rtc")});
    fields.push_back({"build", CompileLogSeconds(seconds)});
    fields.push_back({"why", pass.name});
    CompileLog(fields);
    return absl::OkStatus();
  }
  pass.plan = pick.built.front();
  FE_RETURN_IF_ERROR(g.get_workspace_size_plan_at_index(pass.plan, pass.workspace), where);
  FE_RETURN_IF_ERROR(g.get_plan_name_at_index(pass.plan, pass.name), where);
  FE_RETURN_IF_ERROR(g.prepare_variant_pack_template(), where);
  fields.push_back({"engine", pass.name});
  fields.push_back({"rtc", RuntimeCompiledPlan(g, pass.plan) ? "yes" : "no"});
  fields.push_back(
      {"tried", absl::StrCat(pick.precompiled_tried, "+", pick.runtime_compiled_tried, "rtc")});
  fields.push_back({"build", CompileLogSeconds(seconds)});
  CompileLog(fields);
  return absl::OkStatus();
}

// The current form's plans: OK with both chosen, or OK with *why_not set
// when one of its graphs has no engine.
absl::Status BnGraphs::Impl::ChooseForm(cudnnHandle_t cudnn, std::string* why_not) {
  RETURN_IF_ERROR(Choose(forward, "forward", cudnn));
  if (forward.plan < 0) {  // perhaps the engines want the running statistics
    const std::string without = forward.name;
    RETURN_IF_ERROR(BuildForward(/*running_stats=*/true));
    RETURN_IF_ERROR(Choose(forward, "forward", cudnn));
    if (forward.plan < 0) {
      *why_not = absl::StrCat("forward: ", without, "; with running statistics: ", forward.name);
      return absl::OkStatus();
    }
  }
  RETURN_IF_ERROR(Choose(backward, "backward", cudnn));
  if (backward.plan < 0) *why_not = absl::StrCat("backward: ", backward.name);
  return absl::OkStatus();
}

BnGraphs::BnGraphs(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BnGraphs::~BnGraphs() = default;

absl::StatusOr<std::unique_ptr<BnGraphs>> BnGraphs::Validate(const BnProblem& problem) {
  if (problem.n < 1 || problem.c < 1 || problem.h < 1 || problem.w < 1)
    return absl::InvalidArgumentError(absl::StrCat(problem.what, ": empty batch norm"));
  auto impl = std::make_unique<Impl>();
  impl->problem = problem;
  const std::vector<BnReluForm> candidates =
      problem.relu ? std::vector<BnReluForm>{BnReluForm::kMask, BnReluForm::kReluBwd}
                   : std::vector<BnReluForm>{BnReluForm::kNone};
  std::vector<std::string> errors;
  for (BnReluForm form : candidates) {
    absl::Status built = impl->BuildForm(form);
    if (built.ok()) {
      impl->forms.push_back(form);
    } else {
      errors.push_back(absl::StrCat(BnReluFormName(form), ": ", built.message()));
    }
  }
  if (impl->forms.empty())
    return absl::InvalidArgumentError(
        absl::StrCat(problem.what, ": no batch norm graph validates (",
                     absl::StrJoin(errors, "; "), ")"));
  // Left at the first form that validated, as ChoosePlans starts.
  RETURN_IF_ERROR(impl->BuildForm(impl->forms.front()));
  return std::unique_ptr<BnGraphs>(new BnGraphs(std::move(impl)));
}

absl::Status BnGraphs::ChoosePlans(cudnnContext* cudnn) {
  Impl& impl = *impl_;
  PlanChoices* choices = impl.problem.plan_choices;
  if (choices != nullptr) {
    const std::optional<PlanChoice> recorded = choices->Find(impl.ChoiceKey());
    if (recorded.has_value()) {
      std::string why_not;
      RETURN_IF_ERROR(impl.ChooseRecorded(cudnn, *recorded, &why_not));
      if (why_not.empty()) {
        impl.Record();  // where the search replaced a recorded engine
        return absl::OkStatus();
      }
      choices->Forget(impl.ChoiceKey());
      CompileLog({{"plan_cache", choices->path()},
                  {"op", impl.problem.what},
                  {"note", absl::StrCat("the recorded choice no longer builds (", why_not,
                                        "): searching")}});
    }
  }
  std::vector<std::string> reasons;
  for (BnReluForm form : impl.forms) {
    RETURN_IF_ERROR(impl.BuildForm(form));
    std::string why_not;
    RETURN_IF_ERROR(impl.ChooseForm(cudnn, &why_not));
    if (why_not.empty()) {
      impl.Record();
      return absl::OkStatus();
    }
    reasons.push_back(impl.problem.relu ? absl::StrCat("relu ", BnReluFormName(form), ": ", why_not)
                                        : why_not);
  }
  impl.forward.plan = impl.backward.plan = -1;
  return absl::UnimplementedError(
      absl::StrCat("unsupported: ", impl.problem.what, " as cuDNN graphs: ",
                   absl::StrJoin(reasons, "; ")));
}

bool BnGraphs::forward_takes_running_stats() const { return impl_->forward_running_stats; }

BnReluForm BnGraphs::relu_form() const { return impl_->form; }

int64_t BnGraphs::relu_mask_bytes() const {
  const BnProblem& p = impl_->problem;
  return impl_->form == BnReluForm::kMask ? p.n * p.c * p.h * p.w : 0;
}

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
  if (impl_->form == BnReluForm::kMask) {
    if (b.relu_mask == nullptr)
      return absl::InvalidArgumentError(
          absl::StrCat(impl_->What("forward"), ": the graph writes a ReLU mask; none given"));
    pack[kUidMask] = b.relu_mask;
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
  if (impl_->form == BnReluForm::kReluBwd) pack[kUidY] = const_cast<void*>(b.y);
  if (impl_->form == BnReluForm::kMask) {
    if (b.relu_mask == nullptr)
      return absl::InvalidArgumentError(
          absl::StrCat(impl_->What("backward"), ": the graph reads the ReLU mask; none given"));
    pack[kUidMask] = const_cast<void*>(b.relu_mask);
  }
  FE_RETURN_IF_ERROR(pass.graph->execute_plan_at_index(cudnn, pack, workspace, pass.plan),
                     impl_->What("backward"));
  return absl::OkStatus();
}

int64_t BnGraphs::workspace_bytes() const {
  return std::max(impl_->forward.workspace, impl_->backward.workspace);
}

std::string BnGraphs::implementation() const {
  return absl::StrCat("cudnn:bn_graph:fwd=", impl_->forward.name, ",bwd=", impl_->backward.name,
                      impl_->problem.relu ? absl::StrCat(",relu=", BnReluFormName(impl_->form))
                                          : "");
}

}  // namespace cnnbench::cuda
