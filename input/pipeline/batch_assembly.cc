#include "input/pipeline/batch_assembly.h"

#include <cstring>
#include <utility>

namespace cnnbench::input {

BatchAssembly::BatchAssembly(int64_t batch_size, size_t image_values, bool one_epoch_per_batch)
    : batch_size_(batch_size),
      image_values_(image_values),
      one_epoch_per_batch_(one_epoch_per_batch) {}

void BatchAssembly::Add(std::unique_ptr<BatchBuffer> batch) {
  free_.push_back(batch.get());
  batches_.push_back(std::move(batch));
}

bool BatchAssembly::SlotAvailable(int64_t epoch) const {
  if (!free_.empty()) return true;
  if (filling_ == nullptr) return false;
  return !one_epoch_per_batch_ || filling_->epoch == epoch;
}

SlotClaim BatchAssembly::Claim(int64_t epoch, bool* ready_changed) {
  *ready_changed = false;
  if (filling_ != nullptr && one_epoch_per_batch_ && filling_->epoch != epoch) {
    BatchBuffer* closing = filling_;
    Close(closing);
    *ready_changed = NextReady();
  }
  if (filling_ == nullptr) {
    filling_ = free_.front();
    free_.pop_front();
    filling_->claimed = filling_->completed = filling_->holes = 0;
    filling_->closed = false;
    filling_->epoch = epoch;
    filling_->sequence = next_open_++;
  }
  SlotClaim claim{.batch = filling_, .slot = filling_->claimed++};
  if (filling_->claimed == batch_size_) {
    filling_->closed = true;
    filling_ = nullptr;
  }
  return claim;
}

bool BatchAssembly::Complete(const SlotClaim& claim, bool filled) {
  BatchBuffer* batch = claim.batch;
  batch->valid[claim.slot] = filled;
  if (!filled) ++batch->holes;
  ++batch->completed;
  return MaybeFinish(batch);
}

bool BatchAssembly::CloseFilling() {
  if (filling_ == nullptr) return false;
  BatchBuffer* closing = filling_;
  Close(closing);
  return NextReady();
}

void BatchAssembly::Close(BatchBuffer* batch) {
  batch->closed = true;
  if (filling_ == batch) filling_ = nullptr;
  MaybeFinish(batch);
}

bool BatchAssembly::MaybeFinish(BatchBuffer* batch) {
  if (!batch->closed || batch->completed != batch->claimed) return false;
  if (batch->holes > 0) {  // skipped records: move the later examples up
    float* images = static_cast<float*>(batch->images.data());
    int32_t* labels = static_cast<int32_t*>(batch->labels.data());
    int64_t to = 0;
    for (int64_t from = 0; from < batch->claimed; ++from) {
      if (!batch->valid[from]) continue;
      if (to != from) {
        std::memmove(images + to * image_values_, images + from * image_values_,
                     image_values_ * sizeof(float));
        labels[to] = labels[from];
        batch->view.names[to] = batch->view.names[from];
        batch->view.epochs[to] = batch->view.epochs[from];
      }
      ++to;
    }
  }
  batch->view.size = batch->claimed - batch->holes;
  ready_[batch->sequence] = batch;  // an empty one (all skipped) is passed over by TakeNext()
  return batch->sequence == next_deliver_;
}

BatchBuffer* BatchAssembly::TakeNext(bool* freed) {
  *freed = false;
  for (;;) {
    auto it = ready_.find(next_deliver_);
    if (it == ready_.end()) return nullptr;
    BatchBuffer* batch = it->second;
    ready_.erase(it);
    ++next_deliver_;
    if (batch->view.size == 0) {  // every record in it was skipped
      free_.push_back(batch);
      *freed = true;
      continue;
    }
    held_ = batch;
    return batch;
  }
}

bool BatchAssembly::Release() {
  if (held_ == nullptr) return false;
  free_.push_back(held_);
  held_ = nullptr;
  return true;
}

}  // namespace cnnbench::input
