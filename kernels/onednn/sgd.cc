// The fused SGD-with-momentum update: one pass over the flat fp32
// parameters, per element in double as the reference (so both backends
// agree to the bit), split over the OpenMP team oneDNN uses, in cache-line
// chunks, and compiled for AVX-512, AVX2 and the baseline (the library is
// built for the baseline; the loader picks the CPU's best). The update is
// memory-bound: five fp32 streams (w, g, v read; w, v written), 20 bytes a
// parameter, a fifth of AlexNet's step on one thread of this VM. bf16
// working copies (UpdateArgs::bf16_copies) are written in the same pass:
// each tile of masters is rounded while it is still in cache, so a copy
// costs its 2-byte write rather than a second pass reading the masters.
#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/onednn/masked_sum.h"
#include "kernels/onednn/ops.h"

namespace cnnbench {
namespace onednn {
namespace {

struct SgdScalars {
  double learning_rate, momentum, weight_decay, inverse_scale;
};

// g' = g/scale + wd*w;  w -= lr*g'.
__attribute__((target_clones("avx512f", "avx2", "default"))) void Plain(float* __restrict w,
                                                                        const float* __restrict g,
                                                                        SgdScalars s, int64_t begin,
                                                                        int64_t end) {
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) {
    const double wi = w[i];
    w[i] = static_cast<float>(
        wi - s.learning_rate * (static_cast<double>(g[i]) * s.inverse_scale + s.weight_decay * wi));
  }
}

// g' = g/scale + wd*w;  v = m*v + g';  w -= lr*v.
__attribute__((target_clones("avx512f", "avx2", "default"))) void WithMomentum(
    float* __restrict w, const float* __restrict g, float* __restrict v, SgdScalars s,
    int64_t begin, int64_t end) {
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) {
    const double wi = w[i];
    const double step = s.momentum * static_cast<double>(v[i]) +
                        (static_cast<double>(g[i]) * s.inverse_scale + s.weight_decay * wi);
    v[i] = static_cast<float>(step);
    w[i] = static_cast<float>(wi - s.learning_rate * step);
  }
}

// Below this many parameters one thread does it (waking the team costs more).
constexpr int64_t kParallelFrom = 1 << 16;
// Masters updated per tile before the tile's bf16 copies are written: 16 KiB
// of each fp32 stream, whole cache lines.
constexpr int64_t kTile = 4096;

// Rounds masters [begin, end) into the copies that hold them. `copies` is
// sorted by offset and disjoint; `next` is the first copy that may still
// overlap [begin, ...), and moves on as tiles go by.
void WriteCopies(const float* w, const Bf16Copy* copies, int num_copies, int* next, int64_t begin,
                 int64_t end) {
  for (int c = *next; c < num_copies; ++c) {
    const Bf16Copy& copy = copies[c];
    if (copy.offset >= end) return;
    const int64_t lo = std::max(begin, copy.offset);
    const int64_t hi = std::min(end, copy.offset + copy.count);
    if (lo < hi) ConvertF32ToBf16Run(w + copy.offset, copy.data, lo - copy.offset, hi - copy.offset);
    if (copy.offset + copy.count <= end) *next = c + 1;
  }
}

class SgdOptimizer : public Optimizer {
 public:
  explicit SgdOptimizer(const SgdDesc& desc) : desc_(desc) {}

  bool WritesBf16Copies() const override { return true; }

  absl::Status Update(const UpdateArgs& args) override {
    ASSIGN_OR_RETURN(const CpuUpdatePlan plan,
                     PrepareCpuUpdate(desc_, args, /*writes_bf16_copies=*/true));
    if (plan.skip) return absl::OkStatus();
    const SgdScalars s = {desc_.learning_rate, desc_.momentum, desc_.weight_decay,
                          plan.inverse_scale};
    float* w = args.params;
    const float* g = args.grads;
    float* v = args.momentum;
    const int64_t count = desc_.count;
    auto update = [&](int64_t begin, int64_t end) {
      if (s.momentum == 0.0) {
        Plain(w, g, s, begin, end);
      } else {
        WithMomentum(w, g, v, s, begin, end);
      }
    };
    const Bf16Copy* copies = args.bf16_copies;
    const int num_copies = args.num_bf16_copies;
    auto run = [&](int64_t begin, int64_t end) {
      if (begin >= end) return;
      if (num_copies == 0) return update(begin, end);
      // The first copy ending after `begin`.
      int next = static_cast<int>(
          std::upper_bound(copies, copies + num_copies, begin,
                           [](int64_t at, const Bf16Copy& c) { return at < c.offset + c.count; }) -
          copies);
      for (int64_t tile = begin; tile < end; tile += kTile) {
        const int64_t tile_end = std::min(end, tile + kTile);
        update(tile, tile_end);
        WriteCopies(w, copies, num_copies, &next, tile, tile_end);
      }
    };
    if (count < kParallelFrom) {
      run(0, count);
      return absl::OkStatus();
    }
#pragma omp parallel
    {
      const auto [begin, end] = ThreadChunk(count, 64 / static_cast<int64_t>(sizeof(float)),
                                            omp_get_thread_num(), omp_get_num_threads());
      run(begin, end);
    }
    return absl::OkStatus();
  }

 private:
  const SgdDesc desc_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Optimizer>> CreateSgd(const SgdDesc& desc) {
  return std::unique_ptr<Optimizer>(new SgdOptimizer(desc));
}

}  // namespace onednn
}  // namespace cnnbench
