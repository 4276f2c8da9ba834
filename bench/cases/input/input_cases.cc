// The input pipeline's cases on the timing harness (registration declared in suite.h).
#include "bench/cases/input/input_cases.h"

#include <algorithm>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/cli/flag_read.h"
#include "bench/harness/interrupt.h"
#include "bench/suite/names.h"
#include "benchmark/benchmark.h"
#include "core/device.h"
#include "core/status.h"
#include "input/pipeline/dataset_maker.h"
#include "input/pipeline/sources.h"

// Defined beside the only code that reads them.
ABSL_FLAG(std::string, input_threads, "",
          "decode threads of the input cases, comma-separated (default: 1 and every hardware "
          "thread); reader threads are a quarter of them, at least one");
ABSL_FLAG(int64_t, input_batch, cnnbench::bench::InputCaseOptions().batch,
          "batch size of the input cases (default: the first --batch_size, else 64)");
ABSL_FLAG(std::string, on_bad_record, "fail",
          "real data: fail stops at the first bad record (naming file and record); skip leaves "
          "bad records out, counts them by reason and reports them");

namespace cnnbench::bench {
namespace {

// A pipeline's waits end when the run is asked to stop (the first signal).
bool StopRequestedBySignal() { return InterruptSignal() != 0; }

using input::InputPipeline;
using input::PipelineOptions;
using input::PipelineStats;

class InputWorkload : public Workload {
 public:
  explicit InputWorkload(std::unique_ptr<InputPipeline> pipeline)
      : pipeline_(std::move(pipeline)), last_(pipeline_->stats()) {}
  ~InputWorkload() override { pipeline_->Stop(); }

  const Stream& stream() const override { return stream_; }
  absl::Status Run() override {
    absl::StatusOr<const input::Batch*> batch = pipeline_->Next();
    if (!batch.ok()) return batch.status();
    images_ += (*batch)->size;
    return absl::OkStatus();
  }

  absl::Status Report(benchmark::State& state) override {
    const PipelineStats now = pipeline_->stats();
    const PipelineOptions& o = pipeline_->options();
    // Every batch is full (training) or the epoch's last (evaluation): the
    // rate counts the images actually delivered.
    state.counters["images_per_second"] =
        benchmark::Counter(static_cast<double>(images_), benchmark::Counter::kIsRate);
    images_ = 0;
    // What each stage could give with all its threads busy, over the
    // pipeline's life so far (a repetition served from the buffers may read
    // nothing): the lowest one near images_per_second is the limit.
    auto capacity = [](int64_t items, double busy_seconds, int threads) {
      return busy_seconds > 0 ? items / busy_seconds * threads : 0.0;
    };
    // A counter that is 0 in every repetition would get a NaN coefficient of
    // variation from Google Benchmark (0 / 0), written as a bare NaN, which is
    // not JSON: zero counters are left out (the label still says what was skipped).
    auto set = [&state](const char* name, double value,
                        benchmark::Counter::Flags flags = benchmark::Counter::kDefaults) {
      if (value > 0) state.counters[name] = benchmark::Counter(value, flags);
    };
    set("read_capacity_images_per_second",
        capacity(now.records_read, now.read_seconds, o.reader_threads));
    set("decode_capacity_images_per_second",
        capacity(now.images_decoded, now.decode_seconds, o.decode_threads));
    set("consumer_wait_seconds", now.consumer_wait_seconds - last_.consumer_wait_seconds);
    set("bytes_read_per_second", static_cast<double>(now.bytes_read - last_.bytes_read),
        benchmark::Counter::kIsRate);
    set("skipped_records", static_cast<double>(now.skipped_total()));
    const std::string skipped =
        now.skipped_total() > 0 ? absl::StrCat(", ", SkippedNote(now)) : std::string();
    state.SetLabel(absl::StrCat(
        input::DataFormatName(o.format), " ", o.subset, ", ", o.reader_threads, " reader + ",
        o.decode_threads, " decode threads, batch ", o.batch, " ", o.height, "x", o.width,
        o.training && o.color != input::ColorDistortion::kNone
            ? absl::StrCat(", ", input::ColorDistortionName(o.color), " colour distortion")
            : "",
        skipped));
    last_ = now;
    return absl::OkStatus();
  }

 private:
  std::unique_ptr<InputPipeline> pipeline_;
  Stream stream_ = Stream::Cpu();
  PipelineStats last_;
  int64_t images_ = 0;
};

// The decode thread counts: the option's, else 1 and every hardware thread.
std::vector<int> ThreadCounts(const std::vector<int>& option) {
  if (!option.empty()) return option;
  const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  if (hardware == 1) return {1};
  return {1, hardware};
}

}  // namespace

absl::StatusOr<std::unique_ptr<Workload>> PrepareInputWorkload(const PipelineOptions& options,
                                                               int warmup) {
  ASSIGN_OR_RETURN(std::unique_ptr<InputPipeline> pipeline, InputPipeline::Create(options));
  for (int i = 0; i < warmup; ++i) {
    absl::StatusOr<const input::Batch*> batch = pipeline->Next();
    if (!batch.ok()) return batch.status();
  }
  return std::unique_ptr<Workload>(new InputWorkload(std::move(pipeline)));
}

absl::Status RegisterInputCases(const SuiteOptions& options, Harness& harness) {
  const std::vector<int> threads = ThreadCounts(options.input.threads);
  int64_t batch = options.input.batch;
  if (batch == 0)
    batch = options.train.batch_sizes.empty() ? 64 : options.train.batch_sizes.front();
  const int image_size = options.image_size > 0 ? static_cast<int>(options.image_size) : 224;

  // The user's folder is checked now, before any case runs.
  std::vector<input::DataFormat> formats = {input::DataFormat::kTFRecord,
                                            input::DataFormat::kFolder};
  if (!options.data_dir.empty()) {
    const absl::StatusOr<std::vector<input::DataFormat>> found =
        input::DetectDataFormats(options.data_dir, "train");
    if (!found.ok()) return found.status();
    formats = *found;
  }
  for (input::DataFormat format : formats) {
    for (bool training : {true, false}) {
      for (int t : threads) {
        TimedCase timed;
        timed.name = CaseName::Input(input::DataFormatName(format), training ? "train" : "eval", t)
                         .ToString();
        timed.family = FamilyName(Family::kInput);
        timed.iterations = options.train.steps;
        timed.iterations_flag = "--steps";
        timed.unit = benchmark::kMillisecond;
        PipelineOptions p;
        p.stop_requested = StopRequestedBySignal;
        p.format = format;
        p.data_dir = options.data_dir;
        p.subset = training ? "train" : "validation";
        p.training = training;
        p.batch = batch;
        p.height = p.width = image_size;
        p.decode_threads = t;
        p.reader_threads = std::max(1, t / 4);
        p.seed = 1;
        p.on_bad_record = options.input.on_bad_record;
        p.color = options.distortions;
        timed.prepare = [p, warmup = options.train.warmup_steps]() mutable
            -> absl::StatusOr<std::unique_ptr<Workload>> {
          if (p.data_dir.empty()) {  // a generated set, made on first use
            ASSIGN_OR_RETURN(p.data_dir, input::GeneratedDataDir(p.format));
          }
          return PrepareInputWorkload(p, warmup);
        };
        harness.Register(std::move(timed));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ApplyInputFlags(SuiteOptions& o) {
  RETURN_IF_ERROR_AS_IS(ReadList(FLAGS_input_threads, &o.input.threads, 1));
  for (int n : o.input.threads)
    if (n > 256)
      return absl::InvalidArgumentError(
          absl::StrCat(FlagWhere(absl::GetFlagReflectionHandle(FLAGS_input_threads)), "'", n,
                       "' is more than 256 threads"));
  RETURN_IF_ERROR_AS_IS(ReadCount(FLAGS_input_batch, int64_t{1}, &o.input.batch));
  return ReadChoice(FLAGS_on_bad_record, input::ParseBadRecordPolicy, &o.input.on_bad_record);
}

std::string SkippedNote(const input::PipelineStats& stats) {
  std::vector<std::string> reasons;
  for (const auto& [reason, count] : stats.skipped)
    reasons.push_back(absl::StrCat(reason, " ", count));
  return absl::StrCat("skipped ", stats.skipped_total(), " bad records (",
                      absl::StrJoin(reasons, ", "), ")");
}

absl::StatusOr<input::PipelineOptions> ModelPipelineOptions(const Graph& graph,
                                                            const SuiteOptions& options,
                                                            const std::string& subset) {
  input::PipelineOptions p;
  p.stop_requested = StopRequestedBySignal;
  p.format = input::DataFormat::kTFRecord;
  p.data_dir = options.data_dir;
  if (!p.data_dir.empty()) {
    ASSIGN_OR_RETURN(std::vector<input::DataFormat> formats,
                     input::DetectDataFormats(p.data_dir, subset));
    p.format = formats.front();
  } else {
    ASSIGN_OR_RETURN(p.data_dir, input::GeneratedDataDir(p.format));
  }
  p.on_bad_record = options.input.on_bad_record;
  const Shape& images = graph.nodes[graph.images].output;  // (N, C, H, W)
  p.subset = subset;
  p.training = subset == "train";
  p.batch = graph.batch;
  p.height = static_cast<int>(images[2]);
  p.width = static_cast<int>(images[3]);
  p.classes = static_cast<int>(graph.classes);
  p.layout = Layout::kNCHW;
  return p;
}

}  // namespace cnnbench::bench
