#include "input/pipeline/shuffle_buffer.h"

#include <utility>

namespace cnnbench::input {

ShuffleBuffer::ShuffleBuffer(bool shuffle, size_t capacity, uint64_t seed)
    : shuffle_(shuffle), capacity_(capacity), rng_(seed) {}

bool ShuffleBuffer::CanPop(bool draining) const {
  if (records_.empty()) return false;
  return !shuffle_ || draining || records_.size() >= capacity_;
}

SourceRecord ShuffleBuffer::Pop() {
  if (shuffle_) {
    const size_t pick = static_cast<size_t>(rng_.Next() % records_.size());
    std::swap(records_[pick], records_.back());
    SourceRecord record = std::move(records_.back());
    records_.pop_back();
    return record;
  }
  SourceRecord record = std::move(records_.front());
  records_.pop_front();
  return record;
}

}  // namespace cnnbench::input
