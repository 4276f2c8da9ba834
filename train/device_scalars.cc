#include "train/device_scalars.h"

#include "core/status.h"
#include "train/step_plan.h"

namespace cnnbench {

absl::StatusOr<DeviceScalars> DeviceScalars::Allocate(Backend* backend,
                                                      const TensorSpec& loss_spec) {
  DeviceScalars scalars;
  scalars.backend_ = backend;
  scalars.loss_spec_ = loss_spec;
  scalars.line_ = backend->alignment();
  const Device device = backend->device();
  ASSIGN_OR_RETURN(scalars.scalars_, Buffer::Allocate(device, kScalarLines * scalars.line_));
  if (!device.is_cpu() && loss_spec.dtype == DType::kF32) {
    ASSIGN_OR_RETURN(scalars.host_loss_, Buffer::AllocatePinnedHost(2 * sizeof(float)));
  }
  return scalars;
}

absl::Status DeviceScalars::Clear() { return backend_->Fill(scalars_.data(), 0, scalars_.size()); }

absl::Status DeviceScalars::SetLossScale(float scale) {
  const TensorSpec scalar = TensorSpec::Plain(DType::kF32, Shape{});
  return backend_->Upload(scalar, &scale, scalar, loss_scale());
}

absl::Status DeviceScalars::EnqueueHostLossCopy(int slot) const {
  if (!has_host_loss()) return absl::OkStatus();
  return CopyAsync(static_cast<float*>(host_loss_.data()) + slot, loss(), sizeof(float),
                   backend_->stream());
}

absl::StatusOr<float> DeviceScalars::ReadLoss() const {
  RETURN_IF_ERROR(backend_->stream().Synchronize());
  float value = 0;
  RETURN_IF_ERROR(
      backend_->Download(loss_spec_, loss(), TensorSpec::Plain(DType::kF32, Shape{}), &value));
  return value;
}

template <typename T>
absl::StatusOr<T> DeviceScalars::Read(DType dtype, const T* device) const {
  RETURN_IF_ERROR(backend_->stream().Synchronize());
  const TensorSpec scalar = TensorSpec::Plain(dtype, Shape{});
  T value{};
  RETURN_IF_ERROR(backend_->Download(scalar, device, scalar, &value));
  return value;
}

template absl::StatusOr<float> DeviceScalars::Read(DType, const float*) const;
template absl::StatusOr<int32_t> DeviceScalars::Read(DType, const int32_t*) const;

}  // namespace cnnbench
