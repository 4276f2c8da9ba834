// The pipeline's batches from the decoders' point of view and the
// consumer's: a fixed pool of batch buffers; slots claimed in the order
// records leave the record buffer; a slot completed filled or as a hole (a
// skipped record); a closed batch whose every slot is complete compacted
// (holes closed up) and made ready; ready batches delivered in the order
// they were opened, the empty ones (every record skipped) passed over. Not
// thread-safe: the pipeline calls it under its mutex, and a decoder writes
// its claimed slot's pixels outside it.
#ifndef CNNBENCH_INPUT_PIPELINE_BATCH_ASSEMBLY_H_
#define CNNBENCH_INPUT_PIPELINE_BATCH_ASSEMBLY_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "core/device.h"
#include "input/pipeline/pipeline.h"

namespace cnnbench::input {

// A batch's memory and bookkeeping.
struct BatchBuffer {
  Buffer images;  // (capacity, 3, H, W) or (capacity, H, W, 3) fp32
  Buffer labels;  // (capacity) int32
  Batch view;
  std::vector<char> valid;  // per slot: filled (not a skipped record's hole)
  int64_t claimed = 0;
  int64_t completed = 0;
  int64_t holes = 0;
  bool closed = false;  // no more claims
  int64_t epoch = 0;
  int64_t sequence = 0;  // batches are delivered in the order they were opened
};

// A claimed slot: the batch it is in and its index there.
struct SlotClaim {
  BatchBuffer* batch = nullptr;
  int64_t slot = 0;
};

class BatchAssembly {
 public:
  // Batches of `batch_size` examples of `image_values` floats each. With
  // `one_epoch_per_batch` (evaluation) a batch holds one epoch's records:
  // a record of the next epoch closes the filling batch.
  BatchAssembly(int64_t batch_size, size_t image_values, bool one_epoch_per_batch);

  // Gives a buffer to the pool (free). Its view, labels and images must
  // have room for `batch_size` examples.
  void Add(std::unique_ptr<BatchBuffer> batch);

  // A slot can be claimed for a record of `epoch`: the filling batch takes
  // it, or a free batch is there to open.
  bool SlotAvailable(int64_t epoch) const;

  // Claims the next slot for a record of `epoch` (SlotAvailable must hold).
  // Returns true in `*ready_changed` when a batch became ready on the way
  // (an evaluation batch closed at the epoch change).
  SlotClaim Claim(int64_t epoch, bool* ready_changed);

  // The claimed slot is done: `filled`, or a hole. True when the batch the
  // consumer waits for is ready now.
  bool Complete(const SlotClaim& claim, bool filled);

  // Closes the filling batch, if any (the data's end). True when the batch
  // the consumer waits for is ready now.
  bool CloseFilling();

  // The consumer's next batch when it is ready (empty ones go back to the
  // pool on the way; `*freed` says whether any did), else null. The batch
  // is held until Release().
  BatchBuffer* TakeNext(bool* freed);
  // Whether the batch the consumer waits for is ready.
  bool NextReady() const { return ready_.count(next_deliver_) > 0; }
  // Returns the held batch to the pool; false when none was held.
  bool Release();

 private:
  void Close(BatchBuffer* batch);
  // Compacts and readies a closed batch whose every slot is complete; true
  // when it is the one the consumer waits for.
  bool MaybeFinish(BatchBuffer* batch);

  const int64_t batch_size_;
  const size_t image_values_;
  const bool one_epoch_per_batch_;
  std::vector<std::unique_ptr<BatchBuffer>> batches_;
  BatchBuffer* filling_ = nullptr;
  std::deque<BatchBuffer*> free_;
  std::map<int64_t, BatchBuffer*> ready_;  // finished, by sequence (empty ones too)
  int64_t next_open_ = 0;                  // sequence of the next batch opened
  int64_t next_deliver_ = 0;               // sequence of the next batch the consumer gets
  BatchBuffer* held_ = nullptr;
};

}  // namespace cnnbench::input

#endif  // CNNBENCH_INPUT_PIPELINE_BATCH_ASSEMBLY_H_
