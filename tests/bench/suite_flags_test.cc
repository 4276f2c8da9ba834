// Every suite option is read once, only when its flag is given: a preset's
// value stands for every option of every kind the user leaves out, and an
// explicitly given flag overrides it (bench/cli/suite_flags.h).
#include "bench/cli/suite_flags.h"

#include <string>
#include <vector>

#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "bench/cli/flag_read.h"
#include "bench/suite/suite.h"
#include "gtest/gtest.h"

namespace cnnbench::bench {
namespace {

// `args` as a command line onto `preset`: each --name=value (or --noname)
// set on its Abseil flag and recorded as given, then ApplySuiteFlags.
absl::StatusOr<SuiteOptions> Apply(const std::vector<std::string>& args, SuiteOptions preset) {
  ForgetGivenFlags();
  std::vector<std::string> line = {"suite_flags_test"};
  line.insert(line.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : line) argv.push_back(a.data());
  RecordGivenFlags(static_cast<int>(argv.size()), argv.data());
  for (const std::string& arg : args) {
    absl::string_view text = arg;
    absl::ConsumePrefix(&text, "--");
    const size_t eq = text.find('=');
    std::string name(text.substr(0, eq));
    std::string value = eq == absl::string_view::npos ? "true" : std::string(text.substr(eq + 1));
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr && absl::StartsWith(name, "no")) {
      name = name.substr(2);
      value = "false";
      flag = absl::FindCommandLineFlag(name);
    }
    if (flag == nullptr) return absl::InvalidArgumentError(absl::StrCat("no flag ", name));
    std::string error;
    if (!flag->ParseFrom(value, &error)) return absl::InvalidArgumentError(error);
  }
  absl::Status status = ApplySuiteFlags(BenchmarkTimingFlags{}, preset);
  ForgetGivenFlags();
  if (!status.ok()) return status;
  return preset;
}

// A preset that sets an option of every kind, and every family's part, to
// a value no flag has by default.
SuiteOptions UnusualPreset() {
  absl::StatusOr<SuiteOptions> tiny = PresetOptions("tiny", 0);
  EXPECT_TRUE(tiny.ok()) << tiny.status();
  SuiteOptions o = *tiny;
  o.families = {"gemm", "peak"};                          // list of names
  o.train.batch_sizes = {3, 5};                           // list of numbers
  o.train.steps = 17;                                     // count
  o.train.overlap = false;                                // switch
  o.train.fuse_relu = false;
  o.train.conv_relu = false;
  o.drift_threshold = 0.5;                                // fraction
  o.cpu_conv_algorithm = CpuConvAlgorithm::kDirect;       // choice
  o.display_every = 7;                                    // choice with a number
  o.platform = "preset-platform";                         // text
  o.power_sample_ms = 5;
  o.keep_step_times = false;
  o.distortions = input::ColorDistortion::kFast;
  o.collectives.factor = 8;                               // the collectives' part
  o.collectives.graph = true;
  o.collectives.root = 1;
  o.collectives.dtypes = {"bf16"};
  o.collectives.ops = {"max"};
  o.collectives.ranks = {3};
  o.infer.fold_batch_norm = false;                        // the inference part
  o.infer.conv_relu = false;
  o.infer.include_copy = true;
  o.input.threads = {3};                                  // the input part
  o.input.on_bad_record = input::BadRecordPolicy::kSkip;
  o.input.batch = 9;
  o.bandwidth.bytes = {64};                               // the bandwidth part
  o.cuda.nhwc = false;                                    // the GPU part
  o.cuda.batch_norm_graphs = false;
  o.cuda.graph = false;
  o.cuda.rtc_attempts = 3;
  return o;
}

TEST(SuiteFlagsTest, WithoutFlagsEveryOptionIsThePresets) {
  const SuiteOptions preset = UnusualPreset();
  absl::StatusOr<SuiteOptions> o = Apply({}, preset);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->families, preset.families);
  EXPECT_EQ(o->train.batch_sizes, preset.train.batch_sizes);
  EXPECT_EQ(o->train.steps, 17);
  EXPECT_FALSE(o->train.overlap);
  EXPECT_FALSE(o->train.fuse_relu);
  EXPECT_FALSE(o->train.conv_relu);
  EXPECT_EQ(o->drift_threshold, 0.5);
  EXPECT_EQ(o->cpu_conv_algorithm, CpuConvAlgorithm::kDirect);
  EXPECT_EQ(o->display_every, 7);
  EXPECT_EQ(o->platform, "preset-platform");
  EXPECT_EQ(o->power_sample_ms, 5);
  EXPECT_FALSE(o->keep_step_times);
  EXPECT_EQ(o->distortions, input::ColorDistortion::kFast);
  EXPECT_EQ(o->collectives.factor, 8);
  EXPECT_TRUE(o->collectives.graph);
  EXPECT_EQ(o->collectives.root, 1);
  EXPECT_EQ(o->collectives.dtypes, std::vector<std::string>{"bf16"});
  EXPECT_EQ(o->collectives.ops, std::vector<std::string>{"max"});
  EXPECT_EQ(o->collectives.ranks, std::vector<int>{3});
  EXPECT_FALSE(o->infer.fold_batch_norm);
  EXPECT_FALSE(o->infer.conv_relu);
  EXPECT_TRUE(o->infer.include_copy);
  EXPECT_EQ(o->input.threads, std::vector<int>{3});
  EXPECT_EQ(o->input.on_bad_record, input::BadRecordPolicy::kSkip);
  EXPECT_EQ(o->input.batch, 9);
  EXPECT_EQ(o->bandwidth.bytes, std::vector<int64_t>{64});
  EXPECT_FALSE(o->cuda.nhwc);
  EXPECT_FALSE(o->cuda.batch_norm_graphs);
  EXPECT_FALSE(o->cuda.graph);
  EXPECT_EQ(o->cuda.rtc_attempts, 3);
}

TEST(SuiteFlagsTest, AGivenFlagOverridesThePresetInEveryKind) {
  absl::StatusOr<SuiteOptions> o = Apply(
      {"--families=train", "--batch_sizes=4", "--steps=2", "--overlap", "--fuse_relu=true",
       "--drift_threshold=0.25", "--cpu_conv_algorithm=winograd", "--display_every=auto",
       "--platform=given", "--power_sample_ms=0", "--keep_step_times", "--distortions=none",
       "--collective_factor=4", "--nocollective_graph", "--collective_root=0",
       "--collective_dtypes=fp32,int64", "--collective_ops=all", "--collective_ranks=1,2",
       "--fold_batch_norm", "--conv_relu", "--infer_include_copy=false", "--input_threads=1,2",
       "--on_bad_record=fail", "--input_batch=4", "--bandwidth_bytes=8,16", "--gpu_layout=nhwc",
       "--cuda_batch_norm=graph", "--cuda_graph", "--cuda_rtc_attempts=0"},
      UnusualPreset());
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->families, std::vector<std::string>{"train"});
  EXPECT_EQ(o->train.batch_sizes, std::vector<int64_t>{4});
  EXPECT_EQ(o->train.steps, 2);
  EXPECT_TRUE(o->train.overlap);
  EXPECT_TRUE(o->train.fuse_relu);
  EXPECT_EQ(o->drift_threshold, 0.25);
  EXPECT_EQ(o->cpu_conv_algorithm, CpuConvAlgorithm::kWinograd);
  EXPECT_EQ(o->display_every, TimingSettings::kDisplayAuto);
  EXPECT_EQ(o->platform, "given");
  EXPECT_EQ(o->power_sample_ms, 0);
  EXPECT_TRUE(o->keep_step_times);
  EXPECT_EQ(o->distortions, input::ColorDistortion::kNone);
  EXPECT_EQ(o->collectives.factor, 4);
  EXPECT_FALSE(o->collectives.graph);
  EXPECT_EQ(o->collectives.root, 0);
  EXPECT_EQ(o->collectives.dtypes, (std::vector<std::string>{"fp32", "int64"}));
  EXPECT_EQ(o->collectives.ops.size(), 5u);
  EXPECT_EQ(o->collectives.ranks, (std::vector<int>{1, 2}));
  EXPECT_TRUE(o->infer.fold_batch_norm);
  EXPECT_TRUE(o->infer.conv_relu);
  EXPECT_TRUE(o->train.conv_relu);  // one flag for both uses
  EXPECT_FALSE(o->infer.include_copy);
  EXPECT_EQ(o->input.threads, (std::vector<int>{1, 2}));
  EXPECT_EQ(o->input.on_bad_record, input::BadRecordPolicy::kFail);
  EXPECT_EQ(o->input.batch, 4);
  EXPECT_EQ(o->bandwidth.bytes, (std::vector<int64_t>{8, 16}));
  EXPECT_TRUE(o->cuda.nhwc);
  EXPECT_TRUE(o->cuda.batch_norm_graphs);
  EXPECT_TRUE(o->cuda.graph);
  EXPECT_EQ(o->cuda.rtc_attempts, 0);
}

// The older collective names are aliases of the new ones.
TEST(SuiteFlagsTest, AnOlderNameIsTheNewOnes) {
  absl::StatusOr<SuiteOptions> o =
      Apply({"--allreduce_iters=3", "--allreduce_bytes=1K,4K"}, UnusualPreset());
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->collectives.iters, 3);
  EXPECT_EQ(o->collectives.min_bytes, 1024);
  EXPECT_EQ(o->collectives.max_bytes, 4096);
  EXPECT_FALSE(Apply({"--allreduce_iters=3", "--collective_iters=4"}, UnusualPreset()).ok());
}

// A bad value of each kind is refused with the flag and its value named.
TEST(SuiteFlagsTest, EveryErrorNamesTheFlagAndItsValue) {
  for (const char* arg :
       {"--batch_sizes=4,4", "--batch_sizes=0", "--families=", "--steps=0",
        "--drift_threshold=-1", "--cpu_conv_algorithm=fastest", "--display_every=sometimes",
        "--platform=", "--collective_factor=1", "--collective_ranks=0", "--collective_bytes=8",
        "--input_threads=0", "--input_threads=2,zero", "--input_threads=300", "--on_bad_record=ignore", "--input_batch=0",
        "--bandwidth_bytes=12", "--gpu_layout=chwn", "--cuda_rtc_attempts=-2",
        "--collective_dtypes=fp8", "--collective_ops=mean"}) {
    absl::StatusOr<SuiteOptions> o = Apply({arg}, UnusualPreset());
    ASSERT_FALSE(o.ok()) << arg;
    const std::string name(absl::string_view(arg).substr(0, absl::string_view(arg).find('=')));
    EXPECT_TRUE(absl::StrContains(o.status().message(), name)) << arg << ": " << o.status();
  }
}

}  // namespace
}  // namespace cnnbench::bench
