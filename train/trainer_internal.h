// What the trainer's files share (trainer.cc runs steps, trainer_compile.cc
// plans them): the layer and parameter records, the buffer ids that are not
// arena buffers, and the error helpers. Internal to //train:trainer.
#ifndef CNNBENCH_TRAIN_TRAINER_INTERNAL_H_
#define CNNBENCH_TRAIN_TRAINER_INTERNAL_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "train/trainer.h"

namespace cnnbench {

// `status` with what was being done for which layer in front of its message
// (the code kept: OOM stays OOM).
inline absl::Status AtLayer(absl::string_view what, const std::string& layer,
                            const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(what, " ", layer, ": ", status.message()));
}

inline constexpr int kNoBuffer = -1;
inline constexpr int kImagesBuffer = -2;
inline constexpr int kLabelsBuffer = -3;
inline constexpr int kLossBuffer = -4;

inline size_t AlignUp(size_t bytes, size_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

inline absl::Status WithContext(const absl::Status& s, absl::string_view what) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(what, ": ", s.message()));
}


// The device-side scalars (AllocateAndBind), each in its own aligned line.
inline constexpr size_t kScalarLines = 5;

struct Trainer::Layer {
  struct Input {
    int producer = -1;       // node index
    int source = kNoBuffer;  // buffer with the producer's output
    int buffer = kNoBuffer;  // what the kernel reads (== source unless reordered)
    bool reorder = false;    // source -> buffer before Forward
    TensorSpec from, to;     // producer's spec, kernel's spec
    bool needs_grad = false;
    int grad = kNoBuffer;      // gradient in the producer's layout (one per edge)
    int grad_tmp = kNoBuffer;  // gradient in the kernel's layout, when reordered
  };
  int node = -1;
  std::string name;
  std::unique_ptr<Kernel> kernel;
  std::vector<Input> inputs;
  int y = kNoBuffer;
  int saved = kNoBuffer;
  std::vector<int> params;            // indices into params_list_
  std::vector<size_t> state_offsets;  // bytes into state_
  bool needs_grad = false;
  std::vector<int> grad_edges;           // this node's output gradient, one per consuming edge
  int dy = kNoBuffer;                    // what the backward pass reads
  std::vector<const void*> dy_parts[2];  // per slot, the edges summed into dy (bound once)
  bool any_dx = false;                   // some input needs a gradient
  int profile_index = -1;
  KernelArgs args[2];  // per input slot, bound once after allocation: a step allocates nothing
};

// One trainable tensor. The fp32 master lives in params_ at `offset` (its
// gradient in grads_, its momentum in momentum_ at the same offset), stored
// as the kernel wants it when the kernel takes fp32, else plain; a
// low-precision kernel reads a working copy (lowp_params_) and writes its
// gradient there too (lowp_grads_), which the step casts to fp32.
struct Trainer::Param {
  int layer = -1;
  int index = 0;
  TensorSpec spec;    // the kernel's
  TensorSpec master;  // the fp32 master's
  bool low_precision = false;
  size_t offset = 0;       // bytes into params_/grads_/momentum_
  size_t lowp_offset = 0;  // bytes into lowp_params_/lowp_grads_
};

}  // namespace cnnbench

#endif  // CNNBENCH_TRAIN_TRAINER_INTERNAL_H_
