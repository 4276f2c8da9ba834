// Layer normalisation over the channels of each (n, h, w) (oneDNN 2.6's
// layer_normalization normalises the innermost dimension of a plain
// tensor, so a channel-blocked producer would need a reorder on both
// sides): the backend's own loops over the input's layout as given (plain
// NCHW, NHWC, or channels blocked by 8 or 16), y in the same layout, gamma
// and beta fp32. Parallel over the rows (n, h); each row keeps its W
// positions' sums, so a blocked layout is read block by block in stride.
// fp32 arithmetic on fp32 and bf16, two passes for the statistics; the
// mean and 1/sqrt(var + eps) of every position are saved (fp32). Backward:
// dx from the two sums over the channels (kernels/layer_norm.h), dgamma and
// dbeta from per-thread sums over the positions, added in double. No call
// allocates: the forward sums into the kept statistics, and the backward's
// per-thread sums are made with the kernel.
#include "kernels/layer_norm.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/status.h"
#include "kernels/onednn/layer_norm_loops.h"
#include "kernels/onednn/layout_walk.h"
#include "kernels/onednn/masked_sum.h"
#include "kernels/onednn/ops.h"

namespace cnnbench {
namespace onednn {
namespace {

using dnnl::memory;

// Calls f(at, c, w) for every stored element of row (n, h) with a real
// channel (padding channels of a blocked layout are skipped), block by
// block.
template <typename F>
inline void ForRow(const LayoutWalk& k, int64_t n, int64_t h, const F& f) {
  for (int64_t cb = 0; cb < k.blocks(); ++cb) {
    const int64_t lanes = std::min(k.block, k.c - cb * k.block);
    for (int64_t w = 0; w < k.w; ++w) {
      const int64_t at = k.at(n, cb, h, w);
      for (int64_t j = 0; j < lanes; ++j) f(at + j, cb * k.block + j, w);
    }
  }
}

// dgamma[c] and dbeta[c]: the threads' sums (per thread 2 * C doubles,
// dgamma's then dbeta's) added in double.
void AddThreadSums(const double* sums, int threads, int64_t channels, float* dgamma, float* dbeta) {
  for (int64_t c = 0; c < channels; ++c) {
    double g = 0, b = 0;
    for (int t = 0; t < threads; ++t) {
      g += sums[static_cast<size_t>(t) * 2 * channels + c];
      b += sums[static_cast<size_t>(t) * 2 * channels + channels + c];
    }
    dgamma[c] = static_cast<float>(g);
    dbeta[c] = static_cast<float>(b);
  }
}

template <typename T>
void NormForward(const LayoutWalk& k, float epsilon, const void* in, const float* gamma,
                 const float* beta, void* out, float* mean_out, float* rstd_out) {
  const T* x = static_cast<const T*>(in);
  T* y = static_cast<T*>(out);
  const int64_t rows = k.n * k.h;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = r / k.h, h = r % k.h;
    // The row's statistics are summed where they are kept.
    float* mean = mean_out + r * k.w;
    float* rstd = rstd_out + r * k.w;
    std::fill(mean, mean + k.w, 0.0f);
    std::fill(rstd, rstd + k.w, 0.0f);
    ForRow(k, n, h, [&](int64_t at, int64_t, int64_t w) { mean[w] += LoadValue(x + at); });
    for (int64_t w = 0; w < k.w; ++w) mean[w] /= static_cast<float>(k.c);
    ForRow(k, n, h, [&](int64_t at, int64_t, int64_t w) {
      const float d = LoadValue(x + at) - mean[w];
      rstd[w] += d * d;
    });
    for (int64_t w = 0; w < k.w; ++w)
      rstd[w] = 1.0f / std::sqrt(rstd[w] / static_cast<float>(k.c) + epsilon);
    ForRow(k, n, h, [&](int64_t at, int64_t c, int64_t w) {
      StoreValue(y + at, LayerNormOutput(LoadValue(x + at), mean[w], rstd[w], gamma[c], beta[c]));
    });
    // A blocked layout's padding channels stay 0, as oneDNN's do.
    if (k.c % k.block != 0) {
      const int64_t cb = k.blocks() - 1;
      for (int64_t w = 0; w < k.w; ++w)
        for (int64_t j = k.c - cb * k.block; j < k.block; ++j)
          StoreValue(y + k.at(n, cb, h, w) + j, 0.0f);
    }
  }
}

template <typename T>
void InputGradient(const LayoutWalk& k, const void* x_in, const void* dy_in, const float* gamma,
                   const float* mean, const float* rstd, void* dx_out, int threads, float* work) {
  const T* x = static_cast<const T*>(x_in);
  const T* dy = static_cast<const T*>(dy_in);
  T* dx = static_cast<T*>(dx_out);
  const int64_t rows = k.n * k.h;
#pragma omp parallel num_threads(threads)
  {
    float* sum_g = work + static_cast<size_t>(omp_get_thread_num()) * 2 * k.w;
    float* sum_g_xhat = sum_g + k.w;
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t n = r / k.h, h = r % k.h;
      const float* m = mean + r * k.w;
      const float* s = rstd + r * k.w;
      std::fill(sum_g, sum_g + k.w, 0.0f);
      std::fill(sum_g_xhat, sum_g_xhat + k.w, 0.0f);
      ForRow(k, n, h, [&](int64_t at, int64_t c, int64_t w) {
        const float g = LoadValue(dy + at) * gamma[c];
        sum_g[w] += g;
        sum_g_xhat[w] += g * (LoadValue(x + at) - m[w]) * s[w];
      });
      ForRow(k, n, h, [&](int64_t at, int64_t c, int64_t w) {
        StoreValue(dx + at, LayerNormInputGradient(k.c, LoadValue(x + at), LoadValue(dy + at),
                                                   gamma[c], m[w], s[w], sum_g[w], sum_g_xhat[w]));
      });
      if (k.c % k.block != 0) {
        const int64_t cb = k.blocks() - 1;
        for (int64_t w = 0; w < k.w; ++w)
          for (int64_t j = k.c - cb * k.block; j < k.block; ++j)
            StoreValue(dx + k.at(n, cb, h, w) + j, 0.0f);
      }
    }
  }
}

template <typename T>
void ParamGradients(const LayoutWalk& k, const void* x_in, const void* dy_in, const float* mean,
                    const float* rstd, float* dgamma, float* dbeta, int threads, float* work,
                    double* sums) {
  const T* x = static_cast<const T*>(x_in);
  const T* dy = static_cast<const T*>(dy_in);
  const int64_t rows = k.n * k.h;
  std::fill(sums, sums + static_cast<size_t>(threads) * 2 * k.c, 0.0);
#pragma omp parallel num_threads(threads)
  {
    double* mine = sums + static_cast<size_t>(omp_get_thread_num()) * 2 * k.c;
    float* row = work + static_cast<size_t>(omp_get_thread_num()) * 2 * k.c;
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t n = r / k.h, h = r % k.h;
      std::fill(row, row + 2 * k.c, 0.0f);
      ForRow(k, n, h, [&](int64_t at, int64_t c, int64_t w) {
        const float g = LoadValue(dy + at);
        row[c] += g * (LoadValue(x + at) - mean[r * k.w + w]) * rstd[r * k.w + w];
        row[k.c + c] += g;
      });
      for (int64_t i = 0; i < 2 * k.c; ++i) mine[i] += row[i];
    }
  }
  AddThreadSums(sums, threads, k.c, dgamma, dbeta);
}

// The rows of a layout blocked by 8 or 16 channels with no padding channels
// (layer_norm_loops.h): fp32 read in place, bf16 widened segment by segment
// into the thread's staging (x, dy, then the output) and narrowed back.
class BlockedRows {
 public:
  // Whether `k` has such rows; sets them up for `threads` threads.
  bool Init(const LayoutWalk& k, DType dtype, int threads) {
    if ((k.block != 8 && k.block != 16) || k.c % k.block != 0 || k.stride[3] != k.block)
      return false;
    walk_ = k;
    bf16_ = dtype == DType::kBF16;
    row_.blocks = k.blocks();
    row_.width = k.w;
    row_.lanes = k.block;
    row_.x_stride = row_.y_stride = bf16_ ? k.w * k.block : k.stride[1];
    const int64_t row_elements = k.c * k.w;
    per_thread_ = NormRowAccumulators(row_) + 2 * k.c + (bf16_ ? 3 * row_elements : 0);
    work_.assign(static_cast<size_t>(threads) * per_thread_, 0.0f);
    sums_.assign(static_cast<size_t>(threads) * 2 * k.c, 0.0);
    threads_ = threads;
    return true;
  }

  void Forward(const void* x, void* y, const float* gamma, const float* beta, float epsilon,
               float* mean, float* rstd) {
    const LayoutWalk& k = walk_;
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (int64_t r = 0; r < k.n * k.h; ++r) {
      const int64_t n = r / k.h, h = r % k.h, at = k.at(n, 0, h, 0);
      Thread t = ThreadWork(omp_get_thread_num());
      if (!bf16_) {
        LayerNormRowForward(row_, static_cast<const float*>(x) + at, static_cast<float*>(y) + at,
                            gamma, beta, epsilon, mean + r * k.w, rstd + r * k.w, t.acc);
        continue;
      }
      Widen(x, at, t.x);
      LayerNormRowForward(row_, t.x, t.out, gamma, beta, epsilon, mean + r * k.w, rstd + r * k.w,
                          t.acc);
      Narrow(t.out, at, y);
    }
  }

  // dx where it is not null, and dgamma and dbeta (fp32 sums per row,
  // added per thread in double, then over the threads).
  void Backward(const void* x, const void* dy, void* dx, const float* gamma, const float* mean,
                const float* rstd, float* dgamma, float* dbeta) {
    const LayoutWalk& k = walk_;
    std::fill(sums_.begin(), sums_.end(), 0.0);
#pragma omp parallel num_threads(threads_)
    {
      const int thread = omp_get_thread_num();
      Thread t = ThreadWork(thread);
      double* mine = sums_.data() + static_cast<size_t>(thread) * 2 * k.c;
#pragma omp for schedule(static)
      for (int64_t r = 0; r < k.n * k.h; ++r) {
        const int64_t n = r / k.h, h = r % k.h, at = k.at(n, 0, h, 0);
        std::fill(t.params, t.params + 2 * k.c, 0.0f);
        if (!bf16_) {
          LayerNormRowBackward(row_, static_cast<const float*>(x) + at,
                               static_cast<const float*>(dy) + at,
                               dx != nullptr ? static_cast<float*>(dx) + at : nullptr, gamma,
                               mean + r * k.w, rstd + r * k.w, t.params, t.params + k.c, t.acc);
        } else {
          Widen(x, at, t.x);
          Widen(dy, at, t.dy);
          LayerNormRowBackward(row_, t.x, t.dy, dx != nullptr ? t.out : nullptr, gamma,
                               mean + r * k.w, rstd + r * k.w, t.params, t.params + k.c, t.acc);
          if (dx != nullptr) Narrow(t.out, at, dx);
        }
        for (int64_t i = 0; i < 2 * k.c; ++i) mine[i] += t.params[i];
      }
    }
    AddThreadSums(sums_.data(), threads_, k.c, dgamma, dbeta);
  }

 private:
  struct Thread {
    float* acc;
    float* params;  // dgamma's then dbeta's row sums
    float* x;
    float* dy;
    float* out;
  };
  Thread ThreadWork(int thread) {
    float* base = work_.data() + static_cast<size_t>(thread) * per_thread_;
    Thread t;
    t.acc = base;
    t.params = t.acc + NormRowAccumulators(row_);
    t.x = t.params + 2 * walk_.c;
    t.dy = t.x + walk_.c * walk_.w;
    t.out = t.dy + walk_.c * walk_.w;
    return t;
  }
  // Row (n, h) at `at`, segment by segment, between bf16 and the staging.
  void Widen(const void* from, int64_t at, float* to) const {
    const int64_t run = walk_.w * walk_.block;
    for (int64_t cb = 0; cb < walk_.blocks(); ++cb)
      ConvertBf16ToF32Run(static_cast<const uint16_t*>(from) + at + cb * walk_.stride[1],
                          to + cb * run, 0, run);
  }
  void Narrow(const float* from, int64_t at, void* to) const {
    const int64_t run = walk_.w * walk_.block;
    for (int64_t cb = 0; cb < walk_.blocks(); ++cb)
      ConvertF32ToBf16Run(from + cb * run, static_cast<uint16_t*>(to) + at + cb * walk_.stride[1],
                          0, run);
  }

  LayoutWalk walk_;
  NormRow row_;
  bool bf16_ = false;
  int threads_ = 1;
  int64_t per_thread_ = 0;
  std::vector<float> work_;
  std::vector<double> sums_;
};

class LayerNormKernel : public OneDnnKernel {
 public:
  LayerNormKernel(std::shared_ptr<Context> context, const LayerNormDesc& desc)
      : OneDnnKernel(std::move(context), desc.ToString()), desc_(desc) {}

  absl::Status Init(const LayerNormDesc& d, const KernelOptions& options, const Inputs& inputs) {
    RETURN_IF_ERROR(CheckInputCount(inputs, 1, what_));
    const DType dtype = options.dtype;
    ASSIGN_OR_RETURN(const TensorSpec input, WalkedInput(inputs, dtype, d.dims, what_, &walk_));
    const Shape channels{d.dims.c};
    signature_.inputs = {input};
    signature_.output = input;
    signature_.params = {TensorSpec::Plain(DType::kF32, channels),
                         TensorSpec::Plain(DType::kF32, channels)};
    signature_.saved_bytes = 2 * static_cast<size_t>(d.positions()) * sizeof(float);
    signature_.scratch_bytes = signature_.saved_bytes;  // inference's statistics
    signature_.backward_reads_inputs = true;
    signature_.backward_reads_output = false;
    dtype_ = dtype;
    // Each thread's sums in the backward passes, made here so that no call
    // allocates (a row's W positions, or the C channels' two sums).
    threads_ = std::max(1, omp_get_max_threads());
    const size_t per_thread = static_cast<size_t>(2 * std::max(d.dims.w, d.dims.c));
    work_.assign(static_cast<size_t>(threads_) * per_thread, 0.0f);
    sums_.assign(static_cast<size_t>(threads_) * 2 * d.dims.c, 0.0);
    blocked_ = rows_.Init(walk_, dtype, threads_);
    dgamma_.assign(d.dims.c, 0.0f);
    dbeta_.assign(d.dims.c, 0.0f);
    implementation_ = blocked_ ? "cnnbench:lnorm_blocked" : "cnnbench:lnorm";
    return absl::OkStatus();
  }

  absl::Status Forward(const KernelArgs& args) override {
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    RETURN_IF_ERROR(Require(args.y, "y"));
    ASSIGN_OR_RETURN(const float* gamma, ParamAt(args.params, 0, "params[0] (gamma)"));
    ASSIGN_OR_RETURN(const float* beta, ParamAt(args.params, 1, "params[1] (beta)"));
    // Inference gives no saved memory: the statistics go to the scratch.
    float* mean = static_cast<float*>(args.saved != nullptr ? args.saved : args.scratch);
    RETURN_IF_ERROR(Require(mean, "saved or scratch"));
    float* rstd = mean + desc_.positions();
    const float epsilon = static_cast<float>(desc_.epsilon);
    ++forward_count_;
    if (blocked_) {
      rows_.Forward(x, args.y, gamma, beta, epsilon, mean, rstd);
    } else if (dtype_ == DType::kBF16) {
      NormForward<uint16_t>(walk_, epsilon, x, gamma, beta, args.y, mean, rstd);
    } else {
      NormForward<float>(walk_, epsilon, x, gamma, beta, args.y, mean, rstd);
    }
    return absl::OkStatus();
  }

  absl::Status BackwardData(const KernelArgs& args) override {
    if (args.dx.empty() || args.dx[0] == nullptr) return absl::OkStatus();
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    RETURN_IF_ERROR(Require(args.saved, "saved"));
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    ASSIGN_OR_RETURN(const float* gamma, ParamAt(args.params, 0, "params[0] (gamma)"));
    const float* mean = static_cast<const float*>(args.saved);
    const float* rstd = mean + desc_.positions();
    if (blocked_) {  // dgamma and dbeta in the same pass, kept for BackwardWeights
      rows_.Backward(x, args.dy, args.dx[0], gamma, mean, rstd, dgamma_.data(), dbeta_.data());
      done_ = {forward_count_, x, args.dy, args.saved};
    } else if (dtype_ == DType::kBF16) {
      InputGradient<uint16_t>(walk_, x, args.dy, gamma, mean, rstd, args.dx[0], threads_,
                              work_.data());
    } else {
      InputGradient<float>(walk_, x, args.dy, gamma, mean, rstd, args.dx[0], threads_,
                           work_.data());
    }
    return absl::OkStatus();
  }

  absl::Status BackwardWeights(const KernelArgs& args) override {
    RETURN_IF_ERROR(Require(args.dy, "dy"));
    RETURN_IF_ERROR(Require(args.saved, "saved"));
    ASSIGN_OR_RETURN(const void* x, Input(args, 0));
    ASSIGN_OR_RETURN(float* dgamma, ParamAt(args.dparams, 0, "dparams[0] (dgamma)"));
    ASSIGN_OR_RETURN(float* dbeta, ParamAt(args.dparams, 1, "dparams[1] (dbeta)"));
    const float* mean = static_cast<const float*>(args.saved);
    const float* rstd = mean + desc_.positions();
    if (blocked_) {
      const BackwardRecord now = {forward_count_, x, args.dy, args.saved};
      if (!(done_ == now)) {
        ASSIGN_OR_RETURN(const float* gamma, ParamAt(args.params, 0, "params[0] (gamma)"));
        rows_.Backward(x, args.dy, nullptr, gamma, mean, rstd, dgamma_.data(), dbeta_.data());
        done_ = now;
      }
      std::copy(dgamma_.begin(), dgamma_.end(), dgamma);
      std::copy(dbeta_.begin(), dbeta_.end(), dbeta);
    } else if (dtype_ == DType::kBF16) {
      ParamGradients<uint16_t>(walk_, x, args.dy, mean, rstd, dgamma, dbeta, threads_, work_.data(),
                               sums_.data());
    } else {
      ParamGradients<float>(walk_, x, args.dy, mean, rstd, dgamma, dbeta, threads_, work_.data(),
                            sums_.data());
    }
    return absl::OkStatus();
  }

 private:
  static absl::StatusOr<float*> ParamAt(const std::vector<void*>& list, size_t i,
                                        const char* name) {
    if (i >= list.size() || list[i] == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(name, " is missing"));
    return static_cast<float*>(list[i]);
  }

  const LayerNormDesc desc_;
  LayoutWalk walk_;
  DType dtype_ = DType::kF32;
  int threads_ = 1;           // the team the backward loops run on
  std::vector<float> work_;   // per thread: 2 * max(W, C) floats
  std::vector<double> sums_;  // per thread: 2 * C (dgamma, dbeta)
  // A blocked layout without padding channels: the vectorised rows, whose
  // backward makes dx, dgamma and dbeta in one pass over x and dy.
  bool blocked_ = false;
  BlockedRows rows_;
  std::vector<float> dgamma_, dbeta_;
  int64_t forward_count_ = 0;
  BackwardRecord done_;
};

}  // namespace

KernelOr CreateOp(ContextPtr context, const LayerNormDesc& desc, const KernelOptions& options,
                  const Inputs& inputs) {
  return MakeKernel<LayerNormKernel>(std::move(context), desc, options, inputs);
}

}  // namespace onednn
}  // namespace cnnbench
