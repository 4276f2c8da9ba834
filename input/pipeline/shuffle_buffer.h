// The pipeline's record buffer between the readers and the decoders: a
// shuffle buffer for training (tf.data's shuffle: records leave in a
// uniformly random order from a full buffer of `capacity`, except at an
// epoch's end, when what is left drains), first in first out for
// evaluation. Not thread-safe: the pipeline calls it under its mutex.
#ifndef CNNBENCH_INPUT_PIPELINE_SHUFFLE_BUFFER_H_
#define CNNBENCH_INPUT_PIPELINE_SHUFFLE_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <deque>

#include "core/random.h"
#include "input/pipeline/record.h"

namespace cnnbench::input {

class ShuffleBuffer {
 public:
  // `shuffle`: training's random order from `capacity` records (>= 1),
  // drawn from `seed`; else in order, `capacity` records at most.
  ShuffleBuffer(bool shuffle, size_t capacity, uint64_t seed);

  size_t size() const { return records_.size(); }
  bool empty() const { return records_.empty(); }
  size_t capacity() const { return capacity_; }
  // A reader may push (the buffer is below its capacity).
  bool HasRoom() const { return records_.size() < capacity_; }

  void Push(SourceRecord record) { records_.push_back(std::move(record)); }

  // A record may leave: in order, any; shuffling, only from a full buffer
  // unless `draining` (the epoch's, or the data's, last records).
  bool CanPop(bool draining) const;

  // The next record: a uniformly random one when shuffling, else the
  // oldest. The buffer must not be empty.
  SourceRecord Pop();

  // The record an in-order Pop() returns next. The buffer must not be empty.
  const SourceRecord& front() const { return records_.front(); }

 private:
  const bool shuffle_;
  const size_t capacity_;
  Rng rng_;
  std::deque<SourceRecord> records_;
};

}  // namespace cnnbench::input

#endif  // CNNBENCH_INPUT_PIPELINE_SHUFFLE_BUFFER_H_
