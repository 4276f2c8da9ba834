// Batch normalization on cuDNN's spatial batch norm (NCHW or NHWC; fp32
// parameters, running statistics and saved values for every activation
// type). Training forward normalises with the batch statistics and updates
// the running ones with factor 1 - momentum (cuDNN's running variance is the
// unbiased one, as docs/kernels.md asks). Inference forward uses the running
// statistics; a small kernel then writes them into saved, so backward reads
// the same place in both modes.
//
// Saved (four 256-byte-aligned fp32 C-vectors): batch mean, 1/sqrt(var+eps),
// then dgamma and dbeta; with the graphs' mask form of the ReLU, its mask
// after them (one byte per element). cuDNN computes dx, dgamma and dbeta in one pass:
// BackwardData runs it and keeps dgamma/dbeta in saved; a BackwardWeights
// right after (no forward since, same x, dy and saved) copies them, otherwise
// it runs the pass itself with dx going to scratch. Frozen-statistics
// backward (training = false) is an affine map: dx = dy * gamma * inv_std.
//
// `_relu`, `_relu6`: the activation runs in place on y right after cuDNN's
// normalisation (one elementwise pass, no buffer of its own); backward
// first masks dy where it passes at y (ReLU: y > 0; ReLU6: 0 < y < 6) into
// scratch and gives cuDNN that (dgamma and dbeta are then of the masked
// gradient, as on every backend).
//
// Training on NHWC activations (the tensor-core precisions) runs instead as
// two cuDNN graphs (bn_graph.h) with a ReLU inside them, where an engine
// builds for the shape and CudaBackendOptions::batch_norm_graphs allows:
// forward writes y, the batch mean and inverse std in one graph, and a small
// kernel updates the running statistics from them (unbiased variance);
// backward's dReLU reads the forward's mask or y (bn_graph.h's two forms).
// The graphs know ReLU alone: with ReLU6 they normalise only, and the clip
// and the mask are the elementwise passes above, around them. Inference and
// frozen-statistics backward keep the legacy calls. implementation() says which ran (and why not a
// graph).
//
// Scratch: [dx of a BackwardWeights alone][masked dy, with an activation][cuDNN's
// updated running statistics, when the forward graph takes them][the
// graphs' workspace].
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/compile_log.h"
#include "core/cuda_status.h"
#include "core/status.h"
#include "kernels/cuda/bn_graph.h"
#include "kernels/cuda/engine_pick.h"
#include "kernels/cuda/op_kernels.h"
#include "kernels/cuda/op_spec.h"
#include "kernels/cuda/ops.h"

namespace cnnbench::cuda {

// Batch norm's graphs of one backend, by descriptor and storage type, or why
// none builds (the label's reason).
struct BnGraphCache {
  struct Built {
    std::shared_ptr<const BnGraphs> graphs;
    std::string no_graph;
  };
  std::map<std::string, Built> built;
};

namespace {

// A failed cuDNN call's status, naming the layer too (out-of-memory
// statuses keep their "OOM: " start).
#define BN_CUDNN(expr)                                                                   \
  do {                                                                                   \
    if (cudnnStatus_t err_ = (expr); err_ != CUDNN_STATUS_SUCCESS) {                     \
      const absl::Status status_ = CudnnError(err_, #expr, __FILE__, __LINE__);          \
      if (IsOutOfMemory(status_)) return status_;                                        \
      return absl::Status(status_.code(), absl::StrCat(what_, ": ", status_.message())); \
    }                                                                                    \
  } while (0)

constexpr size_t kAlign = 256;
size_t AlignUp(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

absl::StatusOr<cudnnDataType_t> CudnnType(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return CUDNN_DATA_FLOAT;
    case DType::kF16:
      return CUDNN_DATA_HALF;
    case DType::kBF16:
      return CUDNN_DATA_BFLOAT16;
    default:
      return absl::UnimplementedError(
          absl::StrCat("unsupported: batch norm in ", DTypeName(dtype), " on the cuda backend"));
  }
}

class BatchNormKernel : public CudaKernel {
 public:
  BatchNormKernel(ContextPtr context, const BatchNormDesc& desc)
      : CudaKernel(std::move(context), desc.ToString()), desc_(desc) {}

  ~BatchNormKernel() override {
    if (param_desc_ != nullptr) cudnnDestroyTensorDescriptor(param_desc_);
    if (x_desc_ != nullptr) cudnnDestroyTensorDescriptor(x_desc_);
  }

  absl::Status Init(const KernelOptions& options, const Inputs& inputs) {
    RETURN_IF_ERROR(CheckInputCount(what_, inputs, 1));
    const Dims4& d = desc_.dims;
    if (d.n * d.h * d.w < 2)
      return absl::UnimplementedError(
          absl::StrCat("unsupported: ", what_, ": batch statistics need two elements per channel"));
    ASSIGN_OR_RETURN(TensorSpec input,
                     ResolveInput(what_, *context_, options, inputs, 0, d.shape()));
    ASSIGN_OR_RETURN(elem_, ToElem(options.dtype));
    ASSIGN_OR_RETURN(cudnnDataType_t type, CudnnType(options.dtype));
    geometry_ = GeometryOf(d, input);
    BN_CUDNN(cudnnCreateTensorDescriptor(&x_desc_));
    BN_CUDNN(cudnnSetTensor4dDescriptor(x_desc_,
                                        geometry_.nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                        type, static_cast<int>(d.n), static_cast<int>(d.c),
                                        static_cast<int>(d.h), static_cast<int>(d.w)));
    BN_CUDNN(cudnnCreateTensorDescriptor(&param_desc_));
    BN_CUDNN(cudnnDeriveBNTensorDescriptor(param_desc_, x_desc_, kMode));

    const TensorSpec vector = TensorSpec::Plain(DType::kF32, Shape{d.c});
    if (desc_.scale) signature_.params.push_back(vector);  // gamma
    signature_.params.push_back(vector);                   // beta
    signature_.state = {vector, vector};                   // running mean, running variance
    vector_bytes_ = AlignUp(static_cast<size_t>(d.c) * sizeof(float));
    signature_.inputs = {input};
    signature_.output = input;
    signature_.saved_bytes = 4 * vector_bytes_;
    activation_bytes_ = AlignUp(static_cast<size_t>(d.elements()) * SizeOf(options.dtype));
    workspace_offset_ = (fused_activation() ? 2 : 1) * activation_bytes_;
    RETURN_IF_ERROR(TryGraphs(options));
    if (graphs_ != nullptr && graphs_->relu_mask_bytes() > 0) {
      mask_offset_ = signature_.saved_bytes;  // the mask form's y > 0, forward to backward
      signature_.saved_bytes += AlignUp(static_cast<size_t>(graphs_->relu_mask_bytes()));
    }
    if (graphs_ != nullptr && graphs_->forward_takes_running_stats())
      workspace_offset_ += 2 * vector_bytes_;  // cuDNN's updated statistics, not used
    signature_.scratch_bytes =
        workspace_offset_ +
        (graphs_ != nullptr ? AlignUp(static_cast<size_t>(graphs_->workspace_bytes())) : 0);
    signature_.backward_reads_inputs = true;
    signature_.backward_reads_output = fused_activation();
    if (!desc_.scale) {  // cuDNN always scales: gamma = 1
      ASSIGN_OR_RETURN(ones_, Buffer::Allocate(context_->device, vector.bytes));
      const std::vector<float> ones(static_cast<size_t>(d.c), 1.0f);
      RETURN_IF_ERROR(
          CopyBytes(ones_.data(), context_->device, ones.data(), Device::Cpu(), vector.bytes));
    }
    // "+cuda:relu6": an activation run by the elementwise passes, named as
    // its suffix without the "_".
    absl::string_view activation = ActivationSuffix(desc_.activation);
    if (!activation.empty()) activation.remove_prefix(1);
    if (graphs_ != nullptr) {
      implementation_ = graphs_->implementation();
      if (!graph_relu() && fused_activation())
        absl::StrAppend(&implementation_, "+cuda:", activation);
    } else {
      implementation_ = absl::StrCat("cudnn:batchnorm_spatial", fused_activation() ? "+cuda:" : "",
                                     activation);
      if (!no_graph_.empty()) absl::StrAppend(&implementation_, " (no graph: ", no_graph_, ")");
      // Why the legacy calls, for the compile log.
      const std::string why = !geometry_.nhwc ? "NCHW activations (graphs run NHWC)"
                              : !context_->options.batch_norm_graphs
                                  ? "--cuda_batch_norm=legacy"
                                  : absl::StrCat("no graph: ", no_graph_);
      CompileLog({{"kernel", "batchnorm"},
                  {"op", what_},
                  {"pass", "all"},
                  {"graph", "no"},
                  {"engine", implementation_.substr(0, implementation_.find(" ("))},
                  {"why", why}});
    }
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    fresh_ = false;
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.y, "y"));
    RETURN_IF_ERROR(CheckParamsAndState(args));
    const float one = 1.0f, zero = 0.0f;
    if (args.training && graphs_ != nullptr) {
      RETURN_IF_ERROR(Require(args.saved, "saved"));
      RETURN_IF_ERROR(RequireScratch(args));
      BnForwardBuffers b;
      b.x = x;
      b.scale = Gamma(args);
      b.bias = args.params.back();
      b.y = args.y;
      b.mean = SavedAt(args, 0);
      b.inv_variance = SavedAt(args, 1);
      if (graphs_->forward_takes_running_stats()) {
        char* next = static_cast<char*>(Workspace(args)) - 2 * vector_bytes_;
        b.running_mean = args.state[0];
        b.running_var = args.state[1];
        b.next_mean = next;
        b.next_var = next + vector_bytes_;
      }
      b.relu_mask = ReluMask(args);
      RETURN_IF_ERROR(graphs_->Forward(context_->cudnn, b, Workspace(args)));
      if (!graph_relu()) RETURN_IF_ERROR(ActivateInPlace(args.y));  // ReLU6: after the graph
      const Dims4& d = desc_.dims;
      return Launched(LaunchBatchNormRunningStats(
                          static_cast<const float*>(SavedAt(args, 0)),
                          static_cast<const float*>(SavedAt(args, 1)), desc_.epsilon,
                          d.n * d.h * d.w, desc_.momentum, static_cast<float*>(args.state[0]),
                          static_cast<float*>(args.state[1]), d.c, context_->raw_stream()),
                      "batch norm running statistics");
    }
    if (args.training) {
      RETURN_IF_ERROR(Require(args.saved, "saved"));
      BN_CUDNN(cudnnBatchNormalizationForwardTraining(
          context_->cudnn, kMode, &one, &zero, x_desc_, x, x_desc_, args.y, param_desc_,
          Gamma(args), args.params.back(), 1.0 - desc_.momentum, args.state[0], args.state[1],
          desc_.epsilon, SavedAt(args, 0), SavedAt(args, 1)));
      return ActivateInPlace(args.y);
    }
    BN_CUDNN(cudnnBatchNormalizationForwardInference(
        context_->cudnn, kMode, &one, &zero, x_desc_, x, x_desc_, args.y, param_desc_, Gamma(args),
        args.params.back(), args.state[0], args.state[1], desc_.epsilon));
    RETURN_IF_ERROR(ActivateInPlace(args.y));
    if (args.saved == nullptr) return absl::OkStatus();  // inference only
    return Launched(LaunchBatchNormFrozenStats(static_cast<const float*>(args.state[0]),
                                               static_cast<const float*>(args.state[1]),
                                               desc_.epsilon, static_cast<float*>(SavedAt(args, 0)),
                                               static_cast<float*>(SavedAt(args, 1)), desc_.dims.c,
                                               context_->raw_stream()),
                    "batch norm frozen statistics");
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    fresh_ = false;
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    RETURN_IF_ERROR(Require(args.saved, "saved"));
    RETURN_IF_ERROR(CheckParamsAndState(args, /*state=*/false));
    if (args.training && graphs_ != nullptr) {
      RETURN_IF_ERROR(RunGraphBackward(args, x, args.dx[0], SavedAt(args, 2), SavedAt(args, 3)));
      Remember(args, x);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(const void* dy, MaskedDy(args));
    if (!args.training)
      return Launched(
          LaunchBatchNormFrozenBackward(
              geometry_, dy, desc_.scale ? static_cast<const float*>(args.params[0]) : nullptr,
              static_cast<const float*>(SavedAt(args, 1)), args.dx[0], elem_,
              context_->raw_stream()),
          "batch norm frozen backward");
    RETURN_IF_ERROR(RunBackward(args, x, dy, args.dx[0], SavedAt(args, 2), SavedAt(args, 3)));
    Remember(args, x);
    return absl::OkStatus();
  }

  absl::Status BackwardWeights(const KernelArgs& args) override {
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    RETURN_IF_ERROR(Require(args.saved, "saved"));
    const size_t expected = desc_.scale ? 2 : 1;
    if (args.dparams.size() != expected)
      return absl::InvalidArgumentError(absl::StrCat(
          what_, ": expects ", expected, " parameter gradients, got ", args.dparams.size()));
    for (void* p : args.dparams) RETURN_IF_ERROR(Require(p, "dparams"));
    void* dgamma = desc_.scale ? args.dparams[0] : nullptr;
    void* dbeta = args.dparams.back();
    const size_t bytes = static_cast<size_t>(desc_.dims.c) * sizeof(float);
    cudaStream_t stream = context_->raw_stream();
    if (fresh_ && args.training && fresh_x_ == x && fresh_dy_ == args.dy &&
        fresh_saved_ == args.saved) {
      if (dgamma != nullptr)
        RETURN_IF_ERROR(Launched(
            cudaMemcpyAsync(dgamma, SavedAt(args, 2), bytes, cudaMemcpyDeviceToDevice, stream),
            "batch norm dgamma copy"));
      return Launched(
          cudaMemcpyAsync(dbeta, SavedAt(args, 3), bytes, cudaMemcpyDeviceToDevice, stream),
          "batch norm dbeta copy");
    }
    RETURN_IF_ERROR(RequireScratch(args));
    RETURN_IF_ERROR(CheckParamsAndState(args, /*state=*/false));
    void* dgamma_out = dgamma != nullptr ? dgamma : SavedAt(args, 2);
    if (args.training && graphs_ != nullptr)
      return RunGraphBackward(args, x, args.scratch, dgamma_out, dbeta);
    ASSIGN_OR_RETURN(const void* dy, MaskedDy(args));
    return RunBackward(args, x, dy, args.scratch, dgamma_out, dbeta);
  }

 private:
  static constexpr cudnnBatchNormMode_t kMode = CUDNN_BATCHNORM_SPATIAL;

  // dx, dgamma and dbeta from the saved mean and inverse std (cuDNN's
  // gradients with respect to the statistics, i.e. training mode).
  absl::Status RunBackward(const KernelArgs& args, const void* x, const void* dy, void* dx,
                           void* dgamma, void* dbeta) {
    const float one = 1.0f, zero = 0.0f;
    BN_CUDNN(cudnnBatchNormalizationBackward(context_->cudnn, kMode, &one, &zero, &one, &zero,
                                             x_desc_, x, x_desc_, dy, x_desc_, dx, param_desc_,
                                             Gamma(args), dgamma, dbeta, desc_.epsilon,
                                             SavedAt(args, 0), SavedAt(args, 1)));
    return absl::OkStatus();
  }

  // The graphs for NHWC training where the backend allows them and an engine
  // builds; otherwise graphs_ stays null (no_graph_ says why, when it was
  // tried). Out of memory is an error either way.
  absl::Status TryGraphs(const KernelOptions& options) {
    if (!geometry_.nhwc || !context_->options.batch_norm_graphs) return absl::OkStatus();
    const Dims4& d = desc_.dims;
    BnProblem problem;
    problem.n = d.n;
    problem.c = d.c;
    problem.h = d.h;
    problem.w = d.w;
    problem.nhwc = true;
    problem.io_type = options.dtype;
    problem.relu = graph_relu();
    problem.epsilon = desc_.epsilon;
    problem.momentum = desc_.momentum;
    problem.deterministic = context_->options.deterministic;
    problem.runtime_compiled_attempts = RuntimeCompiledAttemptsOf(*context_);
    problem.runtime_compiled_budget = RuntimeCompiledBudgetOf(*context_);
    problem.plan_choices = PlanChoicesOf(*context_);
    problem.what = what_;
    // Layers of one shape share the graphs (and a failure to build them):
    // building runs cuDNN's heuristics and may compile kernels at run time.
    const std::string key = absl::StrCat(what_, "/", DTypeName(options.dtype));
    std::lock_guard<std::mutex> lock(context_->shared_mutex);
    if (context_->bn_graphs == nullptr) context_->bn_graphs = std::make_shared<BnGraphCache>();
    auto found = context_->bn_graphs->built.find(key);
    if (found == context_->bn_graphs->built.end()) {
      BnGraphCache::Built built;
      absl::StatusOr<std::unique_ptr<BnGraphs>> graphs = BnGraphs::Validate(problem);
      absl::Status status = graphs.status();
      if (graphs.ok()) status = (*graphs)->ChoosePlans(context_->cudnn);
      // Not kept: another try may fit, or come before the deadline.
      if (IsOutOfMemory(status) || IsCompileDeadline(status)) return status;
      if (status.ok()) {
        built.graphs = *std::move(graphs);
      } else {
        // The reason, shortened, for the label.
        built.no_graph = std::string(status.message().substr(0, 160));
      }
      found = context_->bn_graphs->built.emplace(key, std::move(built)).first;
    }
    graphs_ = found->second.graphs;
    no_graph_ = found->second.no_graph;
    return absl::OkStatus();
  }

  absl::Status RunGraphBackward(const KernelArgs& args, const void* x, void* dx, void* dgamma,
                                void* dbeta) {
    RETURN_IF_ERROR(RequireScratch(args));
    if (fused_activation()) RETURN_IF_ERROR(Require(args.y, "y"));
    BnBackwardBuffers b;
    b.dy = args.dy;
    // ReLU6 (the graphs know ReLU alone): dy masked before the graph.
    if (!graph_relu()) {
      ASSIGN_OR_RETURN(b.dy, MaskedDy(args));
    }
    b.x = x;
    b.y = args.y;
    b.scale = Gamma(args);
    b.mean = SavedAt(args, 0);
    b.inv_variance = SavedAt(args, 1);
    b.relu_mask = ReluMask(args);
    b.dx = dx;
    b.dscale = dgamma;
    b.dbias = dbeta;
    return graphs_->Backward(context_->cudnn, b, Workspace(args));
  }

  // What the last BackwardData left in saved (dgamma, dbeta), and for which call.
  void Remember(const KernelArgs& args, const void* x) {
    fresh_ = true;
    fresh_x_ = x;
    fresh_dy_ = args.dy;
    fresh_saved_ = args.saved;
  }

  // The mask form's mask in saved (nullptr for the other forms).
  void* ReluMask(const KernelArgs& args) const {
    if (graphs_ == nullptr || graphs_->relu_mask_bytes() == 0) return nullptr;
    return static_cast<char*>(args.saved) + mask_offset_;
  }

  void* Workspace(const KernelArgs& args) const {
    return static_cast<char*>(args.scratch) + workspace_offset_;
  }

  // With _relu or _relu6: y = f(y) in place (ActivationForward).
  absl::Status ActivateInPlace(void* y) {
    if (!fused_activation()) return absl::OkStatus();
    return Launched(LaunchActivationForward(desc_.activation, y, y, elem_, desc_.dims.elements(),
                                            context_->raw_stream()),
                    "batch norm activation");
  }

  // The gradient the normalisation sees: dy, or with an activation dy masked
  // where it passes at y (ActivationPasses on the output: ReLU y > 0, ReLU6
  // 0 < y < 6), written into the second scratch region.
  absl::StatusOr<const void*> MaskedDy(const KernelArgs& args) {
    if (!fused_activation()) return args.dy;
    RETURN_IF_ERROR(Require(args.y, "y"));
    RETURN_IF_ERROR(RequireScratch(args));
    void* masked = static_cast<char*>(args.scratch) + activation_bytes_;
    RETURN_IF_ERROR(
        Launched(LaunchActivationBackward(desc_.activation, args.y, args.dy, masked, elem_,
                                          desc_.dims.elements(), context_->raw_stream()),
                 "batch norm activation backward"));
    return static_cast<const void*>(masked);
  }

  absl::Status CheckParamsAndState(const KernelArgs& args, bool state = true) const {
    const size_t params = desc_.scale ? 2 : 1;
    if (args.params.size() != params)
      return absl::InvalidArgumentError(
          absl::StrCat(what_, ": expects ", params, " parameters, got ", args.params.size()));
    for (void* p : args.params) RETURN_IF_ERROR(Require(p, "parameter"));
    if (!state) return absl::OkStatus();
    if (args.state.size() != 2 || args.state[0] == nullptr || args.state[1] == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(what_, ": expects running mean and variance"));
    return absl::OkStatus();
  }

  const void* Gamma(const KernelArgs& args) const {
    return desc_.scale ? args.params[0] : ones_.data();
  }
  // Saved vector i: 0 mean, 1 inverse std, 2 dgamma, 3 dbeta.
  void* SavedAt(const KernelArgs& args, int i) const {
    return static_cast<char*>(args.saved) + static_cast<size_t>(i) * vector_bytes_;
  }

  // A fused ReLU or ReLU6 (CheckSupported refuses every other kind here).
  bool fused_activation() const { return desc_.activation != ActivationKind::kNone; }
  // Whether the graphs run the activation themselves: ReLU alone (their
  // pointwise ops); a ReLU6 is clipped and masked around them.
  bool graph_relu() const { return desc_.activation == ActivationKind::kRelu; }
  const BatchNormDesc desc_;
  ActivationGeometry geometry_;
  Elem elem_ = Elem::kF32;
  cudnnTensorDescriptor_t x_desc_ = nullptr;      // x, y, dy, dx
  cudnnTensorDescriptor_t param_desc_ = nullptr;  // (1,C,1,1) fp32
  size_t vector_bytes_ = 0;
  size_t mask_offset_ = 0;       // into saved: the mask form's ReLU mask
  size_t activation_bytes_ = 0;  // one scratch region
  size_t workspace_offset_ = 0;  // of the graphs' workspace in scratch
  std::shared_ptr<const BnGraphs> graphs_;
  std::string no_graph_;  // why graphs_ is null, when they were tried
  Buffer ones_;           // gamma of `_noscale`
  // What the last BackwardData left in saved (dgamma, dbeta) and for which call.
  bool fresh_ = false;
  const void* fresh_x_ = nullptr;
  const void* fresh_dy_ = nullptr;
  const void* fresh_saved_ = nullptr;
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const BatchNormDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<BatchNormKernel>(std::move(context), desc, options, inputs);
}

}  // namespace cnnbench::cuda
