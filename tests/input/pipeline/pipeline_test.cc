// The input pipeline over a generated data set: every epoch delivers each
// record exactly once whatever the thread counts; preprocessing output has
// the batch's shape and range and depends only on (seed, epoch, record);
// evaluation reads in file order; Stop() ends blocked threads; bad records
// fail naming file and record, or are counted and left out under skip; the
// folder and TFRecord readers agree on labels and pixels.
#include "input/pipeline/pipeline.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "input/example.h"
#include "input/pipeline/dataset_maker.h"
#include "input/pipeline/record.h"
#include "input/pipeline/sources.h"
#include "input/shards.h"
#include "input/tfrecord.h"

namespace cnnbench::input {
namespace {

constexpr int64_t kTrainImages = 37;  // not a multiple of any batch used here
constexpr int64_t kValidationImages = 11;
constexpr int kClasses = 5;

std::string TempDir() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return tmp != nullptr ? tmp : "/tmp";
}

DatasetSpec SmallSpec(const std::string& out, DataFormat format) {
  DatasetSpec spec;
  spec.out = out;
  spec.images = kTrainImages;
  spec.validation_images = kValidationImages;
  spec.classes = kClasses;
  spec.format = format;
  spec.shards = 3;
  spec.seed = 5;
  spec.min_side = 40;
  spec.max_side = 96;
  spec.grayscale_every = 4;
  return spec;
}

// Runs a shell command that must succeed.
void Sh(const char* command) { EXPECT_EQ(std::system(command), 0) << command; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// One delivered example.
struct Example {
  std::string name;
  int32_t label = 0;
  int64_t epoch = 0;
  std::vector<float> pixels;  // as laid out in the batch
};

struct Delivered {
  absl::Status end;  // what Next() returned last (OutOfRange at the end of data)
  std::vector<Example> examples;
  std::vector<int64_t> batch_sizes;
  PipelineStats stats;
  int64_t records_per_epoch = -2;
};

// Reads until Next() fails (at most `max_batches`).
Delivered Drain(const PipelineOptions& options, bool keep_pixels = false, int max_batches = 1000) {
  Delivered run;
  absl::StatusOr<std::unique_ptr<InputPipeline>> pipeline = InputPipeline::Create(options);
  if (!pipeline.ok()) {
    run.end = pipeline.status();
    return run;
  }
  const size_t values = static_cast<size_t>(options.height) * options.width * 3;
  for (int b = 0; b < max_batches; ++b) {
    absl::StatusOr<const Batch*> batch = (*pipeline)->Next();
    if (!batch.ok()) {
      run.end = batch.status();
      break;
    }
    run.batch_sizes.push_back((*batch)->size);
    for (int64_t i = 0; i < (*batch)->size; ++i) {
      Example e{(*batch)->names[i], (*batch)->labels[i], (*batch)->epochs[i], {}};
      if (keep_pixels)
        e.pixels.assign((*batch)->images + i * values, (*batch)->images + (i + 1) * values);
      run.examples.push_back(std::move(e));
    }
  }
  run.stats = (*pipeline)->stats();
  run.records_per_epoch = (*pipeline)->records_per_epoch();
  return run;
}

// The generated data set's names of `subset`, and the label of each (1001 classes).
std::map<std::string, int32_t> ExpectedNames(const std::string& subset, int64_t count) {
  std::map<std::string, int32_t> names;
  for (int64_t i = 0; i < count; ++i)
    names[GeneratedFileName(subset, i, static_cast<int>(i % kClasses))] =
        static_cast<int32_t>(i % kClasses) + 1;
  return names;
}

class PipelineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = new std::string(TempDir() + "/pipeline_test_data");
    Sh(absl::StrCat("rm -rf '", *root_, "'").c_str());
    for (DataFormat f : {DataFormat::kTFRecord, DataFormat::kFolder}) {
      const absl::Status s = MakeDataset(SmallSpec(Dir(f), f));
      ASSERT_TRUE(s.ok()) << s;
    }
  }
  static void TearDownTestSuite() {
    delete root_;
    root_ = nullptr;
  }
  static std::string Dir(DataFormat f) { return absl::StrCat(*root_, "/", DataFormatName(f)); }

  static PipelineOptions Options(DataFormat f, bool training) {
    PipelineOptions o;
    o.format = f;
    o.data_dir = Dir(f);
    o.subset = training ? "train" : "validation";
    o.training = training;
    o.batch = 8;
    o.height = 24;
    o.width = 32;
    o.shuffle_buffer = 10;
    o.epochs = 2;
    return o;
  }

  static std::string* root_;
};
std::string* PipelineTest::root_ = nullptr;

// A scratch copy of the TFRecord data set for tests that damage it.
std::string CopyOf(const std::string& from, const std::string& name) {
  const std::string to = absl::StrCat(TempDir(), "/", name);
  Sh(absl::StrCat("rm -rf '", to, "' && cp -r '", from, "' '", to, "'").c_str());
  return to;
}

// Each epoch's examples are exactly the subset's records, once each, with
// their labels.
void ExpectEveryRecordOncePerEpoch(const Delivered& run, const std::string& subset, int64_t count,
                                   int64_t epochs) {
  const std::map<std::string, int32_t> expected = ExpectedNames(subset, count);
  std::map<int64_t, std::multiset<std::string>> per_epoch;
  for (const Example& e : run.examples) {
    per_epoch[e.epoch].insert(e.name);
    auto it = expected.find(e.name);
    ASSERT_NE(it, expected.end()) << "unknown record " << e.name;
    EXPECT_EQ(e.label, it->second) << e.name;
  }
  ASSERT_EQ(per_epoch.size(), static_cast<size_t>(epochs));
  for (const auto& [epoch, names] : per_epoch) {
    EXPECT_EQ(names.size(), static_cast<size_t>(count)) << "epoch " << epoch;
    std::set<std::string> distinct(names.begin(), names.end());
    EXPECT_EQ(distinct.size(), names.size()) << "epoch " << epoch << " repeats a record";
    for (const auto& [name, label] : expected)
      EXPECT_EQ(names.count(name), 1u) << name << " in epoch " << epoch;
  }
}

TEST_F(PipelineTest, EachTrainingEpochDeliversEveryRecordOnceAcrossThreads) {
  for (DataFormat f : {DataFormat::kTFRecord, DataFormat::kFolder}) {
    for (auto [readers, decoders] : {std::pair{1, 1}, std::pair{2, 3}, std::pair{4, 2}}) {
      SCOPED_TRACE(absl::StrCat(DataFormatName(f), " readers ", readers, " decoders ", decoders));
      PipelineOptions o = Options(f, /*training=*/true);
      o.reader_threads = readers;
      o.decode_threads = decoders;
      o.epochs = 3;
      const Delivered run = Drain(o);
      EXPECT_TRUE(absl::IsOutOfRange(run.end)) << run.end;
      ExpectEveryRecordOncePerEpoch(run, "train", kTrainImages, 3);
      // Training batches run on across epochs: all full but the very last.
      ASSERT_FALSE(run.batch_sizes.empty());
      for (size_t b = 0; b + 1 < run.batch_sizes.size(); ++b) EXPECT_EQ(run.batch_sizes[b], 8);
      EXPECT_EQ(run.batch_sizes.back(), (3 * kTrainImages) % 8);
      EXPECT_EQ(run.stats.records_read, 3 * kTrainImages);
      EXPECT_EQ(run.stats.images_decoded, 3 * kTrainImages);
      EXPECT_EQ(run.stats.skipped_total(), 0);
      EXPECT_GT(run.stats.bytes_read, 0);
      EXPECT_EQ(run.records_per_epoch, kTrainImages);
    }
  }
}

TEST_F(PipelineTest, EvaluationEpochsKeepToTheirBatchesAndFileOrder) {
  for (DataFormat f : {DataFormat::kTFRecord, DataFormat::kFolder}) {
    SCOPED_TRACE(DataFormatName(f));
    PipelineOptions o = Options(f, /*training=*/false);
    o.decode_threads = 3;  // slots are claimed in the order records leave the buffer
    const Delivered run = Drain(o);
    EXPECT_TRUE(absl::IsOutOfRange(run.end)) << run.end;
    ExpectEveryRecordOncePerEpoch(run, "validation", kValidationImages, 2);
    // 11 records per epoch in batches of 8: 8 + 3, twice; no batch mixes epochs.
    EXPECT_EQ(run.batch_sizes, (std::vector<int64_t>{8, 3, 8, 3}));

    // One reader: the files' own order, every epoch.
    std::vector<std::string> order;
    if (f == DataFormat::kFolder) {
      absl::StatusOr<ImageFolderIndex> index = IndexImageFolder(Dir(f) + "/validation");
      ASSERT_TRUE(index.ok()) << index.status();
      for (const FolderImage& image : index->images) order.push_back(image.name);
    } else {
      absl::StatusOr<std::vector<std::string>> shards = FindShards(Dir(f), "validation");
      ASSERT_TRUE(shards.ok()) << shards.status();
      for (const std::string& path : *shards) {
        absl::StatusOr<TFRecordReader> reader = TFRecordReader::Open(path);
        ASSERT_TRUE(reader.ok()) << reader.status();
        std::string bytes;
        while (*reader->Next(&bytes)) {
          SourceRecord r;
          ASSERT_TRUE(ParseExampleRecord(bytes, "", &r).ok());
          order.push_back(r.name);
        }
      }
    }
    ASSERT_EQ(order.size(), static_cast<size_t>(kValidationImages));
    for (int64_t i = 0; i < 2 * kValidationImages; ++i)
      EXPECT_EQ(run.examples[i].name, order[i % kValidationImages]) << "position " << i;
  }
}

// Fails the test run (rather than hanging it) when a step does not finish.
class Watchdog {
 public:
  explicit Watchdog(int seconds)
      : thread_([this, seconds] {
          for (int i = 0; i < seconds * 10 && !done_; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
          if (!done_) {
            std::fprintf(stderr, "watchdog: the pipeline did not stop within %d s\n", seconds);
            std::_Exit(3);
          }
        }) {}
  ~Watchdog() {
    done_ = true;
    thread_.join();
  }

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

TEST_F(PipelineTest, AnEpochChangeWithEveryBatchInUseWaitsForAFreeOne) {
  Watchdog watchdog(120);
  // Evaluation closes a batch when the epoch changes; with the consumer
  // late, no free batch is left to open the next one.
  PipelineOptions o = Options(DataFormat::kTFRecord, /*training=*/false);
  o.batch = 4;
  o.queue_depth = 1;
  o.decode_threads = 2;
  o.epochs = 3;
  absl::StatusOr<std::unique_ptr<InputPipeline>> p = InputPipeline::Create(o);
  ASSERT_TRUE(p.ok()) << p.status();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // every batch fills up
  std::vector<int64_t> sizes;
  int64_t records = 0;
  for (;;) {
    absl::StatusOr<const Batch*> b = (*p)->Next();
    if (!b.ok()) {
      EXPECT_TRUE(absl::IsOutOfRange(b.status())) << b.status();
      break;
    }
    sizes.push_back((*b)->size);
    records += (*b)->size;
  }
  EXPECT_EQ(records, 3 * kValidationImages);
  EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4, 3, 4, 4, 3, 4, 4, 3}));
}

TEST_F(PipelineTest, PreprocessingHasTheBatchShapeAndRange) {
  for (bool training : {true, false}) {
    SCOPED_TRACE(training ? "train" : "eval");
    PipelineOptions o = Options(DataFormat::kTFRecord, training);
    o.epochs = 1;
    const Delivered run = Drain(o, /*keep_pixels=*/true);
    ASSERT_FALSE(run.examples.empty());
    for (const Example& e : run.examples) {
      ASSERT_EQ(e.pixels.size(), 24u * 32u * 3u);
      float lo = 2, hi = -2;
      for (float v : e.pixels) {
        ASSERT_TRUE(std::isfinite(v));
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      // Normalised to [-1, 1]; a generated image is never one flat colour.
      EXPECT_GE(lo, -1.0f) << e.name;
      EXPECT_LE(hi, 1.0f) << e.name;
      EXPECT_LT(lo, hi) << e.name;
    }
  }
}

TEST_F(PipelineTest, NhwcHoldsTheSameValuesAsNchw) {
  PipelineOptions o = Options(DataFormat::kTFRecord, /*training=*/false);
  o.epochs = 1;
  const Delivered nchw = Drain(o, true);
  o.layout = Layout::kNHWC;
  const Delivered nhwc = Drain(o, true);
  ASSERT_EQ(nchw.examples.size(), nhwc.examples.size());
  const int h = o.height, w = o.width;
  for (size_t i = 0; i < nchw.examples.size(); ++i) {
    ASSERT_EQ(nchw.examples[i].name, nhwc.examples[i].name);
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
          ASSERT_EQ(nchw.examples[i].pixels[(c * h + y) * w + x],
                    nhwc.examples[i].pixels[(y * w + x) * 3 + c])
              << nchw.examples[i].name << " c" << c << " y" << y << " x" << x;
  }
}

TEST_F(PipelineTest, TrainingPixelsDependOnSeedEpochAndRecordNotOnThreads) {
  auto by_record = [](const Delivered& run) {
    std::map<std::pair<std::string, int64_t>, std::vector<float>> m;
    for (const Example& e : run.examples) m[{e.name, e.epoch}] = e.pixels;
    return m;
  };
  PipelineOptions o = Options(DataFormat::kTFRecord, /*training=*/true);
  const auto one = by_record(Drain(o, true));
  o.reader_threads = 3;
  o.decode_threads = 4;
  const auto many = by_record(Drain(o, true));
  ASSERT_EQ(one.size(), static_cast<size_t>(2 * kTrainImages));
  EXPECT_TRUE(one == many) << "a record's training pixels changed with the thread counts";
  // The epochs draw different crops and flips: most records differ.
  int differ = 0;
  for (int64_t i = 0; i < kTrainImages; ++i) {
    const std::string name = GeneratedFileName("train", i, static_cast<int>(i % kClasses));
    differ += one.at({name, 0}) != one.at({name, 1});
  }
  EXPECT_GT(differ, kTrainImages / 2);
  o.seed = 2;
  EXPECT_FALSE(by_record(Drain(o, true)) == one) << "another seed gave the same pixels";
}

TEST_F(PipelineTest, ColourDistortionReachesTheTrainingImages) {
  auto by_record = [](const Delivered& run) {
    std::map<std::string, std::vector<float>> m;
    for (const Example& e : run.examples) m[e.name] = e.pixels;
    return m;
  };
  PipelineOptions o = Options(DataFormat::kTFRecord, /*training=*/true);
  o.epochs = 1;
  const auto none = by_record(Drain(o, true));
  o.color = ColorDistortion::kFast;
  const auto fast = by_record(Drain(o, true));
  o.color = ColorDistortion::kFull;
  const auto full = by_record(Drain(o, true));
  ASSERT_EQ(none.size(), static_cast<size_t>(kTrainImages));
  ASSERT_EQ(fast.size(), none.size());
  ASSERT_EQ(full.size(), none.size());
  // Same seed, same crops and flips: the colours alone tell the runs apart.
  int fast_differs = 0, full_differs = 0;
  for (const auto& [name, pixels] : none) {
    fast_differs += fast.at(name) != pixels;
    full_differs += full.at(name) != fast.at(name);
    for (const auto* run : {&fast, &full}) {
      for (float v : run->at(name)) {
        ASSERT_TRUE(std::isfinite(v)) << name;
        ASSERT_GE(v, -1.0f) << name;  // clipped before normalising
        ASSERT_LE(v, 1.0f) << name;
      }
    }
  }
  EXPECT_GT(fast_differs, kTrainImages * 3 / 4);
  EXPECT_GT(full_differs, kTrainImages * 3 / 4);
}

TEST_F(PipelineTest, ThousandClassesShiftsLabelsDownByOne) {
  PipelineOptions o = Options(DataFormat::kFolder, /*training=*/false);
  o.epochs = 1;
  o.classes = 1000;
  const Delivered run = Drain(o);
  const std::map<std::string, int32_t> expected = ExpectedNames("validation", kValidationImages);
  ASSERT_EQ(run.examples.size(), static_cast<size_t>(kValidationImages));
  for (const Example& e : run.examples) EXPECT_EQ(e.label, expected.at(e.name) - 1) << e.name;
}

TEST_F(PipelineTest, FolderAndTFRecordReadersAgreeOnLabelsAndPixels) {
  // The same spec gives the same JPEG bytes in both formats.
  absl::StatusOr<ImageFolderIndex> index = IndexImageFolder(Dir(DataFormat::kFolder) + "/train");
  ASSERT_TRUE(index.ok()) << index.status();
  std::map<std::string, std::pair<int64_t, std::string>> folder;  // name -> label, bytes
  for (const FolderImage& image : index->images)
    folder[image.name] = {image.label, ReadFile(image.path)};
  absl::StatusOr<std::vector<std::string>> shards = FindShards(Dir(DataFormat::kTFRecord), "train");
  ASSERT_TRUE(shards.ok()) << shards.status();
  size_t seen = 0;
  for (const std::string& path : *shards) {
    absl::StatusOr<TFRecordReader> reader = TFRecordReader::Open(path);
    ASSERT_TRUE(reader.ok()) << reader.status();
    std::string bytes;
    while (*reader->Next(&bytes)) {
      absl::StatusOr<ImageRecord> r = ParseImageExample(bytes);
      ASSERT_TRUE(r.ok()) << r.status();
      ASSERT_TRUE(folder.count(r->file_name)) << r->file_name;
      EXPECT_EQ(folder[r->file_name].first, r->label) << r->file_name;
      EXPECT_TRUE(folder[r->file_name].second == r->jpeg) << r->file_name;
      ++seen;
    }
  }
  EXPECT_EQ(seen, folder.size());

  // And both pipelines deliver the same labels and decoded, preprocessed pixels.
  for (bool training : {false, true}) {
    SCOPED_TRACE(training ? "train" : "eval");
    std::map<std::string, std::pair<int32_t, std::vector<float>>> out[2];
    for (DataFormat f : {DataFormat::kTFRecord, DataFormat::kFolder}) {
      PipelineOptions o = Options(f, training);
      o.epochs = 1;
      o.subset = "train";
      for (const Example& e : Drain(o, true).examples)
        out[f == DataFormat::kFolder][e.name] = {e.label, e.pixels};
    }
    ASSERT_EQ(out[0].size(), static_cast<size_t>(kTrainImages));
    ASSERT_EQ(out[1].size(), static_cast<size_t>(kTrainImages));
    for (const auto& [name, value] : out[0]) {
      ASSERT_TRUE(out[1].count(name)) << name;
      EXPECT_EQ(value.first, out[1][name].first) << name;
      // Evaluation is a pure function of the image. Training crops also use
      // the record's boxes, which only TFRecord carries: not compared.
      if (!training) {
        EXPECT_TRUE(value.second == out[1][name].second) << name;
      }
    }
  }
}

TEST_F(PipelineTest, DestroyingWithFullQueuesJoinsEveryThread) {
  Watchdog watchdog(120);
  for (bool training : {true, false}) {
    PipelineOptions o = Options(DataFormat::kTFRecord, training);
    o.epochs = 0;  // forever: readers and decoders end up blocked on full queues
    o.batch = 2;
    o.queue_depth = 1;
    o.reader_threads = 3;
    o.decode_threads = 3;
    o.shuffle_buffer = 4;
    absl::StatusOr<std::unique_ptr<InputPipeline>> p = InputPipeline::Create(o);
    ASSERT_TRUE(p.ok()) << p.status();
    ASSERT_TRUE((*p)->Next().ok());  // one batch held, the rest fill up
    // Wait until the queues are full (records read stop growing).
    int64_t last = -1;
    for (int i = 0; i < 600; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const int64_t now = (*p)->stats().records_read;
      if (now == last && now > 0) break;
      last = now;
    }
    p->reset();  // must return
  }
}

TEST_F(PipelineTest, StopWakesAConsumerAndLaterCallsAreCancelled) {
  Watchdog watchdog(120);
  PipelineOptions o = Options(DataFormat::kFolder, /*training=*/true);
  o.epochs = 0;
  o.batch = 4;
  absl::StatusOr<std::unique_ptr<InputPipeline>> p = InputPipeline::Create(o);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::Status consumer_end;
  int64_t consumed = 0;
  std::thread consumer([&] {
    for (;;) {
      absl::StatusOr<const Batch*> b = (*p)->Next();
      if (!b.ok()) {
        consumer_end = b.status();
        return;
      }
      ++consumed;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  (*p)->Stop();
  consumer.join();
  EXPECT_TRUE(absl::IsCancelled(consumer_end)) << consumer_end;
  EXPECT_GT(consumed, 0);
  EXPECT_TRUE(absl::IsCancelled((*p)->Next().status()));
  (*p)->Stop();  // idempotent
}

// Rewrites record `index` of the shard at `path` with a damaged JPEG.
void SpoilJpegOfRecord(const std::string& path, int64_t index, std::string* name) {
  absl::StatusOr<TFRecordReader> reader = TFRecordReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::vector<std::string> records;
  std::string bytes;
  while (*reader->Next(&bytes)) records.push_back(bytes);
  ASSERT_LT(index, static_cast<int64_t>(records.size()));
  absl::StatusOr<ImageRecord> r = ParseImageExample(records[index]);
  ASSERT_TRUE(r.ok());
  *name = r->file_name;
  r->jpeg = r->jpeg.substr(0, 40) + std::string(200, 'x');  // a header, then garbage
  records[index] = SerializeImageExample(*r);
  absl::StatusOr<TFRecordWriter> writer = TFRecordWriter::Create(path);
  ASSERT_TRUE(writer.ok());
  for (const std::string& rec : records) ASSERT_TRUE(writer->Write(rec).ok());
  ASSERT_TRUE(writer->Close().ok());
}

int64_t CountRecords(const std::string& path) {
  absl::StatusOr<TFRecordReader> reader = TFRecordReader::Open(path);
  int64_t n = 0;
  std::string bytes;
  while (reader.ok() && *reader->Next(&bytes)) ++n;
  return n;
}

TEST_F(PipelineTest, ABadImageFailsNamingFileAndRecordOrIsSkippedAndCounted) {
  const std::string dir = CopyOf(Dir(DataFormat::kTFRecord), "bad_image");
  const std::string shard = dir + "/train-00001-of-00003";
  std::string spoiled;
  SpoilJpegOfRecord(shard, 2, &spoiled);
  for (bool training : {true, false}) {
    SCOPED_TRACE(training ? "train" : "eval");
    PipelineOptions o = Options(DataFormat::kTFRecord, training);
    o.subset = "train";
    o.data_dir = dir;
    o.decode_threads = 2;
    const Delivered failed = Drain(o);
    EXPECT_FALSE(failed.end.ok());
    EXPECT_FALSE(absl::IsOutOfRange(failed.end)) << failed.end;
    EXPECT_TRUE(absl::StrContains(failed.end.message(), shard + " record 2")) << failed.end;

    o.on_bad_record = BadRecordPolicy::kSkip;
    const Delivered skipped = Drain(o);
    EXPECT_TRUE(absl::IsOutOfRange(skipped.end)) << skipped.end;
    EXPECT_EQ(skipped.examples.size(), static_cast<size_t>(2 * (kTrainImages - 1)));
    for (const Example& e : skipped.examples) EXPECT_NE(e.name, spoiled);
    EXPECT_EQ(skipped.stats.skipped.at("decode"), 2);  // once per epoch
    EXPECT_EQ(skipped.stats.skipped_total(), 2);
    ASSERT_FALSE(skipped.stats.skip_messages.empty());
    EXPECT_TRUE(absl::StrContains(skipped.stats.skip_messages[0], shard + " record 2"))
        << skipped.stats.skip_messages[0];
    EXPECT_TRUE(absl::StrContains(skipped.stats.ToString(), "skipped 2 bad records (decode 2)"))
        << skipped.stats.ToString();
    // Each epoch: every other record once.
    std::map<int64_t, std::set<std::string>> per_epoch;
    for (const Example& e : skipped.examples) EXPECT_TRUE(per_epoch[e.epoch].insert(e.name).second);
    for (const auto& [epoch, names] : per_epoch)
      EXPECT_EQ(names.size(), static_cast<size_t>(kTrainImages - 1)) << "epoch " << epoch;
    if (training) {  // a skipped record's slot is filled by the next: batches stay full
      for (size_t b = 0; b + 1 < skipped.batch_sizes.size(); ++b)
        EXPECT_EQ(skipped.batch_sizes[b], 8);
    }
  }
}

TEST_F(PipelineTest, ACorruptShardFailsNamingFileAndRecordOrLosesOnlyItsRest) {
  const std::string dir = CopyOf(Dir(DataFormat::kTFRecord), "bad_crc");
  const std::string shard = dir + "/train-00002-of-00003";
  const int64_t in_shard = CountRecords(shard);
  ASSERT_GT(in_shard, 0);
  std::string bytes = ReadFile(shard);
  bytes[kTFRecordHeaderBytes + 30] ^= 0x55;  // record 0's data: its CRC no longer matches
  WriteFile(shard, bytes);

  PipelineOptions o = Options(DataFormat::kTFRecord, /*training=*/true);
  o.data_dir = dir;
  const Delivered failed = Drain(o);
  EXPECT_TRUE(absl::IsDataLoss(failed.end)) << failed.end;
  EXPECT_TRUE(absl::StrContains(failed.end.message(), shard)) << failed.end;
  EXPECT_TRUE(absl::StrContains(failed.end.message(), "record 0")) << failed.end;

  o.on_bad_record = BadRecordPolicy::kSkip;
  const Delivered skipped = Drain(o);
  EXPECT_TRUE(absl::IsOutOfRange(skipped.end)) << skipped.end;
  // The framing is lost at record 0: the whole shard is left out, counted once per epoch.
  EXPECT_EQ(skipped.examples.size(), static_cast<size_t>(2 * (kTrainImages - in_shard)));
  EXPECT_EQ(skipped.stats.skipped.at("read"), 2);
  ASSERT_FALSE(skipped.stats.skip_messages.empty());
  EXPECT_TRUE(absl::StrContains(skipped.stats.skip_messages[0], "the rest of this file is unread"))
      << skipped.stats.skip_messages[0];
}

TEST_F(PipelineTest, ABadFolderImageIsNamedOrSkipped) {
  const std::string dir = CopyOf(Dir(DataFormat::kFolder), "bad_folder");
  const std::string bad = dir + "/validation/n00000002/broken.JPEG";
  WriteFile(bad, "not a jpeg at all");
  PipelineOptions o = Options(DataFormat::kFolder, /*training=*/false);
  o.data_dir = dir;
  const Delivered failed = Drain(o);
  EXPECT_FALSE(failed.end.ok());
  EXPECT_FALSE(absl::IsOutOfRange(failed.end)) << failed.end;
  EXPECT_TRUE(absl::StrContains(failed.end.message(), bad)) << failed.end;

  o.on_bad_record = BadRecordPolicy::kSkip;
  const Delivered skipped = Drain(o);
  EXPECT_TRUE(absl::IsOutOfRange(skipped.end)) << skipped.end;
  ExpectEveryRecordOncePerEpoch(skipped, "validation", kValidationImages, 2);
  EXPECT_EQ(skipped.stats.skipped.at("decode"), 2);
  // The hole left in an evaluation batch is closed up: 11 good of 12 files.
  EXPECT_EQ(skipped.batch_sizes, (std::vector<int64_t>{7, 4, 7, 4}));
}

// Data that is all bad under --on_bad_record=skip ends the pipeline with
// "no readable record" naming the data set, the count and the first reason,
// instead of reading on for ever: every shard's framing broken (nothing
// read), and every image undecodable (read, none decoded), in training
// (which reads for ever) and evaluation.
TEST_F(PipelineTest, AllBadDataEndsWithNoReadableRecordInsteadOfSpinning) {
  Watchdog watchdog(120);
  const std::string shards = CopyOf(Dir(DataFormat::kTFRecord), "all_bad_crc");
  for (const char* shard : {"/train-00000-of-00003", "/train-00001-of-00003",
                            "/train-00002-of-00003"}) {
    std::string bytes = ReadFile(shards + shard);
    bytes[kTFRecordHeaderBytes + 30] ^= 0x55;  // record 0's CRC fails: the file is unread
    WriteFile(shards + shard, bytes);
  }
  const std::string folder = CopyOf(Dir(DataFormat::kFolder), "all_bad_images");
  Sh(absl::StrCat("for f in $(find '", folder, "/train' -type f); do echo 'not a jpeg' > $f; done")
         .c_str());
  for (bool training : {true, false}) {
    SCOPED_TRACE(training ? "train" : "eval");
    PipelineOptions o = Options(DataFormat::kTFRecord, training);
    o.subset = "train";
    o.data_dir = shards;
    o.epochs = 0;
    o.on_bad_record = BadRecordPolicy::kSkip;
    const Delivered unread = Drain(o);
    EXPECT_TRUE(absl::IsNotFound(unread.end)) << unread.end;
    EXPECT_TRUE(absl::StrContains(unread.end.message(), "no readable record in " + shards))
        << unread.end;
    EXPECT_TRUE(absl::StrContains(unread.end.message(), "3 skipped (read 3)")) << unread.end;
    EXPECT_TRUE(absl::StrContains(unread.end.message(), "CRC")) << unread.end;
    EXPECT_TRUE(unread.examples.empty());

    o = Options(DataFormat::kFolder, training);
    o.subset = "train";
    o.data_dir = folder;
    o.epochs = 0;
    o.on_bad_record = BadRecordPolicy::kSkip;
    const Delivered undecoded = Drain(o);
    EXPECT_TRUE(absl::IsNotFound(undecoded.end)) << undecoded.end;
    EXPECT_TRUE(absl::StrContains(undecoded.end.message(), "every record was bad and skipped"))
        << undecoded.end;
    EXPECT_TRUE(absl::StrContains(undecoded.end.message(), "decode")) << undecoded.end;
    EXPECT_TRUE(undecoded.examples.empty());
  }
}

// A run asked to stop (the first signal) is not held in Next(): the wait
// ends within its 100 ms slice with Cancelled "... interrupted", long
// before one decoder could fill a batch of 1024 images decoded from
// 400-500 px JPEGs (seconds).
TEST_F(PipelineTest, AStopRequestEndsAWaitingNext) {
  Watchdog watchdog(120);
  DatasetSpec spec = SmallSpec(absl::StrCat(TempDir(), "/large_images"), DataFormat::kFolder);
  Sh(absl::StrCat("rm -rf '", spec.out, "'").c_str());
  spec.images = 8;
  spec.min_side = 400;
  spec.max_side = 500;
  ASSERT_TRUE(MakeDataset(spec).ok());
  PipelineOptions o = Options(DataFormat::kFolder, /*training=*/true);
  o.data_dir = spec.out;
  o.epochs = 0;
  o.batch = 1024;
  o.decode_threads = 1;
  std::atomic<int> asked{0};
  o.stop_requested = [&asked] { return ++asked >= 1; };
  absl::StatusOr<std::unique_ptr<InputPipeline>> p = InputPipeline::Create(o);
  ASSERT_TRUE(p.ok()) << p.status();
  const absl::StatusOr<const Batch*> batch = (*p)->Next();
  EXPECT_TRUE(absl::IsCancelled(batch.status())) << batch.status();
  EXPECT_TRUE(absl::EndsWith(batch.status().message(), "interrupted")) << batch.status();
  EXPECT_GE(asked.load(), 1);
}

TEST_F(PipelineTest, BadOptionsAndDataDirsAreClearErrors) {
  PipelineOptions o = Options(DataFormat::kTFRecord, true);
  auto error_of = [](const PipelineOptions& o) {
    absl::StatusOr<std::unique_ptr<InputPipeline>> p = InputPipeline::Create(o);
    return p.ok() ? std::string("OK") : std::string(p.status().message());
  };
  PipelineOptions b = o;
  b.batch = 0;
  EXPECT_TRUE(absl::StrContains(error_of(b), "batch 0")) << error_of(b);
  b = o;
  b.classes = 10;
  EXPECT_TRUE(absl::StrContains(error_of(b), "classes 10: must be 1000 or 1001")) << error_of(b);
  b = o;
  b.decode_threads = 0;
  EXPECT_TRUE(absl::StrContains(error_of(b), "decoders")) << error_of(b);
  b = o;
  b.data_dir = TempDir() + "/no/such/folder";
  EXPECT_TRUE(absl::StrContains(error_of(b), "--data_dir=" + b.data_dir)) << error_of(b);
  EXPECT_TRUE(absl::StrContains(error_of(b), "no such folder")) << error_of(b);
  b.data_dir = TempDir() + "/empty_data";
  Sh(absl::StrCat("mkdir -p '", b.data_dir, "'").c_str());
  EXPECT_TRUE(absl::StrContains(error_of(b), "the folder is empty")) << error_of(b);
  // A folder-format set read as TFRecord: no matching shards.
  b.data_dir = Dir(DataFormat::kFolder);
  const absl::Status s = CheckDataDir(b.data_dir, DataFormat::kTFRecord, "train");
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(absl::StrContains(s.message(), "--data_dir=" + b.data_dir)) << s;
  // And the other way round: no class folders.
  EXPECT_FALSE(CheckDataDir(Dir(DataFormat::kTFRecord), DataFormat::kFolder, "train").ok());
  EXPECT_TRUE(CheckDataDir(Dir(DataFormat::kFolder), DataFormat::kFolder, "validation").ok());
  absl::StatusOr<std::vector<DataFormat>> formats = DetectDataFormats(Dir(DataFormat::kFolder));
  ASSERT_TRUE(formats.ok()) << formats.status();
  EXPECT_EQ(*formats, std::vector<DataFormat>{DataFormat::kFolder});
  formats = DetectDataFormats(Dir(DataFormat::kTFRecord), "validation");
  ASSERT_TRUE(formats.ok()) << formats.status();
  EXPECT_EQ(*formats, std::vector<DataFormat>{DataFormat::kTFRecord});
  EXPECT_FALSE(DetectDataFormats(TempDir() + "/empty_data").ok());
  EXPECT_FALSE(ParseBadRecordPolicy("ignore").ok());
}

}  // namespace
}  // namespace cnnbench::input
