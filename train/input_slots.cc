#include "train/input_slots.h"

#include <utility>

#include "core/status.h"

namespace cnnbench {

absl::StatusOr<std::unique_ptr<InputSlots>> InputSlots::Create(Backend* backend,
                                                               const TensorSpec& images_spec,
                                                               int64_t batch) {
  std::unique_ptr<InputSlots> slots(new InputSlots(backend));
  slots->images_spec_ = images_spec;
  slots->batch_ = batch;
  const Device device = backend->device();
  if (!device.is_cpu()) {
    ASSIGN_OR_RETURN(Stream upload, Stream::Create(device));
    slots->upload_stream_ = std::make_unique<Stream>(std::move(upload));
  }
  const TensorSpec host_images = TensorSpec::Plain(DType::kF32, images_spec.shape);
  for (Slot& slot : slots->slots_) {
    ASSIGN_OR_RETURN(Event done, Event::Create(device));
    slot.done = std::make_unique<Event>(std::move(done));
    RETURN_IF_ERROR(slot.done->Record(backend->stream()));
    ASSIGN_OR_RETURN(slot.images, Buffer::Allocate(device, images_spec.bytes));
    ASSIGN_OR_RETURN(slot.labels, Buffer::Allocate(device, batch * sizeof(int32_t)));
    if (slots->upload_stream_ != nullptr) {
      ASSIGN_OR_RETURN(Event uploaded, Event::Create(device));
      slot.uploaded = std::make_unique<Event>(std::move(uploaded));
      RETURN_IF_ERROR(slot.uploaded->Record(*slots->upload_stream_));
      if (!backend->SameLayout(host_images, images_spec)) {
        ASSIGN_OR_RETURN(slot.staging, Buffer::Allocate(device, host_images.bytes));
      }
    }
  }
  return slots;
}

absl::Status InputSlots::Set(const float* images, const int32_t* labels) {
  if (images == nullptr || labels == nullptr)
    return absl::InvalidArgumentError("SetBatch: null images or labels");
  const int free_slot = 1 - active_;
  Slot& slot = slots_[free_slot];
  // The free slot was last read by an earlier step, which may still be in
  // flight on a device: wait for the end of its backward pass (the last read).
  const TensorSpec host_images = TensorSpec::Plain(DType::kF32, images_spec_.shape);
  const TensorSpec label_spec = TensorSpec::Plain(DType::kI32, Shape{batch_});
  if (upload_stream_ != nullptr) {
    // On the side stream: after the step that last read the slot (a wait on
    // the device, not here), beside whatever the compute stream runs now.
    RETURN_IF_ERROR(upload_stream_->Wait(*slot.done));
    void* images_dst = slot.staging.data() != nullptr ? slot.staging.data() : slot.images.data();
    RETURN_IF_ERROR(CopyAsync(images_dst, images, host_images.bytes, *upload_stream_));
    RETURN_IF_ERROR(CopyAsync(slot.labels.data(), labels, label_spec.bytes, *upload_stream_));
    RETURN_IF_ERROR(slot.uploaded->Record(*upload_stream_));
    // The host's batch may be reused on return (the pipeline recycles it).
    RETURN_IF_ERROR(slot.uploaded->Synchronize());
    slot.cast = slot.staging.data() != nullptr;
  } else {
    RETURN_IF_ERROR(slot.done->Synchronize());
    RETURN_IF_ERROR(backend_->Upload(host_images, images, images_spec_, slot.images.data()));
    RETURN_IF_ERROR(backend_->Upload(label_spec, labels, label_spec, slot.labels.data()));
  }
  active_ = free_slot;
  has_batch_ = true;
  return absl::OkStatus();
}

absl::Status InputSlots::EnqueueReady(int slot) {
  Slot& s = slots_[slot];
  if (upload_stream_ == nullptr) return absl::OkStatus();
  RETURN_IF_ERROR(backend_->stream().Wait(*s.uploaded));
  if (s.cast) {
    RETURN_IF_ERROR(backend_->Reorder(TensorSpec::Plain(DType::kF32, images_spec_.shape),
                                      s.staging.data(), images_spec_, s.images.data()));
    s.cast = false;  // later steps on this batch read the cast images
  }
  return absl::OkStatus();
}

absl::Status InputSlots::Clear() {
  for (Slot& slot : slots_)
    for (Buffer* b : {&slot.images, &slot.labels})
      RETURN_IF_ERROR(backend_->Fill(b->data(), 0, b->size()));
  return absl::OkStatus();
}

size_t InputSlots::bytes() const {
  size_t bytes = 0;
  for (const Slot& slot : slots_)
    bytes += slot.images.size() + slot.labels.size() + slot.staging.size();
  return bytes;
}

}  // namespace cnnbench
