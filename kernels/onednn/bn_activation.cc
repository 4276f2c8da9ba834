// Batch normalization with a fused activation whose gradient needs its
// input (sigmoid, SiLU, hard-sigmoid, hard-swish, GELU), which oneDNN
// 2.6.3's batch norm does not fuse (fuse_norm_relu is ReLU alone): the
// backend's own loops (bn_activation_loops.h) over the input's layout as
// given (plain, NHWC, channels blocked by 8 or 16), in training and
// inference. What the fusion saves against a batch norm and an activation
// layer: the normalised tensor is never written or read. Forward: a pass
// of statistics (sums of x - x0[c], x0 the channel's first element, in
// double), then z = f((x - mean) gamma rstd + beta) in one pass. Backward:
// its first pass recomputes the pre-activation from x and the saved mean
// and 1/sqrt(var + eps) and sums g and g (x - mean), g = dz f'(u), keeping
// g in dx; the second makes dx from g and x. gamma, beta and the
// statistics fp32; the running statistics updated as the oneDNN batch
// norm does (TensorFlow's unbiased variance).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/onednn/bn_activation_loops.h"
#include "kernels/onednn/layout_walk.h"
#include "kernels/onednn/ops.h"

namespace cnnbench {
namespace onednn {
namespace {

// The runs of a walked layout whose positions are dense (H * W positions of
// `lanes` channels each, back to back), or false.
bool MakeRuns(const LayoutWalk& k, ChannelRuns* runs) {
  const int64_t positions = k.h * k.w;
  if (k.block > 1) {  // a run per (n, channel block)
    if (k.stride[3] != k.block || k.stride[2] != k.w * k.block) return false;
    *runs = {k.n * k.blocks(), k.blocks(),  positions,           k.block,
             k.stride[1],      k.stride[0], k.blocks() * k.block};
    return true;
  }
  if (k.stride[1] == 1 && k.stride[3] == k.c && k.stride[2] == k.w * k.c) {  // NHWC
    *runs = {k.n, 1, positions, k.c, 0, k.stride[0], k.c};
    return true;
  }
  if (k.stride[3] == 1 && k.stride[2] == k.w) {  // NCHW: a run per (n, c)
    *runs = {k.n * k.c, k.c, positions, 1, k.stride[1], k.stride[0], k.c};
    return true;
  }
  return false;
}

class BatchNormActivationKernel : public OneDnnKernel {
 public:
  BatchNormActivationKernel(std::shared_ptr<Context> context, const BatchNormDesc& desc)
      : OneDnnKernel(std::move(context), desc.ToString()), desc_(desc) {}

  absl::Status Init(const BatchNormDesc& d, const KernelOptions& options, const Inputs& inputs) {
    RETURN_IF_ERROR(CheckInputCount(inputs, 1, what_));
    dtype_ = options.dtype;
    LayoutWalk walk;
    ASSIGN_OR_RETURN(TensorSpec input, WalkedInput(inputs, dtype_, d.dims, what_, &walk));
    if (!MakeRuns(walk, &runs_)) {  // strided: plain, which always runs
      ASSIGN_OR_RETURN(input, WalkedInput({}, dtype_, d.dims, what_, &walk));
      if (!MakeRuns(walk, &runs_))
        return absl::InternalError(absl::StrCat(what_, ": no dense runs in ", input.DebugString()));
    }
    const int64_t channels = runs_.channels;
    threads_ = std::max(1, omp_get_max_threads());
    work_.assign(ReductionWorkDoubles(runs_, threads_), 0.0);
    if (dtype_ == DType::kBF16) staging_.assign(StagingFloats(threads_), 0.0f);
    for (std::vector<float>* v :
         {&origin_, &scale_, &shift_, &keep_, &a_, &b_, &d_, &mean_, &rstd_})
      v->assign(channels, 0.0f);
    for (int64_t c = 0; c < d.dims.c; ++c) keep_[c] = 1.0f;
    sum0_.assign(channels, 0.0);
    sum1_.assign(channels, 0.0);

    const Shape per_channel{d.dims.c};
    signature_.inputs = {input};
    signature_.output = input;
    for (int i = d.scale ? 0 : 1; i < 2; ++i)
      signature_.params.push_back(TensorSpec::Plain(DType::kF32, per_channel));
    signature_.state = {TensorSpec::Plain(DType::kF32, per_channel),
                        TensorSpec::Plain(DType::kF32, per_channel)};
    // saved: mean, 1/sqrt(var + eps), then dgamma and dbeta from
    // BackwardData's pass for BackwardWeights to copy.
    stats_bytes_ = AlignUp(sizeof(float) * d.dims.c);
    signature_.saved_bytes = 4 * stats_bytes_;
    signature_.backward_reads_inputs = true;   // u is recomputed from x
    signature_.backward_reads_output = false;  // z is not kept
    // An output read by two layers (squeeze-and-excitation's features: the
    // pool and the channel multiply) hands both gradients to the first
    // backward pass, which adds them as it reads them: no summing pass.
    signature_.sums_output_gradient = true;
    signature_.max_output_gradient_parts = 2;
    implementation_ = absl::StrCat("cnnbench:bn", ActivationSuffix(d.activation));
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    const BatchNormDesc& d = desc_;
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.y, "y"));
    ASSIGN_OR_RETURN(Params p, ParamsOf(args.params, false));
    ASSIGN_OR_RETURN(void* running_mean_ptr, Param(args.state, 0, "running_mean"));
    ASSIGN_OR_RETURN(void* running_var_ptr, Param(args.state, 1, "running_var"));
    float* running_mean = static_cast<float*>(running_mean_ptr);
    float* running_var = static_cast<float*>(running_var_ptr);
    ++forward_count_;
    const int64_t channels = d.dims.c;
    if (!args.training) {
      for (int64_t c = 0; c < channels; ++c) {
        SetAffine(p, c, running_mean[c], 1.0f / std::sqrt(running_var[c] + Epsilon()));
      }
      NormActivate(dtype_, d.activation, runs_, x, mean_.data(), scale_.data(), shift_.data(),
                   keep_.data(), args.y, staging_.data(), threads_);
      return absl::OkStatus();
    }
    RETURN_IF_ERROR(RequireSaved(args));
    float* mean = Saved(args, 0);
    float* rstd = Saved(args, 1);
    // Each channel's sums about its first element (no cancellation where
    // the mean is large against the spread).
    for (int64_t r = 0; r < runs_.runs_per_image; ++r)
      for (int64_t j = 0; j < runs_.lanes; ++j)
        origin_[runs_.FirstChannel(r) + j] = LoadAt(x, runs_.Start(r) + j);
    ChannelMoments(dtype_, runs_, x, origin_.data(), sum0_.data(), sum1_.data(), work_.data(),
                   staging_.data(), threads_);
    const double m = Count();
    const double unbias = m > 1 ? m / (m - 1) : 1.0;
    for (int64_t c = 0; c < channels; ++c) {
      const double shift = sum0_[c] / m;
      const double var = std::max(0.0, sum1_[c] / m - shift * shift);
      mean[c] = static_cast<float>(origin_[c] + shift);
      rstd[c] = static_cast<float>(1.0 / std::sqrt(var + d.epsilon));
      SetAffine(p, c, mean[c], rstd[c]);
      running_mean[c] =
          static_cast<float>(d.momentum * running_mean[c] + (1.0 - d.momentum) * mean[c]);
      running_var[c] =
          static_cast<float>(d.momentum * running_var[c] + (1.0 - d.momentum) * (var * unbias));
    }
    NormActivate(dtype_, d.activation, runs_, x, mean_.data(), scale_.data(), shift_.data(),
                 keep_.data(), args.y, staging_.data(), threads_);
    return absl::OkStatus();
  }

  // dx, with dgamma and dbeta kept in saved for a BackwardWeights after it
  // (same forward, x and dz) to copy.
  absl::Status BackwardData(const KernelArgs& args) override {
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    RETURN_IF_ERROR(RequireSaved(args));
    RETURN_IF_ERROR(RunBackward(args, args.dx[0], Saved(args, 2), Saved(args, 3)));
    done_ = {forward_count_, args.x[0], FirstGradient(args), args.saved};
    return absl::OkStatus();
  }

  absl::Status BackwardWeights(const KernelArgs& args) override {
    ASSIGN_OR_RETURN(Params diff, ParamsOf(args.dparams, true));
    const BackwardRecord now = {forward_count_, args.x.empty() ? nullptr : args.x[0],
                                FirstGradient(args), args.saved};
    RETURN_IF_ERROR(RequireSaved(args));
    if (!(done_ == now))
      RETURN_IF_ERROR(RunBackward(args, nullptr, Saved(args, 2), Saved(args, 3)));
    const size_t bytes = sizeof(float) * desc_.dims.c;
    if (desc_.scale) std::memcpy(diff.gamma, Saved(args, 2), bytes);
    std::memcpy(diff.beta, Saved(args, 3), bytes);
    return absl::OkStatus();
  }

 private:
  struct Params {
    float* gamma = nullptr;  // absent with _noscale
    float* beta = nullptr;
  };

  static const void* FirstGradient(const KernelArgs& args) {
    return args.dy_parts.empty() ? args.dy : args.dy_parts[0];
  }

  float Epsilon() const { return static_cast<float>(desc_.epsilon); }
  double Count() const { return static_cast<double>(desc_.dims.n) * desc_.dims.h * desc_.dims.w; }
  float Gamma(const Params& p, int64_t c) const { return p.gamma != nullptr ? p.gamma[c] : 1.0f; }

  // Vector i of saved: 0 mean, 1 1/sqrt(var + eps), 2 dgamma, 3 dbeta.
  float* Saved(const KernelArgs& args, int i) const {
    return reinterpret_cast<float*>(static_cast<char*>(args.saved) + i * stats_bytes_);
  }

  float LoadAt(const void* x, int64_t at) const {
    return dtype_ == DType::kBF16 ? LoadValue(static_cast<const uint16_t*>(x) + at)
                                  : LoadValue(static_cast<const float*>(x) + at);
  }

  // u = (x - mean) * scale + shift: the normalisation of channel c.
  void SetAffine(const Params& p, int64_t c, float mean, float rstd) {
    mean_[c] = mean;
    scale_[c] = Gamma(p, c) * rstd;
    shift_[c] = p.beta[c];
  }

  absl::StatusOr<Params> ParamsOf(const std::vector<void*>& list, bool diff) const {
    Params p;
    void* gamma = nullptr;
    void* beta = nullptr;
    if (desc_.scale) {
      ASSIGN_OR_RETURN(gamma, Param(list, 0, diff ? "dparams[0] (dgamma)" : "params[0] (gamma)"));
      ASSIGN_OR_RETURN(beta, Param(list, 1, diff ? "dparams[1] (dbeta)" : "params[1] (beta)"));
    } else {
      ASSIGN_OR_RETURN(beta, Param(list, 0, diff ? "dparams[0] (dbeta)" : "params[0] (beta)"));
    }
    p.gamma = static_cast<float*>(gamma);
    p.beta = static_cast<float*>(beta);
    return p;
  }

  // The sums (dgamma, dbeta into their saved vectors) and, where dx is
  // given, dx. With frozen statistics (not training) u is an affine map of
  // x alone: dx = gamma rstd g.
  absl::Status RunBackward(const KernelArgs& args, void* dx, float* dgamma, float* dbeta) {
    const BatchNormDesc& d = desc_;
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    ASSIGN_OR_RETURN(Params p, ParamsOf(args.params, false));
    // The output gradient: dy, or dz + dz2 given as parts.
    const void* dz = args.dy;
    const void* dz2 = nullptr;
    if (!args.dy_parts.empty()) {
      if (args.dy_parts.size() > 2)
        return absl::InvalidArgumentError(absl::StrCat(
            what_, ": given ", args.dy_parts.size(), " output gradient parts; it takes 2 at most"));
      dz = args.dy_parts[0];
      if (args.dy_parts.size() == 2) {
        dz2 = args.dy_parts[1];
        RETURN_IF_ERROR(Require(dz2, "dy_parts[1]"));
      }
    }
    RETURN_IF_ERROR(Require(dz, args.dy_parts.empty() ? "dy" : "dy_parts[0]"));
    const float* mean = Saved(args, 0);
    const float* rstd = Saved(args, 1);
    if (!args.training) {  // rstd_ and mean_ from the running statistics
      ASSIGN_OR_RETURN(void* running_mean, Param(args.state, 0, "running_mean"));
      ASSIGN_OR_RETURN(void* running_var, Param(args.state, 1, "running_var"));
      for (int64_t c = 0; c < d.dims.c; ++c) {
        rstd_[c] = 1.0f / std::sqrt(static_cast<float*>(running_var)[c] + Epsilon());
        SetAffine(p, c, static_cast<float*>(running_mean)[c], rstd_[c]);
        a_[c] = Gamma(p, c) * rstd_[c];
        b_[c] = d_[c] = 0.0f;
      }
    } else {
      for (int64_t c = 0; c < d.dims.c; ++c) {
        rstd_[c] = rstd[c];
        SetAffine(p, c, mean[c], rstd[c]);
      }
    }
    NormActivateGradientSums(dtype_, d.activation, runs_, x, dz, dz2, scale_.data(), shift_.data(),
                             mean_.data(), dx, sum0_.data(), sum1_.data(), work_.data(),
                             staging_.data(), threads_);
    const double m = Count();
    for (int64_t c = 0; c < d.dims.c; ++c) {
      const double s = rstd_[c];
      dbeta[c] = static_cast<float>(sum0_[c]);
      dgamma[c] = static_cast<float>(sum1_[c] * s);
      if (!args.training) continue;
      // dx = gamma rstd (g - dbeta / m - xhat dgamma / m)
      //    = a g + b (x - mean) + d.
      const double a = Gamma(p, c) * s;
      a_[c] = static_cast<float>(a);
      b_[c] = static_cast<float>(-a * s * dgamma[c] / m);
      d_[c] = static_cast<float>(-a * dbeta[c] / m);
    }
    if (dx != nullptr)
      NormGradientInPlace(dtype_, runs_, x, mean_.data(), a_.data(), b_.data(), d_.data(), dx,
                          staging_.data(), threads_);
    return absl::OkStatus();
  }

  const BatchNormDesc desc_;
  DType dtype_ = DType::kF32;
  ChannelRuns runs_;
  int threads_ = 1;
  size_t stats_bytes_ = 0;
  // Per channel (a blocked layout's padding channels included, their
  // scale, shift and keep 0): made with the kernel, so no call allocates.
  std::vector<float> origin_, scale_, shift_, keep_, a_, b_, d_, mean_, rstd_;
  std::vector<double> sum0_, sum1_, work_;
  std::vector<float> staging_;  // bf16: fp32 copies of each item (bn_activation_loops.h)
  int64_t forward_count_ = 0;
  BackwardRecord done_;
};

}  // namespace

KernelOr CreateBatchNormActivation(ContextPtr context, const BatchNormDesc& desc,
                                   const KernelOptions& options, const Inputs& inputs) {
  return MakeKernel<BatchNormActivationKernel>(std::move(context), desc, options, inputs);
}

}  // namespace onednn
}  // namespace cnnbench
