// The training-step executor: compiles a graph for a backend once (shape
// checks, kernels, one memory plan, parameter initialisation), then runs
// steps — forward, softmax cross-entropy, backward, fused SGD update — with no
// allocation and no kernel creation inside a step.
#ifndef CNNBENCH_TRAIN_TRAINER_H_
#define CNNBENCH_TRAIN_TRAINER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/device.h"
#include "core/dtype.h"
#include "kernels/kernel.h"
#include "models/graph.h"
#include "train/memory_plan.h"

namespace cnnbench {

struct TrainOptions {
  Precision precision = Precision::kFp32;
  uint64_t seed = 1;  // parameter initialisation
  double learning_rate = 0.1;
  double momentum = 0.9;
  double weight_decay = 0.0;
  bool profile = false;       // time every kernel (adds a clock read per call)
  bool poison_freed = false;  // fill each transient buffer with NaN when its lifetime ends
};

// Time spent in one node's kernels (or in the executor's own work: "edges",
// "update"), summed over the steps since the last ResetProfile().
struct LayerTime {
  std::string name;            // node name
  std::string op;              // canonical descriptor string
  std::string implementation;  // what the backend runs
  double forward_seconds = 0;
  double backward_seconds = 0;
};

class Trainer {
 public:
  static absl::StatusOr<std::unique_ptr<Trainer>> Compile(const Graph& graph, Backend* backend,
                                                          const TrainOptions& options);
  ~Trainer();

  // Copies one batch: images (N,C,H,W) fp32 row-major, labels (N) int32.
  absl::Status SetBatch(const float* images, const int32_t* labels);
  // One training step on the current batch; returns its loss (before the update).
  absl::StatusOr<float> Step();

  // Every byte the executor holds: parameters, gradients, momentum, state,
  // inputs, scratch and the activation arena.
  size_t peak_memory_bytes() const;
  size_t arena_bytes() const { return plan_.arena_bytes; }
  const std::vector<BufferRequest>& buffer_requests() const { return requests_; }
  const MemoryPlan& memory_plan() const { return plan_; }
  int64_t parameter_count() const { return parameter_count_; }

  const std::vector<LayerTime>& profile() const { return profile_; }
  void ResetProfile();

  // Parameter `index` of node `node` in plain layout (fp32).
  absl::StatusOr<std::vector<float>> ReadParameter(int node, int index) const;

 private:
  struct Layer;
  Trainer() = default;
  absl::Status Build(const Graph& graph, Backend* backend, const TrainOptions& options);
  absl::Status InitializeParameters();
  void* BufferData(int buffer) const;
  void PoisonBuffersEndingAt(int step);

  Graph graph_;
  Backend* backend_ = nullptr;
  TrainOptions options_;
  std::vector<std::unique_ptr<Layer>> layers_;  // forward order
  std::unique_ptr<Optimizer> optimizer_;

  std::vector<BufferRequest> requests_;  // arena buffers
  MemoryPlan plan_;
  std::vector<std::vector<int>> ending_at_;  // arena buffers whose lifetime ends at each step
  Buffer arena_, params_, grads_, momentum_, state_, scratch_, images_, labels_, loss_;
  TensorSpec images_spec_;
  size_t params_bytes_ = 0;
  int64_t parameter_count_ = 0;
  std::vector<LayerTime> profile_;
};

}  // namespace cnnbench

#endif  // CNNBENCH_TRAIN_TRAINER_H_
