// The trainer's two input slots: a step reads one while the next batch is
// copied into the other, so a GPU's upload runs beside the step before it.
// Each slot holds the batch's images in the activation type and its int32
// labels on the backend's device; on a GPU the copies run on an upload
// stream of their own, and fp32 host images land in a staging buffer when
// the activation type is another, cast into the slot before the step.
#ifndef CNNBENCH_TRAIN_INPUT_SLOTS_H_
#define CNNBENCH_TRAIN_INPUT_SLOTS_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/device.h"
#include "kernels/kernel.h"

namespace cnnbench {

class InputSlots {
 public:
  // Both slots on `backend`'s device: images as `images_spec` (the device's
  // layout and activation type), `batch` labels. Each slot's `done` event is
  // recorded once on the compute stream, so the first batch waits for
  // nothing.
  static absl::StatusOr<std::unique_ptr<InputSlots>> Create(Backend* backend,
                                                            const TensorSpec& images_spec,
                                                            int64_t batch);

  // Copies a host batch (fp32 images in plain NCHW, `batch` labels) into the
  // free slot, after the step that last read it, and makes it the active
  // one. The host memory may be reused when this returns.
  absl::Status Set(const float* images, const int32_t* labels);
  // Whether Set() has been called: a step before it has nothing to read.
  bool has_batch() const { return has_batch_; }
  // The slot the next step reads.
  int active() const { return active_; }

  // GPU: the compute stream waits for `slot`'s upload and casts its images
  // when needed (before a step, outside any captured graph). CPU: nothing.
  absl::Status EnqueueReady(int slot);

  void* images(int slot) const { return slots_[slot].images.data(); }
  void* labels(int slot) const { return slots_[slot].labels.data(); }
  // Recorded after the last step that read the slot.
  Event& done(int slot) const { return *slots_[slot].done; }

  // Fills both slots' images and labels with zeros (pages touched once).
  absl::Status Clear();
  // Device memory the slots hold.
  size_t bytes() const;

 private:
  struct Slot {
    Buffer images, labels;
    std::unique_ptr<Event> done;
    // GPU: recorded on the upload stream after the batch's copy; `cast`
    // says the next step must cast `staging` into `images` first.
    std::unique_ptr<Event> uploaded;
    Buffer staging;
    bool cast = false;
  };
  explicit InputSlots(Backend* backend) : backend_(backend) {}

  Backend* backend_;
  TensorSpec images_spec_;
  int64_t batch_ = 0;
  Slot slots_[2];
  std::unique_ptr<Stream> upload_stream_;  // GPU only
  int active_ = 0;
  bool has_batch_ = false;
};

}  // namespace cnnbench

#endif  // CNNBENCH_TRAIN_INPUT_SLOTS_H_
