// The real-data input pipeline: reader threads -> a bounded record buffer
// (a shuffle buffer when training) -> decode threads that decode, preprocess
// and write straight into a batch slot -> a bounded queue of ready batches
// in pinned host memory (page-locked when a GPU is present) -> the consumer,
// which hands each batch to the trainer (Trainer::SetBatch uploads it into
// the executor's free input slot).
//
//   ASSIGN_OR_RETURN(auto pipeline, InputPipeline::Create(options));
//   for (...) {
//     ASSIGN_OR_RETURN(const Batch* batch, pipeline->Next());
//     RETURN_IF_ERROR(trainer->SetBatch(batch->images, batch->labels));
//   }
//
// Determinism: with the same seed, data and options, each epoch delivers
// exactly the same multiset of (record, label) - every record of the subset
// once - and each record's preprocessing draws depend only on (seed, epoch,
// record), so a record's pixels are the same whatever thread decodes it.
// Which records share a batch, and their order, depend on thread timing
// (shard interleaving and the shuffle buffer's draws); batches are handed
// out in the order they were started, whichever finishes decoding first.
// Training batches are full and run on across epochs (a skipped record's
// slot takes the next record), but for the very last with finite epochs,
// which holds what is left (epochs x records mod batch); an evaluation
// batch holds one epoch's records, so the last of each epoch may be short.
// With one reader an evaluation epoch is delivered in file order.
#ifndef CNNBENCH_INPUT_PIPELINE_PIPELINE_H_
#define CNNBENCH_INPUT_PIPELINE_PIPELINE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/shape.h"
#include "input/image/preprocess.h"
#include "input/pipeline/sources.h"

namespace cnnbench::input {

enum class BadRecordPolicy {
  kFail,  // the first bad record stops the pipeline: Next() returns its error
  kSkip,  // bad records are counted by reason (Stats) and left out
};
absl::StatusOr<BadRecordPolicy> ParseBadRecordPolicy(absl::string_view name);  // fail|skip

struct PipelineOptions {
  DataFormat format = DataFormat::kTFRecord;
  std::string data_dir;
  std::string subset = "train";  // "train" or "validation"
  int64_t batch = 32;
  int height = 224;
  int width = 224;
  int classes = 1001;             // 1001: labels as written; 1000: shifted down by one
  Layout layout = Layout::kNCHW;  // kNCHW (Trainer::SetBatch's) or kNHWC
  // Training: shards and records shuffled per epoch, tf_cnn_benchmarks'
  // training preprocessing (distorted crop, flip, the colour distortion
  // below). Evaluation: files in order, central crop.
  bool training = true;
  // Training only: none, Inception's fast mode, or tf_cnn_benchmarks'
  // --distortions (input/image/preprocess.h).
  ColorDistortion color = ColorDistortion::kNone;
  int reader_threads = 1;
  int decode_threads = 1;
  int queue_depth = 2;            // ready batches waiting for the consumer
  int64_t shuffle_buffer = 1024;  // records (training)
  uint64_t seed = 1;
  BadRecordPolicy on_bad_record = BadRecordPolicy::kFail;
  // Epochs to read; 0: forever. After the last, Next() returns OutOfRange.
  // A whole pass over the data that gives no usable record (every one bad
  // and skipped, or none there) ends the pipeline with a NotFound error
  // naming the data set, the count skipped by reason and the first reason,
  // rather than reading on for ever.
  int64_t epochs = 0;
  // Asked about every 100 ms while Next() waits for a batch; once it
  // returns true, Next() returns Cancelled ("... interrupted"), so a run
  // that is to stop never hangs on its input. Null: never.
  std::function<bool()> stop_requested;
};

// One batch; valid until the next call to Next() or Release().
struct Batch {
  int64_t size = 0;                 // examples filled, <= capacity
  int64_t capacity = 0;             // PipelineOptions::batch
  const float* images = nullptr;    // (capacity, 3, H, W) for kNCHW, (capacity, H, W, 3) for kNHWC
  const int32_t* labels = nullptr;  // (capacity)
  // Per example: the record's name (image/filename, or the image file's
  // name) and the epoch it was read in.
  std::vector<std::string> names;
  std::vector<int64_t> epochs;
};

// Per-stage counters, so a user sees which stage limits: the busy and
// waiting seconds are summed over the stage's threads.
struct PipelineStats {
  int64_t records_read = 0;
  int64_t bytes_read = 0;
  double read_seconds = 0;         // readers reading and parsing
  double reader_wait_seconds = 0;  // readers blocked on a full record buffer
  int64_t images_decoded = 0;
  double decode_seconds = 0;               // decoders decoding and preprocessing
  double decoder_wait_seconds = 0;         // decoders waiting for records or a free batch
  int64_t batches = 0;                     // handed to the consumer
  double consumer_wait_seconds = 0;        // Next() waiting for a ready batch
  std::map<std::string, int64_t> skipped;  // by reason: read, parse, label, decode
  std::vector<std::string> skip_messages;  // the first few, each naming file and record

  int64_t skipped_total() const;
  // "records 1024 (12.3 MiB, read 0.20 s, waited 0.01 s); decoded 1020 (...)".
  std::string ToString() const;
};

class InputPipeline {
 public:
  // Checks the options and the data set, allocates the batches and starts
  // the threads.
  static absl::StatusOr<std::unique_ptr<InputPipeline>> Create(const PipelineOptions& options);
  ~InputPipeline();  // Stop()
  InputPipeline(const InputPipeline&) = delete;
  InputPipeline& operator=(const InputPipeline&) = delete;

  // The next filled batch (releasing the previous one). Errors: a bad
  // record under kFail (naming file and record), OutOfRange after the last
  // epoch, Cancelled after Stop().
  absl::StatusOr<const Batch*> Next();
  // Hands the batch from the last Next() back early.
  void Release();
  // Stops and joins every thread, also those blocked on full or empty
  // queues. Idempotent.
  void Stop();

  PipelineStats stats() const;
  // Records in one epoch (the number of shard records or image files; known
  // up front for folders, after the first epoch for TFRecord shards: -1 until then).
  int64_t records_per_epoch() const;
  const PipelineOptions& options() const;

  class Impl;

 private:
  explicit InputPipeline(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cnnbench::input

#endif  // CNNBENCH_INPUT_PIPELINE_PIPELINE_H_
