// //tools:scaling_model: predicted N-GPU and multi-host training throughput
// from one GPU's figure, the gradient size and the machine's links (or a
// measured all-reduce busbw curve), beside published and measured figures.
//   ./bazelw run //tools:scaling_model -- --config=tools/data/scaling/dgx1.json
//       [--measured=run.json] [--gpus=1,2,4,8 | --hosts=1,2,4] [--overlap=0.5]
//       [--scheme=allreduce|ps_cpu|ps_gpu|hierarchical|distributed_ps]
//       [--model=resnet50] [--format=markdown|csv] [--extrapolate]
// Exit codes: 0 done, 2 bad input (flags, configuration, measured file), 1 a
// failed write. docs/scaling_model.md has the formulas.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "bench/cli/flag_read.h"
#include "bench/suite/names.h"
#include "core/crash_handler.h"
#include "core/dtype.h"
#include "core/invocation.h"
#include "models/summary.h"
#include "models/zoo.h"
#include "tools/scaling_model_lib.h"

// Values are strings and checked here, so a malformed one exits 2 with the
// flag named (absl's own parse errors exit 1).
ABSL_FLAG(std::string, config, "", "machine, links and models (tools/data/scaling/*.json)");
ABSL_FLAG(std::string, measured, "",
          "the suite's Google Benchmark JSON: allreduce busbw curve and train cases to show");
ABSL_FLAG(std::string, gpus, "", "GPU counts to predict, comma-separated (default: the config's)");
ABSL_FLAG(std::string, hosts, "",
          "host counts to predict, comma-separated: each host with the config's gpus_per_host");
ABSL_FLAG(std::string, overlap, "",
          "fraction of the backward pass communication may hide behind, 0..1 (default: the "
          "config's)");
ABSL_FLAG(std::string, scheme, "",
          "allreduce, ps_cpu, ps_gpu, hierarchical or distributed_ps for every model (default: "
          "each model's)");
ABSL_FLAG(std::string, model, "", "only this model of the config (zoo name)");
ABSL_FLAG(std::string, format, "markdown", "markdown or csv");
ABSL_FLAG(std::string, precision, "fp32", "precision of the measured train cases to show");
ABSL_FLAG(std::string, data, "synthetic", "data kind of the measured train cases to show");
ABSL_FLAG(std::string, allreduce, "",
          "which measured all-reduce cases (<impl>/<dtype>, e.g. local/fp32) when the file has "
          "several");
ABSL_FLAG(bool, extrapolate, false,
          "outside the measured all-reduce sizes, use the nearest size's busbw (noted) instead "
          "of failing");

namespace cnnbench {
namespace {

constexpr int kBadInput = 2;

int Fail(int code, const std::string& message) {
  std::fprintf(stderr, "scaling_model: %s\n", message.c_str());
  return code;
}

// A count list (--gpus, --hosts) as the suite reads its list flags
// (bench/cli/flag_read.h: no empty item, no item twice, each at least 1);
// given empty, it is refused here, saying what leaving it out means.
absl::Status ReadCounts(const absl::Flag<std::string>& flag, std::vector<int>* out) {
  if (bench::FlagGiven(flag) && absl::GetFlag(flag).empty())
    return absl::InvalidArgumentError(
        absl::StrCat("--", absl::GetFlagReflectionHandle(flag).Name(),
                     " is empty (leave it out for the configuration's GPU counts)"));
  return bench::ReadList(flag, out, 1);
}

// --precision and --data choose the measured train cases shown: each must
// be what a train case name of the suite can hold (bench/suite/names.h),
// or no case could ever match and the column would be silently empty.
absl::Status CheckShownCases(const std::string& precision, const std::string& data) {
  if (absl::Status parsed = ParsePrecision(precision).status(); !parsed.ok())
    return absl::InvalidArgumentError(absl::StrCat("--precision=", precision, ": ", parsed.message()));
  const absl::StatusOr<bench::CaseName> name =
      bench::ParseCaseName(bench::TrainCaseName("model", precision, data, 1, 1));
  if (!name.ok())
    return absl::InvalidArgumentError(absl::StrCat("--data=", data, ": ", name.status().message()));
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ZooParameters(const std::string& name) {
  absl::StatusOr<Graph> graph = BuildModel(name);
  if (!graph.ok()) return graph.status();
  return Summarize(*graph).parameters;
}

// Flags absl does not know would make it exit 1; they are bad input (2).
bool AllFlagsKnown(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (!absl::ConsumePrefix(&arg, "--") && !absl::ConsumePrefix(&arg, "-")) continue;
    const std::string name(arg.substr(0, arg.find('=')));
    // absl's own (usage and flag-file) flags are not in the registry.
    static constexpr const char* kBuiltIn[] = {
        "help",    "helpfull",        "helpshort", "helppackage", "helpon",     "helpmatch",
        "version", "only_check_args", "flagfile",  "fromenv",     "tryfromenv", "undefok"};
    bool built_in = false;
    for (const char* b : kBuiltIn) built_in = built_in || name == b;
    if (built_in || absl::FindCommandLineFlag(name) != nullptr) continue;
    if (absl::StartsWith(name, "no") && absl::FindCommandLineFlag(name.substr(2)) != nullptr)
      continue;
    Fail(kBadInput, absl::StrCat("unknown flag --", name, " (--help lists them)"));
    return false;
  }
  return true;
}

int Run() {
  using scaling::RunOptions;
  const std::string config_path = absl::GetFlag(FLAGS_config);
  if (config_path.empty()) return Fail(kBadInput, "--config=<file> is required");
  RunOptions options;
  options.format = absl::GetFlag(FLAGS_format);
  if (options.format != "markdown" && options.format != "csv")
    return Fail(kBadInput,
                absl::StrCat("--format must be markdown or csv, got '", options.format, "'"));
  options.model = absl::GetFlag(FLAGS_model);
  options.precision = absl::GetFlag(FLAGS_precision);
  options.data = absl::GetFlag(FLAGS_data);
  if (absl::Status shown = CheckShownCases(options.precision, options.data); !shown.ok())
    return Fail(kBadInput, std::string(shown.message()));
  options.extrapolate = absl::GetFlag(FLAGS_extrapolate);
  if (const std::string overlap = absl::GetFlag(FLAGS_overlap); !overlap.empty()) {
    double v = 0;
    if (!absl::SimpleAtod(overlap, &v) || !(v >= 0 && v <= 1))
      return Fail(kBadInput, absl::StrCat("--overlap=", overlap, ": must be a number from 0 to 1"));
    options.overlap = v;
  }
  if (const std::string scheme = absl::GetFlag(FLAGS_scheme); !scheme.empty()) {
    absl::StatusOr<scaling::Scheme> parsed = scaling::ParseScheme(scheme);
    if (!parsed.ok()) return Fail(kBadInput, absl::StrCat("--scheme: ", parsed.status().message()));
    options.scheme = *parsed;
  }
  if (bench::FlagGiven(FLAGS_gpus) && bench::FlagGiven(FLAGS_hosts))
    return Fail(kBadInput, "give --gpus or --hosts, not both");
  std::vector<int> gpus, hosts;
  if (absl::Status read = ReadCounts(FLAGS_gpus, &gpus); !read.ok())
    return Fail(kBadInput, std::string(read.message()));
  if (absl::Status read = ReadCounts(FLAGS_hosts, &hosts); !read.ok())
    return Fail(kBadInput, std::string(read.message()));

  absl::StatusOr<scaling::Config> config = scaling::LoadConfig(config_path, ZooParameters);
  if (!config.ok()) return Fail(kBadInput, std::string(config.status().message()));
  if (!options.model.empty()) {
    bool found = false;
    for (const scaling::ModelEntry& m : config->models) found = found || m.name == options.model;
    if (!found)
      return Fail(kBadInput, absl::StrCat("--model=", options.model, ": ", config_path,
                                          " has no model of that name"));
  }
  options.gpus = gpus;
  for (int h : hosts) options.gpus.push_back(h * config->machine.gpus_per_host);

  std::optional<scaling::Measured> measured;
  scaling::Curves curves;
  if (const std::string path = absl::GetFlag(FLAGS_measured); !path.empty()) {
    std::vector<std::string> warnings;
    absl::StatusOr<scaling::Measured> loaded = scaling::LoadMeasured(path, &warnings);
    for (const std::string& w : warnings)
      std::fprintf(stderr, "scaling_model: warning: %s\n", w.c_str());
    if (!loaded.ok()) return Fail(kBadInput, std::string(loaded.status().message()));
    measured = std::move(*loaded);
    absl::StatusOr<scaling::Curves> chosen =
        scaling::ChooseCurves(*measured, absl::GetFlag(FLAGS_allreduce));
    if (!chosen.ok()) return Fail(kBadInput, std::string(chosen.status().message()));
    // A file without the curve would leave every prediction on the
    // declared links while claiming to use the measurement.
    if (chosen->allreduce == nullptr)
      return Fail(kBadInput, scaling::NoCurveMessage(*measured));
    curves = *chosen;
  } else if (!absl::GetFlag(FLAGS_allreduce).empty()) {
    return Fail(kBadInput, "--allreduce needs --measured=<suite JSON>");
  }

  absl::StatusOr<std::string> text =
      scaling::RenderTables(*config, measured.has_value() ? &*measured : nullptr, curves, options);
  if (!text.ok()) return Fail(kBadInput, std::string(text.status().message()));
  if (std::fwrite(text->data(), 1, text->size(), stdout) != text->size() ||
      std::fflush(stdout) != 0)
    return Fail(1, absl::StrCat("cannot write the output: ", std::strerror(errno)));
  return 0;
}

}  // namespace
}  // namespace cnnbench

int main(int argc, char** argv) {
  cnnbench::InstallCrashHandler(argv[0]);
  cnnbench::ChangeToInvocationDirectory();
  absl::SetProgramUsageMessage(
      "scaling_model --config=tools/data/scaling/dgx1.json [--measured=run.json] "
      "[--gpus=1,2,4,8 | --hosts=1,2] [--overlap=0..1] "
      "[--scheme=allreduce|ps_cpu|ps_gpu|hierarchical|distributed_ps] [--model=NAME] "
      "[--format=markdown|csv] [--extrapolate]");
  if (!cnnbench::AllFlagsKnown(argc, argv)) return cnnbench::kBadInput;
  cnnbench::bench::RecordGivenFlags(argc, argv);
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  if (positional.size() > 1)
    return cnnbench::Fail(cnnbench::kBadInput,
                          absl::StrCat("unexpected argument '", positional[1],
                                       "' (inputs are --config and --measured)"));
  return cnnbench::Run();
}
