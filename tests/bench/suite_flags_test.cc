// Every suite option is read once, only when its flag is given: a preset's
// value stands for every option of every kind the user leaves out, and an
// explicitly given flag overrides it (bench/cli/suite_flags.h).
#include "bench/cli/suite_flags.h"

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "bench/cli/flag_read.h"
#include "bench/cli/flag_values.h"
#include "bench/suite/suite.h"
#include "core/status.h"
#include "gtest/gtest.h"

ABSL_DECLARE_FLAG(std::string, distortions);
ABSL_DECLARE_FLAG(int, image_size);

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
  // The one rule first, as //bench:all applies it (bench/cli/main.cc).
  RETURN_IF_ERROR_AS_IS(CheckCommandLine(static_cast<int>(argv.size()), argv.data()));
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
  o.infer.conv_add = false;
  o.infer.concat_in_place = false;
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
  EXPECT_FALSE(o->infer.conv_add);
  EXPECT_FALSE(o->infer.concat_in_place);
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
       "--fold_batch_norm", "--conv_relu", "--conv_add", "--concat_in_place",
       "--infer_include_copy=false",
       "--input_threads=1,2", "--on_bad_record=fail", "--input_batch=4", "--bandwidth_bytes=8,16",
       "--gpu_layout=nhwc", "--cuda_batch_norm=graph", "--cuda_graph", "--cuda_rtc_attempts=0"},
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
  EXPECT_TRUE(o->infer.conv_add);
  EXPECT_TRUE(o->infer.concat_in_place);
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

// The error `args` get, "" when they are fine.
std::string ErrorOf(const std::vector<std::string>& args) {
  absl::StatusOr<SuiteOptions> o = Apply(args, UnusualPreset());
  return o.ok() ? "" : std::string(o.status().message());
}

// Every kind of flag (a list, a name, a count, a switch, a text, Google
// Benchmark's) given twice is an error naming both values, never the last
// one kept.
TEST(FlagRuleTest, AFlagGivenTwiceIsAnErrorNamingBothValues) {
  const std::vector<std::vector<std::string>> twice = {
      {"--preset=quick", "--preset=tiny"},
      {"--models=lenet", "--models=trivial"},
      {"--batch_sizes=2", "--batch_sizes=4"},
      {"--steps=2", "--steps", "3"},
      {"--overlap", "--nooverlap"},
      {"--platform=a", "--platform=b"},
      {"--benchmark_repetitions=2", "--benchmark_repetitions=3"},
      {"--benchmark_filter=a", "--benchmark_filter=b"},
  };
  for (const std::vector<std::string>& args : twice) {
    const std::string error = ErrorOf(args);
    const std::string name = args[0].substr(0, args[0].find('='));
    EXPECT_TRUE(absl::StartsWith(error, name + " is given twice")) << args[0] << ": " << error;
    EXPECT_TRUE(absl::StrContains(error, args[0])) << error;
    EXPECT_TRUE(absl::StrContains(error, args.size() == 2 ? args[1] : args[1] + " " + args[2]))
        << error;
  }
  // Abseil's own flags about reading flags may repeat.
  const char* flagfiles[] = {"t", "--undefok=a", "--undefok=b"};
  EXPECT_TRUE(CheckCommandLine(3, flagfiles).ok());
}

// Whole numbers: decimal digits alone, everywhere; too large says its limit.
TEST(FlagRuleTest, WholeNumbersAreDecimalDigitsAndTooLargeSaysTheLimit) {
  EXPECT_EQ(*ParseWholeNumber<int>("12"), 12);
  EXPECT_EQ(*ParseWholeNumber<int>("-3"), -3);
  EXPECT_EQ(*ParseWholeNumber<int>("2147483647"), 2147483647);
  EXPECT_EQ(*ParseWholeNumber<int>("-2147483648"), std::numeric_limits<int>::min());
  EXPECT_EQ(*ParseWholeNumber<int64_t>("-9223372036854775808"),
            std::numeric_limits<int64_t>::min());
  for (const char* bad : {"0x10", "+5", " 5", "5 ", "1e3", "", "-", "5k", "1.0"})
    EXPECT_FALSE(ParseWholeNumber<int>(bad).ok()) << bad;
  EXPECT_EQ(ParseWholeNumber<int>("2147483648").status().message(),
            "'2147483648' is too large (at most 2147483647)");
  EXPECT_EQ(ParseWholeNumber<int>("-2147483649").status().message(),
            "'-2147483649' is too small (at least -2147483648)");
  EXPECT_EQ(ParseWholeNumber<int64_t>("99999999999999999999999").status().message(),
            "'99999999999999999999999' is too large (at most 9223372036854775807)");
  // The same through every kind of number flag: the suite's ints and
  // int64s that Abseil parses, list items, byte counts, Google
  // Benchmark's; each error names the flag and its value.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--steps=2147483648", "--steps=2147483648: '2147483648' is too large (at most 2147483647)"},
      {"--collective_root=0x1", "--collective_root=0x1: '0x1' is not a whole number"},
      {"--input_batch=9223372036854775808", "is too large (at most 9223372036854775807)"},
      {"--batch_sizes=0x10", "--batch_sizes=0x10: '0x10' is not a whole number"},
      {"--batch_sizes=2,99999999999999999999", "is too large (at most 9223372036854775807)"},
      {"--gpus=+1", "--gpus=+1: '+1' is not a whole number"},
      {"--collective_ranks=0x2", "--collective_ranks=0x2: '0x2' is not a whole number"},
      {"--display_every=0x5", "--display_every=0x5"},
      {"--display_every=99999999999", "is too large (at most 2147483647)"},
      {"--benchmark_repetitions=0x3", "--benchmark_repetitions=0x3: '0x3' is not a whole number"},
      {"--benchmark_repetitions=2147483648", "is too large (at most 2147483647)"},
      {"--steps=", "--steps=: empty"},
      {"--steps", "--steps needs a value"},
      {"--benchmark_repetitions", "--benchmark_repetitions needs a value"},
      {"--v=0x1", "--v=0x1: '0x1' is not a whole number"},
  };
  for (const auto& [arg, expected] : cases) {
    const std::string error = ErrorOf({arg});
    EXPECT_TRUE(absl::StrContains(error, expected)) << arg << ": " << error;
  }
}

// Byte counts: digits with nccl-tests' K, M or G; too large in their unit.
TEST(FlagRuleTest, ByteCountsTooLargeSayTheLimitInTheirUnit) {
  EXPECT_EQ(ParseByteCount("99999999999G").status().message(),
            "'99999999999G' is too large (at most 8589934591G)");
  EXPECT_EQ(ParseByteCount("99999999999999999999").status().message(),
            "'99999999999999999999' is too large (at most 9223372036854775807)");
  for (const char* bad : {"0x10", " 1K", "1K ", "+1K"})
    EXPECT_FALSE(ParseByteCount(bad).ok()) << bad;
  EXPECT_TRUE(absl::StrContains(ErrorOf({"--collective_bytes=1,99999999999G"}),
                                "'99999999999G' is too large (at most 8589934591G)"));
  EXPECT_TRUE(absl::StrContains(ErrorOf({"--bandwidth_bytes=99999999999999999992"}),
                                "too large (at most 9223372036854775807)"));
}

// Spaces around a value or a list's item are refused everywhere, never
// trimmed: a whole value (any flag, Google Benchmark's too) and an item of
// every list.
TEST(FlagRuleTest, SpacesAroundAValueOrAnItemAreRefusedEverywhere) {
  for (const char* arg :
       {"--batch_sizes= 2", "--families=train, infer", "--models=lenet ,trivial", "--steps= 5",
        "--platform= box", "--preset=tiny ", "--collective_ranks=1, 2", "--collective_bytes=1K, 2K",
        "--collective_dtypes=fp32, bf16", "--collective_ops=sum, max", "--precisions=fp32 ",
        "--drift_threshold= 0.1", "--overlap= true", "--benchmark_filter= gemm",
        "--input_threads=1,\t2"}) {
    const std::string error = ErrorOf({arg});
    EXPECT_TRUE(absl::StrContains(error, "has spaces around it")) << arg << ": " << error;
    const std::string name(absl::string_view(arg).substr(0, absl::string_view(arg).find('=')));
    EXPECT_TRUE(absl::StrContains(error, name)) << arg << ": " << error;
  }
  // A list's error gives the list without them.
  EXPECT_TRUE(absl::StrContains(ErrorOf({"--families=train, infer"}), "give train,infer"))
      << ErrorOf({"--families=train, infer"});
  // Spaces inside a text value are its own.
  absl::StatusOr<SuiteOptions> o = Apply({"--platform=my box"}, UnusualPreset());
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->platform, "my box");
}

// Names: one name given twice says so in the user's words, whichever
// spelling; switches and decimals by the same rule.
TEST(FlagRuleTest, NamesSwitchesAndDecimalsFollowTheRule) {
  EXPECT_TRUE(absl::StrContains(ErrorOf({"--precisions=fp32,fp32"}), "'fp32' is given twice"));
  EXPECT_TRUE(
      absl::StrContains(ErrorOf({"--collective_dtypes=fp32,fp32"}), "'fp32' is given twice"));
  const std::string alias = ErrorOf({"--collective_dtypes=fp32,float"});
  EXPECT_TRUE(absl::StrContains(alias, "'fp32' and 'float' are the same type")) << alias;
  EXPECT_FALSE(absl::StrContains(alias, "'fp32' is fp32")) << alias;
  EXPECT_TRUE(absl::StrContains(ErrorOf({"--overlap=maybe"}), "'maybe' is not true or false"));
  EXPECT_TRUE(absl::StrContains(ErrorOf({"--drift_threshold=0x1"}), "not a decimal number"));
  EXPECT_TRUE(absl::StrContains(ErrorOf({"--drift_threshold=1e999"}), "too large (at most"));
  EXPECT_TRUE(absl::StrContains(ErrorOf({"--benchmark_min_time=0x1"}), "not a decimal number"));
  EXPECT_TRUE(
      absl::StrContains(ErrorOf({"--benchmark_counters_tabular=maybe"}), "not true or false"));
  absl::StatusOr<SuiteOptions> o =
      Apply({"--overlap=no", "--drift_threshold=0.25", "--collective_dtypes=float,bf16"},
            UnusualPreset());
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_FALSE(o->train.overlap);
  EXPECT_EQ(o->drift_threshold, 0.25);
  EXPECT_EQ(o->collectives.dtypes, (std::vector<std::string>{"fp32", "bf16"}));
}

// --help says 0 is --image_size's default (each model's own size): it is
// accepted.
TEST(FlagRuleTest, ImageSizeZeroIsTheDocumentedDefault) {
  SuiteOptions preset = UnusualPreset();
  preset.image_size = 64;
  absl::StatusOr<SuiteOptions> o = Apply({"--image_size=0"}, preset);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->image_size, 0);
  EXPECT_EQ(absl::GetFlagReflectionHandle(FLAGS_image_size).DefaultValue(), "0");
  EXPECT_FALSE(Apply({"--image_size=-1"}, preset).ok());
}

// No error ends in an empty reason: a parser that gives none still says
// what is wrong.
TEST(FlagRuleTest, NoMessageEndsInAnEmptyReason) {
  ForgetGivenFlags();
  std::vector<std::string> line = {"t", "--distortions=odd"};
  std::vector<char*> argv;
  for (std::string& a : line) argv.push_back(a.data());
  RecordGivenFlags(2, argv.data());
  absl::SetFlag(&FLAGS_distortions, "odd");
  int out = 0;
  const absl::Status status = ReadChoice(
      FLAGS_distortions,
      [](const std::string&) -> absl::StatusOr<int> { return absl::InvalidArgumentError(""); },
      &out);
  ForgetGivenFlags();
  absl::SetFlag(&FLAGS_distortions, "none");
  ASSERT_FALSE(status.ok());
  EXPECT_FALSE(absl::EndsWith(status.message(), ": ")) << status;
  EXPECT_TRUE(absl::StartsWith(status.message(), "--distortions=odd: ")) << status;
  for (const char* arg : {"--steps=", "--families=", "--families=a,,b",
                          "--collective_bytes=", "--display_every=", "--platform=", "--overlap="}) {
    const std::string error = ErrorOf({arg});
    EXPECT_FALSE(error.empty()) << arg;
    EXPECT_FALSE(absl::EndsWith(error, ": ") || absl::EndsWith(error, ":")) << arg << ": " << error;
  }
}

}  // namespace
}  // namespace cnnbench::bench
