// The scalars a step reads and writes on the device, each in its own
// aligned line of one small allocation: the loss, the step counter (random
// ops key their masks with it), the loss scale, the overflow flag and the
// clean updates since the scale last changed (fp16's dynamic loss
// scaling). On a GPU with an fp32 loss, each step also copies its loss
// into pinned host memory (one float per input slot) behind its forward
// pass, so reading it waits for that step only.
#ifndef CNNBENCH_TRAIN_DEVICE_SCALARS_H_
#define CNNBENCH_TRAIN_DEVICE_SCALARS_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/device.h"
#include "kernels/kernel.h"

namespace cnnbench {

class DeviceScalars {
 public:
  DeviceScalars() = default;
  // The scalars on `backend`'s device, untouched; the host copies of the
  // loss where the device is a GPU and the loss (`loss_spec`) is fp32.
  static absl::StatusOr<DeviceScalars> Allocate(Backend* backend, const TensorSpec& loss_spec);

  // Zero-fills every scalar (the step counter, flags and counts start at 0).
  absl::Status Clear();
  // Sets the loss scale the next step uses.
  absl::Status SetLossScale(float scale);

  float* loss() const { return At<float>(0); }
  uint64_t* step() const { return At<uint64_t>(1); }
  float* loss_scale() const { return At<float>(2); }
  int32_t* overflow() const { return At<int32_t>(3); }
  int32_t* good_steps() const { return At<int32_t>(4); }

  // Whether the loss is copied to the host within each step.
  bool has_host_loss() const { return host_loss_.data() != nullptr; }
  // Enqueues the copy of the loss into slot `slot`'s host float.
  absl::Status EnqueueHostLossCopy(int slot) const;
  // The host copy of slot `slot`'s loss (valid once that step's event is).
  float host_loss(int slot) const { return static_cast<const float*>(host_loss_.data())[slot]; }
  // The loss on the device, read after everything enqueued so far.
  absl::StatusOr<float> ReadLoss() const;
  // One scalar after everything enqueued so far.
  absl::StatusOr<float> ReadLossScale() const { return Read(DType::kF32, loss_scale()); }
  absl::StatusOr<int32_t> ReadGoodSteps() const { return Read(DType::kI32, good_steps()); }

  // Device memory held (the host copies are pinned host memory).
  size_t bytes() const { return scalars_.size(); }

 private:
  template <typename T>
  T* At(int line) const {
    return reinterpret_cast<T*>(static_cast<char*>(scalars_.data()) + line * line_);
  }
  template <typename T>
  absl::StatusOr<T> Read(DType dtype, const T* device) const;

  Backend* backend_ = nullptr;
  TensorSpec loss_spec_;
  size_t line_ = 0;
  Buffer scalars_;
  Buffer host_loss_;
};

}  // namespace cnnbench

#endif  // CNNBENCH_TRAIN_DEVICE_SCALARS_H_
