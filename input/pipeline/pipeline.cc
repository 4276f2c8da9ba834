// The input pipeline's threads and queues (see pipeline.h).
//
// One mutex guards the record buffer (shuffle_buffer.h), the batches'
// bookkeeping (batch_assembly.h) and the counters; pixels are written
// outside it, each decoder into its own claimed slot. A decoder claims its
// slot when it takes a record, so slots are claimed in the order records
// leave the buffer; readers finish an epoch together and wait until the
// buffer has drained before the next epoch starts (an epoch's records never
// mix with the next one's in the buffer).
#include "input/pipeline/pipeline.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/device.h"
#include "core/random.h"
#include "core/status.h"
#include "input/image/jpeg.h"
#include "input/image/preprocess.h"
#include "input/pipeline/batch_assembly.h"
#include "input/pipeline/record.h"
#include "input/pipeline/shuffle_buffer.h"
#include "input/shards.h"
#include "input/tfrecord.h"

namespace cnnbench::input {
namespace {

using Clock = std::chrono::steady_clock;
double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

constexpr size_t kMaxSkipMessages = 20;

// A shard (TFRecord) or one image file (folder).
struct Unit {
  std::string path;
  std::string name;   // the file's name
  int64_t label = 0;  // folder images: the class's label
};

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A record's identity across epochs and threads: seeds its preprocessing.
uint64_t RecordKey(int64_t epoch, size_t unit, int64_t index) {
  return MixBits64(MixBits64(static_cast<uint64_t>(epoch) * 0x9e3779b97f4a7c15ull + unit) ^
                   static_cast<uint64_t>(index));
}

absl::Status Annotate(const absl::Status& status, const std::string& where) {
  return absl::Status(status.code(), absl::StrCat(where, ": ", status.message()));
}

// Reads a whole (small) file.
absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  std::string bytes;
  char chunk[1 << 16];
  for (;;) {
    const ssize_t got = read(fd, chunk, sizeof(chunk));
    if (got < 0) {
      if (errno == EINTR) continue;
      const int saved = errno;
      close(fd);
      return absl::DataLossError(absl::StrCat("cannot read ", path, ": ", std::strerror(saved)));
    }
    if (got == 0) break;
    bytes.append(chunk, static_cast<size_t>(got));
  }
  close(fd);
  return bytes;
}

}  // namespace

absl::StatusOr<BadRecordPolicy> ParseBadRecordPolicy(absl::string_view name) {
  if (name == "fail") return BadRecordPolicy::kFail;
  if (name == "skip") return BadRecordPolicy::kSkip;
  return absl::InvalidArgumentError(
      absl::StrCat("--on_bad_record=", name, ": must be fail or skip"));
}

int64_t PipelineStats::skipped_total() const {
  int64_t total = 0;
  for (const auto& [reason, count] : skipped) total += count;
  return total;
}

std::string PipelineStats::ToString() const {
  std::string s = absl::StrFormat(
      "read %d records (%s) in %.3f s, readers waited %.3f s; decoded %d images in %.3f s, "
      "decoders waited %.3f s; %d batches, consumer waited %.3f s",
      records_read, FormatBytes(static_cast<size_t>(bytes_read)), read_seconds, reader_wait_seconds,
      images_decoded, decode_seconds, decoder_wait_seconds, batches, consumer_wait_seconds);
  if (!skipped.empty()) {
    absl::StrAppend(&s, "; skipped ", skipped_total(), " bad records (");
    bool first = true;
    for (const auto& [reason, count] : skipped) {
      absl::StrAppend(&s, first ? "" : ", ", reason, " ", count);
      first = false;
    }
    absl::StrAppend(&s, ")");
  }
  return s;
}

class InputPipeline::Impl {
 public:
  explicit Impl(const PipelineOptions& options) : options_(options) {}

  absl::Status Init();
  void Start();
  void Stop();
  absl::StatusOr<const Batch*> Next();
  void Release();
  PipelineStats stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }
  int64_t records_per_epoch() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return records_per_epoch_;
  }
  const PipelineOptions& options() const { return options_; }

 private:
  void ReaderLoop(int reader);
  // Reads one unit's records into the buffer; false when the pipeline stops.
  bool ReadUnit(int64_t epoch, size_t unit);
  bool ReadShard(int64_t epoch, size_t unit);
  bool ReadImageFile(int64_t epoch, size_t unit);
  // Checks the label and pushes; false when the pipeline stops.
  bool Push(SourceRecord record, size_t bytes, double seconds);
  void DecoderLoop(int decoder);
  absl::Status Decode(JpegDecoder& decoder, Image& scratch, std::vector<CropBox>& boxes,
                      const SourceRecord& record, BatchBuffer& batch, int64_t slot);

  // The error of a data set whose `passes` passes gave no usable record
  // (mutex held).
  absl::Status NoReadableRecord(int64_t passes) const;
  // A bad record: under kSkip counted (true: go on), under kFail the
  // pipeline's error (false: stop).
  bool BadRecord(const std::string& reason, const absl::Status& status);
  void SetError(const absl::Status& status);
  bool Stopping() const { return stop_ || !error_.ok(); }  // mutex held

  // Mutex held for all of these.
  size_t BufferCapacity() const;
  // A record may leave the buffer (an epoch's end drains a shuffle buffer).
  bool CanPop() const { return records_->CanPop(draining_ || reading_done_); }
  // A slot can be claimed for the record the next pop takes (buffer not
  // empty): popping only then keeps taking a record and claiming its slot
  // one step.
  bool SlotAvailable() const { return batches_->SlotAvailable(records_->front().epoch); }

  const PipelineOptions options_;
  std::vector<Unit> units_;
  size_t image_values_ = 0;  // H * W * 3
  std::vector<JpegDecoder> decoders_;
  std::vector<std::thread> threads_;
  std::once_flag joined_;

  mutable std::mutex mutex_;
  std::condition_variable reader_cv_;    // buffer space; the epoch barrier
  std::condition_variable decoder_cv_;   // records; free batches
  std::condition_variable consumer_cv_;  // ready batches; the end; errors
  bool stop_ = false;
  absl::Status error_;
  std::unique_ptr<ShuffleBuffer> records_;
  std::unique_ptr<BatchAssembly> batches_;
  int64_t reading_epoch_ = 0;  // the epoch readers are in
  int readers_finished_ = 0;   // readers done with reading_epoch_
  bool draining_ = false;      // all readers done with the epoch: decoders take what is left
  bool reading_done_ = false;  // the last epoch is read (finite epochs)
  int64_t epoch_records_ = 0;  // records pushed in reading_epoch_
  int64_t records_per_epoch_ = -1;
  int active_decoders_ = 0;
  bool finished_ = false;  // every decoder has exited
  PipelineStats stats_;
};

absl::Status InputPipeline::Impl::Init() {
  const PipelineOptions& o = options_;
  auto bad = [](const std::string& what) { return absl::InvalidArgumentError(what); };
  if (o.batch < 1) return bad(absl::StrCat("batch ", o.batch, ": must be >= 1"));
  if (o.height < 1 || o.width < 1 || o.height > 4096 || o.width > 4096)
    return bad(absl::StrCat("image size ", o.height, "x", o.width, ": sides must be in 1..4096"));
  if (o.classes != 1000 && o.classes != 1001)
    return bad(absl::StrCat("classes ", o.classes, ": must be 1000 or 1001"));
  if (o.layout != Layout::kNCHW && o.layout != Layout::kNHWC)
    return bad(absl::StrCat("layout ", LayoutName(o.layout), ": must be NCHW or NHWC"));
  if (o.reader_threads < 1 || o.reader_threads > 256 || o.decode_threads < 1 ||
      o.decode_threads > 256)
    return bad(absl::StrCat("threads: ", o.reader_threads, " readers, ", o.decode_threads,
                            " decoders: each must be in 1..256"));
  if (o.queue_depth < 1) return bad(absl::StrCat("queue depth ", o.queue_depth, ": must be >= 1"));
  if (o.shuffle_buffer < 1)
    return bad(absl::StrCat("shuffle buffer ", o.shuffle_buffer, ": must be >= 1"));
  if (o.epochs < 0) return bad(absl::StrCat("epochs ", o.epochs, ": must be >= 0 (0: forever)"));
  // Errors about the data set name it already: returned without a file:line trail.
  RETURN_IF_ERROR_AS_IS(CheckDataDir(o.data_dir, o.format, o.subset));

  if (o.format == DataFormat::kTFRecord) {
    ASSIGN_OR_RETURN(std::vector<std::string> shards, FindShards(o.data_dir, o.subset));
    for (std::string& path : shards) units_.push_back(Unit{.path = path, .name = BaseName(path)});
  } else {
    ASSIGN_OR_RETURN(ImageFolderIndex index, IndexImageFolder(FolderRoot(o.data_dir, o.subset)));
    for (FolderImage& image : index.images)
      units_.push_back(
          Unit{.path = std::move(image.path), .name = std::move(image.name), .label = image.label});
    records_per_epoch_ = static_cast<int64_t>(units_.size());
  }

  image_values_ = static_cast<size_t>(o.height) * o.width * 3;
  const size_t image_bytes = o.batch * image_values_ * sizeof(float);
  const size_t label_bytes = o.batch * sizeof(int32_t);
  // Page-locked when a GPU is there, so the trainer's upload is asynchronous.
  const bool pinned = CudaDeviceCount() > 0;
  records_ = std::make_unique<ShuffleBuffer>(o.training, BufferCapacity(),
                                             MixBits64(o.seed ^ 0x5348554646ull));
  batches_ = std::make_unique<BatchAssembly>(o.batch, image_values_, !o.training);
  // queue_depth ready + one held by the consumer + one being filled.
  for (int i = 0; i < o.queue_depth + 2; ++i) {
    auto b = std::make_unique<BatchBuffer>();
    if (pinned) {
      ASSIGN_OR_RETURN(b->images, Buffer::AllocatePinnedHost(image_bytes));
      ASSIGN_OR_RETURN(b->labels, Buffer::AllocatePinnedHost(label_bytes));
    } else {
      ASSIGN_OR_RETURN(b->images, Buffer::Allocate(Device::Cpu(), image_bytes));
      ASSIGN_OR_RETURN(b->labels, Buffer::Allocate(Device::Cpu(), label_bytes));
    }
    std::memset(b->images.data(), 0, image_bytes);  // pages faulted in once, here
    std::memset(b->labels.data(), 0, label_bytes);
    b->view.capacity = o.batch;
    b->view.images = static_cast<const float*>(b->images.data());
    b->view.labels = static_cast<const int32_t*>(b->labels.data());
    b->view.names.resize(o.batch);
    b->view.epochs.resize(o.batch);
    b->valid.resize(o.batch);
    batches_->Add(std::move(b));
  }
  for (int i = 0; i < o.decode_threads; ++i) {
    ASSIGN_OR_RETURN(JpegDecoder decoder, JpegDecoder::Create());
    decoders_.push_back(std::move(decoder));
  }
  return absl::OkStatus();
}

void InputPipeline::Impl::Start() {
  active_decoders_ = options_.decode_threads;
  for (int r = 0; r < options_.reader_threads; ++r)
    threads_.emplace_back([this, r] { ReaderLoop(r); });
  for (int d = 0; d < options_.decode_threads; ++d)
    threads_.emplace_back([this, d] { DecoderLoop(d); });
}

void InputPipeline::Impl::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  reader_cv_.notify_all();
  decoder_cv_.notify_all();
  consumer_cv_.notify_all();
  std::call_once(joined_, [this] {
    for (std::thread& t : threads_) t.join();
  });
}

void InputPipeline::Impl::SetError(const absl::Status& status) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (error_.ok()) error_ = status;
  }
  reader_cv_.notify_all();
  decoder_cv_.notify_all();
  consumer_cv_.notify_all();
}

absl::Status InputPipeline::Impl::NoReadableRecord(int64_t passes) const {
  std::string skipped;
  for (const auto& [reason, count] : stats_.skipped)
    absl::StrAppend(&skipped, skipped.empty() ? "" : ", ", reason, " ", count);
  const std::string what =
      stats_.skipped_total() == 0
          ? std::string("it holds no record")
          : absl::StrCat("every record was bad and skipped: ", stats_.skipped_total(),
                         " skipped (", skipped, "); the first: ", stats_.skip_messages.front());
  return absl::NotFoundError(absl::StrCat("no readable record in ", options_.data_dir, " (",
                                          options_.subset, ", ", units_.size(), " file(s)) after ",
                                          passes, " pass(es) over it: ", what));
}

bool InputPipeline::Impl::BadRecord(const std::string& reason, const absl::Status& status) {
  if (options_.on_bad_record == BadRecordPolicy::kFail) {
    SetError(status);
    return false;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  ++stats_.skipped[reason];
  if (stats_.skip_messages.size() < kMaxSkipMessages)
    stats_.skip_messages.push_back(std::string(status.message()));
  return !Stopping();
}

size_t InputPipeline::Impl::BufferCapacity() const {
  if (options_.training) return static_cast<size_t>(options_.shuffle_buffer);
  return static_cast<size_t>(std::max(8, 2 * options_.decode_threads));
}

void InputPipeline::Impl::ReaderLoop(int reader) {
  const int readers = options_.reader_threads;
  for (int64_t epoch = 0; options_.epochs == 0 || epoch < options_.epochs; ++epoch) {
    const std::vector<size_t> order =
        EpochShardOrder(units_.size(), options_.seed, epoch, options_.training);
    const std::vector<std::vector<size_t>> dealt = InterleaveShards(order, readers);
    for (size_t unit : dealt[reader])
      if (!ReadUnit(epoch, unit)) return;
    // The epoch barrier: every reader done and the buffer drained.
    std::unique_lock<std::mutex> lock(mutex_);
    if (++readers_finished_ == readers) {
      draining_ = true;
      decoder_cv_.notify_all();
    }
    reader_cv_.wait(lock, [&] {
      return Stopping() || reading_epoch_ > epoch ||
             (readers_finished_ == readers && records_->empty());
    });
    if (Stopping()) return;
    if (reading_epoch_ == epoch) {  // the first reader through advances the epoch
      // Nothing usable in a whole pass (every record bad, or none there):
      // reading on would spin for ever. Decoding lags reading, so a pass
      // whose records were read but none decoded is judged two passes on.
      if (epoch_records_ == 0 || (epoch >= 2 && stats_.images_decoded == 0)) {
        if (error_.ok()) error_ = NoReadableRecord(epoch + 1);
        reader_cv_.notify_all();
        decoder_cv_.notify_all();
        consumer_cv_.notify_all();
        return;
      }
      if (records_per_epoch_ < 0) records_per_epoch_ = epoch_records_;
      epoch_records_ = 0;
      reading_epoch_ = epoch + 1;
      readers_finished_ = 0;
      draining_ = false;
      if (options_.epochs != 0 && reading_epoch_ == options_.epochs) reading_done_ = true;
      reader_cv_.notify_all();
      decoder_cv_.notify_all();
    }
  }
}

bool InputPipeline::Impl::ReadUnit(int64_t epoch, size_t unit) {
  return options_.format == DataFormat::kTFRecord ? ReadShard(epoch, unit)
                                                  : ReadImageFile(epoch, unit);
}

bool InputPipeline::Impl::ReadShard(int64_t epoch, size_t unit) {
  const Unit& shard = units_[unit];
  absl::StatusOr<TFRecordReader> reader = TFRecordReader::Open(shard.path);
  if (!reader.ok()) return BadRecord("read", Annotate(reader.status(), "cannot read shard"));
  std::string bytes;
  for (;;) {
    const Clock::time_point start = Clock::now();
    const int64_t index = reader->record_index();
    absl::StatusOr<bool> more = reader->Next(&bytes);
    if (!more.ok()) {
      // The framing is lost: nothing after this record can be read.
      return BadRecord("read", absl::Status(more.status().code(),
                                            absl::StrCat(more.status().message(),
                                                         " (the rest of this file is unread)")));
    }
    if (!*more) return true;
    SourceRecord record;
    record.origin = absl::StrCat(shard.path, " record ", index);
    if (absl::Status s = ParseExampleRecord(bytes, absl::StrCat(shard.name, ":", index), &record);
        !s.ok()) {
      if (!BadRecord("parse", Annotate(s, record.origin))) return false;
      continue;
    }
    record.epoch = epoch;
    record.key = RecordKey(epoch, unit, index);
    if (!Push(std::move(record), bytes.size() + kTFRecordHeaderBytes + kTFRecordFooterBytes,
              SecondsSince(start)))
      return false;
  }
}

bool InputPipeline::Impl::ReadImageFile(int64_t epoch, size_t unit) {
  const Unit& file = units_[unit];
  const Clock::time_point start = Clock::now();
  absl::StatusOr<std::string> bytes = ReadWholeFile(file.path);
  if (!bytes.ok()) return BadRecord("read", bytes.status());
  SourceRecord record;
  record.jpeg = *std::move(bytes);
  record.label = file.label;
  record.name = file.name;
  record.origin = file.path;
  record.epoch = epoch;
  record.key = RecordKey(epoch, unit, 0);
  const size_t size = record.jpeg.size();
  return Push(std::move(record), size, SecondsSince(start));
}

bool InputPipeline::Impl::Push(SourceRecord record, size_t bytes, double seconds) {
  absl::StatusOr<int> label = RecordModelLabel(record.label, options_.classes);
  if (!label.ok()) return BadRecord("label", Annotate(label.status(), record.origin));
  record.model_label = *label;
  std::unique_lock<std::mutex> lock(mutex_);
  const Clock::time_point start = Clock::now();
  reader_cv_.wait(lock, [&] { return Stopping() || records_->HasRoom(); });
  stats_.reader_wait_seconds += SecondsSince(start);
  if (Stopping()) return false;
  records_->Push(std::move(record));
  ++stats_.records_read;
  ++epoch_records_;
  stats_.bytes_read += static_cast<int64_t>(bytes);
  stats_.read_seconds += seconds;
  if (CanPop()) decoder_cv_.notify_one();
  return true;
}

absl::Status InputPipeline::Impl::Decode(JpegDecoder& decoder, Image& scratch,
                                         std::vector<CropBox>& boxes, const SourceRecord& record,
                                         BatchBuffer& batch, int64_t slot) {
  BatchSlot target;
  target.batch = batch.images.data();
  target.dtype = DType::kF32;
  target.layout = options_.layout;
  target.height = options_.height;
  target.width = options_.width;
  target.index = slot;
  absl::Status status;
  if (options_.training) {
    boxes.clear();
    for (const RecordBox& r : record.boxes) {
      CropBox b;
      b.ymin = r.ymin;
      b.xmin = r.xmin;
      b.ymax = r.ymax;
      b.xmax = r.xmax;
      boxes.push_back(b);
    }
    TrainPreprocessOptions train;
    train.color = options_.color;
    status = PreprocessTrainJpeg(decoder, record.jpeg, boxes, train,
                                 ImageSeed(options_.seed, record.key), &scratch, target);
  } else {
    status = PreprocessEvalJpeg(decoder, record.jpeg, EvalPreprocessOptions{}, &scratch, target);
  }
  if (!status.ok()) return Annotate(status, record.origin);
  static_cast<int32_t*>(batch.labels.data())[slot] = record.model_label;
  batch.view.names[slot] = record.name;
  batch.view.epochs[slot] = record.epoch;
  return absl::OkStatus();
}

void InputPipeline::Impl::DecoderLoop(int index) {
  JpegDecoder& decoder = decoders_[index];
  Image scratch;
  std::vector<CropBox> boxes;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    const Clock::time_point start = Clock::now();
    decoder_cv_.wait(lock, [&] {
      return Stopping() || (CanPop() && SlotAvailable()) || (reading_done_ && records_->empty());
    });
    stats_.decoder_wait_seconds += SecondsSince(start);
    if (Stopping() || records_->empty()) break;
    SourceRecord record = records_->Pop();
    reader_cv_.notify_all();
    // Claim a slot now, in the order records leave the buffer.
    bool ready_changed = false;
    const SlotClaim claim = batches_->Claim(record.epoch, &ready_changed);
    if (ready_changed) consumer_cv_.notify_one();
    bool filled = false;
    for (;;) {
      lock.unlock();
      const Clock::time_point decode_start = Clock::now();
      const absl::Status status = Decode(decoder, scratch, boxes, record, *claim.batch, claim.slot);
      const double seconds = SecondsSince(decode_start);
      const bool go_on = status.ok() || BadRecord("decode", status);
      lock.lock();
      stats_.decode_seconds += seconds;
      if (status.ok()) {
        ++stats_.images_decoded;
        filled = true;
        break;
      }
      if (!go_on) break;
      // Skipped: training fills the slot with the next record (its batches
      // stay full); evaluation leaves a hole that is closed up.
      if (!options_.training) break;
      decoder_cv_.wait(
          lock, [&] { return Stopping() || CanPop() || (reading_done_ && records_->empty()); });
      if (Stopping() || records_->empty()) break;
      record = records_->Pop();
      reader_cv_.notify_all();
    }
    if (batches_->Complete(claim, filled)) consumer_cv_.notify_one();
    if (Stopping()) break;
  }
  // The end: whoever leaves first closes the partial batch.
  if (!Stopping() && batches_->CloseFilling()) consumer_cv_.notify_one();
  if (--active_decoders_ == 0) {
    finished_ = true;
    consumer_cv_.notify_all();
  }
}

absl::StatusOr<const Batch*> InputPipeline::Impl::Next() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (batches_->Release()) decoder_cv_.notify_all();
  const Clock::time_point start = Clock::now();
  BatchBuffer* held = nullptr;
  bool interrupted = false;
  for (;;) {
    // In slices, so that a run asked to stop is not held here.
    while (!consumer_cv_.wait_for(lock, std::chrono::milliseconds(100), [&] {
      return Stopping() || batches_->NextReady() || finished_;
    })) {
      if (options_.stop_requested && options_.stop_requested()) {
        interrupted = true;
        break;
      }
    }
    if (interrupted || Stopping()) break;
    bool freed = false;  // batches whose every record was skipped, passed over
    held = batches_->TakeNext(&freed);
    if (freed) decoder_cv_.notify_all();
    if (held != nullptr || finished_) break;  // finished: every batch delivered
  }
  stats_.consumer_wait_seconds += SecondsSince(start);
  if (!error_.ok()) return error_;
  if (interrupted) return absl::CancelledError("waiting for the input pipeline: interrupted");
  if (stop_) return absl::CancelledError("the input pipeline was stopped");
  if (held != nullptr) {
    ++stats_.batches;
    return &held->view;
  }
  return absl::OutOfRangeError(
      absl::StrCat("end of data: ", options_.epochs, " epoch(s) of ", options_.subset, " read"));
}

void InputPipeline::Impl::Release() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (batches_->Release()) decoder_cv_.notify_all();
}

absl::StatusOr<std::unique_ptr<InputPipeline>> InputPipeline::Create(
    const PipelineOptions& options) {
  auto impl = std::make_unique<Impl>(options);
  RETURN_IF_ERROR(impl->Init());
  impl->Start();
  return std::unique_ptr<InputPipeline>(new InputPipeline(std::move(impl)));
}

InputPipeline::InputPipeline(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
InputPipeline::~InputPipeline() { Stop(); }
absl::StatusOr<const Batch*> InputPipeline::Next() { return impl_->Next(); }
void InputPipeline::Release() { impl_->Release(); }
void InputPipeline::Stop() { impl_->Stop(); }
PipelineStats InputPipeline::stats() const { return impl_->stats(); }
int64_t InputPipeline::records_per_epoch() const { return impl_->records_per_epoch(); }
const PipelineOptions& InputPipeline::options() const { return impl_->options(); }

}  // namespace cnnbench::input
