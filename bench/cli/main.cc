// //bench:all: registers the suite that fits this machine (or what the flags
// ask for), adds the platform and methodology to the JSON context, and runs
// Google Benchmark. Its --benchmark_* flags work as it documents them; the
// timing ones (repetitions, min_time) are read here too, because every case
// states its own timing settings (docs/benchmarks.md says which flag governs
// which family). --benchmark_out is written by the suite (bench/output/result_output.h)
// so that no run loses or half-writes a file, and every write is checked.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "bench/cases/collective/collective_cases.h"
#include "bench/cases/infer/infer_cases.h"
#include "bench/cli/flag_read.h"
#include "bench/cli/flag_values.h"
#include "bench/cli/mpi_run.h"
#include "bench/cli/preflight.h"
#include "bench/cli/suite_flags.h"
#include "bench/cli/usage.h"
#include "bench/harness/case_filter.h"
#include "bench/harness/harness.h"
#include "bench/harness/interrupt.h"
#include "bench/harness/power_sampler.h"
#include "bench/output/context.h"
#include "bench/output/result_output.h"
#include "bench/output/run_store.h"
#include "bench/output/run_summary.h"
#include "bench/suite/names.h"
#include "bench/suite/suite.h"
#include "benchmark/benchmark.h"
#include "core/compile_log.h"
#include "core/crash_handler.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/gpu_runtime.h"
#include "core/invocation.h"
#include "core/platform.h"
#include "core/status.h"
#include "kernels/collectives/communicator.h"
#include "kernels/collectives/mpi.h"
#include "kernels/collectives/nccl.h"
#include "kernels/cuda/engine_pick.h"
#include "kernels/cuda/plan_choices.h"
#include "train/trace.h"

namespace cnnbench::bench {
namespace {

void AddMethodologyContext(const SuiteOptions& o) {
  benchmark::AddCustomContext("preset", o.preset);
  benchmark::AddCustomContext("warmup_steps", absl::StrCat(o.train.warmup_steps));
  benchmark::AddCustomContext("steps", absl::StrCat(o.train.steps));
  benchmark::AddCustomContext("repetitions", absl::StrCat(o.repetitions));
  benchmark::AddCustomContext("kernel_min_time", absl::StrCat(o.kernel.min_time));
  benchmark::AddCustomContext("cpu_backend", o.backend);
  if (o.backend == "onednn")
    benchmark::AddCustomContext("cpu_conv_algorithm",
                                std::string(CpuConvAlgorithmName(o.cpu_conv_algorithm)));
  benchmark::AddCustomContext("cuda_graph", o.cuda.graph ? "true" : "false");
  benchmark::AddCustomContext("gpu_layout", o.cuda.nhwc ? "nhwc" : "nchw");
  benchmark::AddCustomContext("cuda_batch_norm", o.cuda.batch_norm_graphs ? "graph" : "legacy");
  benchmark::AddCustomContext(
      "cuda_rtc_attempts", absl::StrCat(cuda::ResolveRuntimeCompiledAttempts(o.cuda.rtc_attempts)));
  benchmark::AddCustomContext("cuda_rtc_process_builds",
                              absl::StrCat(cuda::RuntimeCompiledProcessBuildsLeft()));
  benchmark::AddCustomContext("cuda_plan_cache", cuda::PlanChoices::Process().enabled()
                                                     ? cuda::PlanChoices::Process().path()
                                                     : std::string("none"));
  benchmark::AddCustomContext("compile_deadline_s", CompileDeadlineSeconds() > 0
                                                        ? absl::StrCat(CompileDeadlineSeconds())
                                                        : std::string("none"));
  benchmark::AddCustomContext("image_size",
                              o.image_size > 0 ? absl::StrCat(o.image_size) : "model default");
  benchmark::AddCustomContext("optimizer", "sgd momentum 0.9");
  benchmark::AddCustomContext("bucket_bytes", absl::StrCat(o.train.bucket_bytes));
  benchmark::AddCustomContext("threads_per_replica", o.train.threads_per_replica > 0
                                                         ? absl::StrCat(o.train.threads_per_replica)
                                                         : std::string("cores / replicas"));
  benchmark::AddCustomContext("overlap", o.train.overlap ? "true" : "false");
  benchmark::AddCustomContext("fuse_relu", o.train.fuse_relu ? "true" : "false");
  benchmark::AddCustomContext("train_accuracy", o.train.accuracy ? "true" : "false");
  benchmark::AddCustomContext("keep_step_times", o.keep_step_times ? "true" : "false");
  benchmark::AddCustomContext("drift_threshold", absl::StrCat(o.drift_threshold));
  AddCollectiveContext(o);
  AddInferContext(o);
  benchmark::AddCustomContext("collective_timeout_s",
                              absl::StrCat(absl::ToInt64Seconds(o.collective_timeout)));
  const bool real =
      std::find(o.train.data.begin(), o.train.data.end(), "real") != o.train.data.end();
  const bool input_cases = std::find(o.families.begin(), o.families.end(),
                                     FamilyName(Family::kInput)) != o.families.end();
  benchmark::AddCustomContext(
      "data_dir", !o.data_dir.empty()   ? o.data_dir
                  : real || input_cases ? "generated: a data set made by the suite (make_dataset: "
                                          "256 train images of 200-500 px, 10 classes)"
                                        : "none");
  if (real) benchmark::AddCustomContext("input_cores", absl::StrCat(o.train.input_cores));
  if (real || input_cases)
    benchmark::AddCustomContext("distortions", input::ColorDistortionName(o.distortions));
  // What the run's families ran, not every family's settings: an
  // inference-only run states its batches, not the training steps.
  auto has = [&o](std::initializer_list<Family> families) {
    for (Family f : families)
      if (std::find(o.families.begin(), o.families.end(), FamilyName(f)) != o.families.end())
        return true;
    return false;
  };
  std::vector<std::string> method;
  if (has({Family::kTrain, Family::kInput}))
    method.push_back(absl::StrCat("train and input cases: ", o.train.warmup_steps,
                                  " warm-up steps, ", o.train.steps, " timed steps"));
  if (has({Family::kInfer}))
    method.push_back(absl::StrCat("infer cases: ", o.infer.warmup, " warm-up batches, ",
                                  o.infer.iterations, " timed batches"));
  method.push_back(absl::StrCat(o.repetitions, " repetition(s), mean reported"));
  if (has({Family::kConv, Family::kFc, Family::kPool, Family::kBatchNorm, Family::kRelu,
           Family::kGemm, Family::kPeak, Family::kBandwidth}))
    method.push_back(
        absl::StrCat("kernel and GEMM cases: at least ", o.kernel.min_time, " s per repetition"));
  benchmark::AddCustomContext("methodology", absl::StrJoin(method, "; "));
}

// The console of the ranks other than 0 of an MPI job: they run every case
// (each is one rank of it) but rank 0 alone reports.
class SilentReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

int Fail(int code, const absl::Status& status) {  // without source locations unless --verbose
  std::fprintf(stderr, "cnnbench: %s\n", UserMessage(status).c_str());
  return code;
}

// How the results are written, from Google Benchmark's flags.
struct OutputFlags {
  std::string out_path;  // --benchmark_out; "" until a default run names one
  std::string out_format;
  std::string display_format;
  // No --benchmark_out: the run writes JSON under results/ and ends on the
  // report's headline tables (bench/output/run_summary.h).
  bool default_out = false;
};

absl::StatusOr<OutputFlags> ReadOutputFlags(int argc, char** argv) {
  OutputFlags o;
  o.out_path = BenchmarkFlagValue(argc, argv, "benchmark_out").value_or("");
  o.out_format = BenchmarkFlagValue(argc, argv, "benchmark_out_format").value_or("json");
  o.default_out = o.out_path.empty();
  o.display_format = BenchmarkFlagValue(argc, argv, "benchmark_format").value_or("console");
  for (const auto& [flag, format] : {std::pair{"benchmark_out_format", o.out_format},
                                     std::pair{"benchmark_format", o.display_format}}) {
    if (format != "console" && format != "json" && format != "csv")
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, "=", format, ": unknown format (console, json, csv)"));
  }
  return o;
}

// Google Benchmark's flags, then the suite's (unknown flags: a clear message
// and exit 1). Google Benchmark would write --benchmark_out itself,
// unchecked, and truncate it before knowing whether anything runs:
// ResultFile writes it instead, and the library's own file goes to /dev/null.
// Then --store is checked.
absl::Status ParseFlags(int argc, char** argv) {
  static std::string null_out = "--benchmark_out=/dev/null";
  std::vector<char*> args(argv, argv + argc);
  args.push_back(null_out.data());  // a default run writes under results/
  int args_count = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&args_count, args.data());  // takes the --benchmark_* flags
  absl::SetProgramUsageMessage(
      absl::StrCat("cnnbench suite: ", UsageLine(), "; --help lists the flags"));
  RecordGivenFlags(argc, argv);
  absl::ParseCommandLine(args_count, args.data());
  return CheckStoreSpec(absl::GetFlag(FLAGS_store));
}

// The names of the cases --benchmark_filter lets run, as Google Benchmark
// will choose them (the harness's progress counts those); none is an error.
absl::StatusOr<std::vector<std::string>> SelectCases(Harness& harness,
                                                     const std::vector<std::string>& names) {
  ASSIGN_OR_RETURN_AS_IS(const CaseFilter filter,
                         CaseFilter::Parse(benchmark::GetBenchmarkFilter()));
  std::vector<bool> selected(harness.case_count());
  std::vector<std::string> selected_names;
  for (int i = 0; i < harness.case_count(); ++i) {
    selected[i] = filter.Matches(harness.InstanceName(i));
    if (selected[i]) selected_names.push_back(names[i]);
  }
  harness.progress().Select(selected);
  // --trace_file names the file itself when one case is traced.
  SetTracedCaseCount(static_cast<int>(
      std::count_if(selected_names.begin(), selected_names.end(), [](const std::string& n) {
        return absl::StartsWith(n, "train/") || absl::StartsWith(n, "infer/");
      })));
  if (!selected_names.empty()) return selected_names;
  return absl::InvalidArgumentError(
      filter.spec().empty() ? std::string("no case to run: the options select none")
                            : absl::StrCat("no case to run: --benchmark_filter=", filter.spec(),
                                           " matches none of the ", harness.case_count(),
                                           " case(s) the options select (without the filter, "
                                           "--list shows them); no output was written"));
}

// The results file (rank 0 only; null when there is none): --benchmark_out,
// or for a default run a file under results/ named by platform and time
// (`output.out_path` is set to it). Runs the harness stopped on are left
// out; a file written before the run's end (as each case finishes, or when
// a signal arrives) and an interrupted run's file say so, and how far it
// got (the report marks it in the Environment table).
absl::StatusOr<std::unique_ptr<ResultFile>> OpenResults(OutputFlags& output,
                                                        const SuiteOptions& options,
                                                        Harness& harness, bool under_mpi) {
  if (output.default_out) {
    const std::string platform =
        options.platform.empty()
            ? MultiHostPlatformName(CollectPlatformInfo().platform,
                                    options.mpi != nullptr ? options.mpi->hosts : 1)
            : options.platform;
    absl::StatusOr<std::string> path = DefaultResultsPath("results", platform, std::time(nullptr));
    if (path.ok()) {
      output.out_path = *path;
    } else {
      std::fprintf(stderr, "cnnbench: no results file: %s (give --benchmark_out=PATH)\n",
                   std::string(path.status().message()).c_str());
    }
  }
  if (output.out_path.empty()) return std::unique_ptr<ResultFile>();
  ASSIGN_OR_RETURN_AS_IS(
      std::unique_ptr<ResultFile> out,
      ResultFile::Open(output.out_path, output.default_out ? "json" : output.out_format));
  out->SetDropCheck([&harness] { return harness.stopped(); });
  out->SetEndContext([&harness] {
    std::vector<std::pair<std::string, std::string>> entries = EndOfRunContext();
    if (const std::string ended = JobEndNote(); !ended.empty()) {
      entries.push_back({"interrupted", ended});
    } else if (StopSignal() != 0) {
      const int started = harness.progress().started();
      const int selected = harness.progress().selected();
      entries.push_back(
          {"interrupted", absl::StrCat(StopDescription(), " after ", started, " of ", selected,
                                       " cases had started (the one running then is left out); ",
                                       selected - started, " not run")});
    }
    return entries;
  });
  // What a file written before the run's end says (read on the signal
  // watcher's thread too: the count is the file's own).
  out->SetPartialNote([selected = harness.progress().selected()](int cases) {
    if (const std::string ended = JobEndNote(); !ended.empty()) return ended;
    if (StopSignal() != 0)
      return absl::StrCat(StopDescription(), " after ", cases, " of ", selected,
                          " case(s) had finished (written when the signal arrived; the run was "
                          "stopping)");
    return absl::StrCat("not finished: ", cases, " of ", selected,
                        " case(s) had finished when this was written (rewritten as each case "
                        "finishes; the run's end writes it once more, so a file that still says "
                        "this was cut short: killed, out of memory or crashed)");
  });
  RemoveOnSecondSignal(out->temp_path().c_str());
  return out;
}

// The power sensors, opened once when --power_sample_ms asks (the context
// says which there are, or why none), handed to the harness.
absl::Status OpenPowerSensors(const SuiteOptions& options, Harness& harness,
                              PowerSensors& sensors) {
  const int power_ms = options.power_sample_ms;
  std::vector<std::string> gpu_bus_ids;
  for (int i = 0; i < options.gpu_count; ++i) {
    absl::StatusOr<gpu::DeviceProperties> props = gpu::GetDeviceProperties(i);
    gpu_bus_ids.push_back(props.ok() ? props->pci_bus_id : "");
  }
  if (power_ms > 0) {
    sensors = PowerSensors::Open(gpu_bus_ids);
    harness.SetPowerSensors(&sensors, std::chrono::milliseconds(power_ms));
  }
  benchmark::AddCustomContext("power",
                              power_ms > 0 ? sensors.Describe() : "off (--power_sample_ms=0)");
  benchmark::AddCustomContext("power_sample_ms", absl::StrCat(power_ms));
  return absl::OkStatus();
}

// The JSON context of the run (platform, methodology, the definitions of
// the selected cases' models, command, ranks, what NCCL was told), and rank
// 0's header line on stderr (under MPI, with where the results go).
void AddContexts(const SuiteOptions& options, const MpiRanks& mpi_ranks, bool under_mpi,
                 const std::string& command_line, const std::vector<std::string>& cases,
                 const std::string& results_path) {
  PlatformInfo info = AddPlatformContext(options.platform, mpi_ranks.hosts);
  AddMethodologyContext(options);
  AddModelDefinitionContext(cases);
  AddRunContext(command_line);
  benchmark::AddCustomContext("ranks", absl::StrCat(mpi_ranks.size));
  benchmark::AddCustomContext("hosts", absl::StrCat(mpi_ranks.hosts));
  if (under_mpi) {
    benchmark::AddCustomContext("mpi_version", mpi_ranks.library_version);
    benchmark::AddCustomContext("host_facts", mpi_ranks.host_facts);
  }
  // NCCL picks its algorithm and protocol per call unless told; what it was
  // told is part of the conditions a multi-GPU figure was taken under.
  for (const char* name : {"NCCL_ALGO", "NCCL_PROTO"}) {
    const char* value = std::getenv(name);
    benchmark::AddCustomContext(absl::AsciiStrToLower(name), value != nullptr && *value != '\0'
                                                                 ? value
                                                                 : "auto (NCCL's choice)");
  }
  if (mpi_ranks.rank != 0) return;
  std::fprintf(
      stderr, "cnnbench (%s build) on %s (%s, %s, %d GPU(s)): preset %s, %zu case(s)%s\n",
      BuildCompilationMode(), info.platform.c_str(), info.cpu_model.c_str(),
      CpuCountText(info).c_str(), info.gpu_count, options.preset.c_str(), cases.size(),
      under_mpi ? absl::StrCat(", ", mpi_ranks.size, " MPI ranks on ", mpi_ranks.hosts, " host(s)")
                      .c_str()
                : "");
  // Named at the start: if rank 0 dies, the file holds what had finished.
  if (under_mpi && !results_path.empty())
    std::fprintf(stderr, "cnnbench: rank 0 writes the results to %s as each case finishes\n",
                 results_path.c_str());
}

// Where the finished cases are, for the interrupt lines.
std::string FinishedCasesAt(const ResultFile* out, const std::string& out_path) {
  return out != nullptr ? absl::StrCat("the cases finished before it are in ", out_path)
                        : "the cases finished before it are above";
}

// After the cases: the results written (before MPI is finalized: that
// waits for every rank, and one still in a collective would hold them until
// mpirun's kill), then, interrupted under MPI, rank 0 ends the job (every
// rank at once: a rank the signal did not reach may wait in a collective
// that will never complete). Returns the write's status.
absl::Status WriteResults(ResultFile* out, size_t ran, const OutputFlags& output,
                          const Communicator* world, bool rank0, StoreReport* stored) {
  const std::string& out_path = output.out_path;
  absl::Status written = absl::OkStatus();
  if (out != nullptr && ran > 0) {
    written = out->Commit();
    // The run kept in the store (rank 0 alone has `out`), from the file
    // just written, or from where a failed write saved it.
    const std::string& json = written.ok() ? out_path : out->rescue_path();
    if (!json.empty() && !stored->stored)  // else kept when the signal came
      *stored = StoreRun(absl::GetFlag(FLAGS_store), json,
                         output.default_out ? "json" : output.out_format);
    if (!written.ok()) PrintStoreReport(*stored, /*to_stdout=*/false);
  }
  if (world != nullptr && StopSignal() != 0 && rank0) {
    PrintStoreReport(*stored, /*to_stdout=*/false);
    std::fprintf(stderr, "cnnbench: interrupted by %s; %s\n", StopDescription().c_str(),
                 written.ok() ? FinishedCasesAt(out, out_path).c_str()
                              : std::string(written.message()).c_str());
    std::fflush(stderr);
    AbortMpiJob(InterruptExitCode(StopSignal()), "interrupted: ending every rank");
  }
  return written;
}

// Leaves the MPI job, if any, and returns `status`. Rank 0 has said all it
// says by then: a rank that finalizes and exits non-zero has mpirun kill the
// job's others, and rank 0's last lines (a failed case, the summary) would
// be lost if it were still writing them.
int LeaveMpi(std::unique_ptr<Communicator> world, int status) {
  std::fflush(stdout);
  std::fflush(stderr);
  world.reset();
  if (MpiEnvironment::Launched()) {
    if (absl::StatusOr<MpiEnvironment*> env = MpiEnvironment::Get(); env.ok())
      (*env)->Finalize().IgnoreError();
  }
  return status;
}

// The run's last lines: a default run's summary (not when the console is
// JSON or CSV for a program to read), then where the run was kept.
void PrintEndScreen(const OutputFlags& output, bool wrote, const StoreReport& stored) {
  if (output.default_out && wrote && output.display_format == "console")
    PrintSummary(output.out_path);
  PrintStoreReport(stored, output.display_format == "console");
}

// The exit status of a run that wrote its output: interrupted, a case
// failed, or 0.
int RunExitStatus(const Harness& harness, const ResultFile* out, const std::string& out_path,
                  bool rank0) {
  if (const int signal = StopSignal(); signal != 0) {
    std::fprintf(stderr, "cnnbench: interrupted by %s; %s\n", StopDescription().c_str(),
                 FinishedCasesAt(out, out_path).c_str());
    return InterruptExitCode(signal);
  }
  if (!harness.failed_cases().empty()) {
    if (rank0)  // under MPI, rank 0 alone says it (every rank exits with the status)
      std::fprintf(stderr, "cnnbench: %zu case(s) failed (an error, not unsupported or OOM): %s\n",
                   harness.failed_cases().size(),
                   absl::StrJoin(harness.failed_cases(), ", ").c_str());
    return kCaseFailedExit;
  }
  if (const std::vector<std::string> unwritten = UnwrittenOutputs(); !unwritten.empty()) {
    if (rank0)
      std::fprintf(stderr,
                   "cnnbench: %zu output(s) beside the figures could not be written (the cases' "
                   "figures are in the results): %s\n",
                   unwritten.size(), absl::StrJoin(unwritten, "; ").c_str());
    return kCaseFailedExit;
  }
  return 0;
}

// The first signal rewrites the results file at once, saying so, before
// a launcher's follow-up kill (mpirun's comes a second later). Under MPI it
// also keeps the run in the store then (`stored`) and says so: a launcher
// that passes a rank's death on as SIGTERM kills the ranks a second later,
// often while rank 0 waits in a collective for the rank that died.
void WatchFirstSignal(std::optional<FirstSignalWatcher>& watcher, ResultFile& out,
                      StoreReport& stored, const OutputFlags& output, const Harness& harness,
                      const MpiRanks& mpi_ranks, bool under_mpi) {
  watcher.emplace([&out, &stored, &output, &harness, &mpi_ranks, under_mpi] {
    if (!out.Checkpoint().ok() || !under_mpi) return;
    if (out.cases_in_target() > 0)
      stored = StoreRun(absl::GetFlag(FLAGS_store), output.out_path,
                        output.default_out ? "json" : output.out_format);
    std::fprintf(
        stderr, "cnnbench: rank 0 (on %s) got %s in case %s; %d finished case(s) are in %s%s\n",
        mpi_ranks.host_names.empty() ? "" : mpi_ranks.host_names[0].c_str(),
        SignalName(InterruptSignal()).c_str(), harness.current_case().c_str(),
        out.cases_in_target(), output.out_path.c_str(), stored.stored ? " and the store" : "");
    std::fflush(stderr);
  });
}

// Under MPI: the ranks agree on stopping, and a timed-out collective ends
// the job, whichever case meets it (bench/cli/mpi_run.h): the results
// written and kept first.
void SetUpMpiEnding(SuiteOptions& options, Harness& harness, Communicator& world,
                    const MpiRanks& mpi_ranks, ResultFile* out, const OutputFlags& output) {
  harness.SetStopAgreement(AgreeOnStopping(world, mpi_ranks.rank));
  const JobEnd end{&mpi_ranks, &harness, out, output.out_path,
                   output.default_out ? "json" : output.out_format};
  options.end_job = [end](const absl::Status& why) { EndJobOnCollectiveTimeout(end, why); };
  harness.SetFailureHook([end](const std::string&, const absl::Status& why) {
    if (absl::IsDeadlineExceeded(why)) EndJobOnCollectiveTimeout(end, why);
  });
}

// The run's steps: flags, the MPI job, the cases, the ranks' agreement, the
// output, the context, the cases run, the output written, the summary.
int Main(int argc, char** argv) {
  InstallCrashHandler(argv[0]);
  const std::string command_line = CommandLine(argc, argv);
  if (const std::optional<int> done = HelpOrRefusal(argc, argv)) return *done;
  ChangeToInvocationDirectory();  // relative --benchmark_out paths: where the user typed them
  // Before Initialize, which removes them from argv.
  const absl::StatusOr<BenchmarkTimingFlags> timing = ReadBenchmarkTimingFlags(argc, argv);
  if (!timing.ok()) return Fail(kBadUsage, timing.status());
  absl::StatusOr<OutputFlags> output = ReadOutputFlags(argc, argv);
  if (!output.ok()) return Fail(kBadUsage, output.status());
  if (absl::Status flags = ParseFlags(argc, argv); !flags.ok()) return Fail(kBadUsage, flags);

  // Both outlive the run: the registered cases point into them.
  absl::StatusOr<SuiteOptions> options = SuiteOptionsFromFlags(*timing);
  if (!options.ok()) return Fail(kBadUsage, options.status());
  MpiRanks mpi_ranks;
  absl::StatusOr<std::unique_ptr<Communicator>> world = JoinMpiJob(*options, mpi_ranks);
  if (!world.ok()) return Fail(kBadUsage, world.status());
  const bool under_mpi = *world != nullptr;
  const bool rank0 = mpi_ranks.rank == 0;

  Harness harness(TimingOf(*options));
  harness.progress().set_quiet(!rank0);
  absl::StatusOr<std::vector<std::string>> names = RegisterSuite(*options, harness);
  if (!names.ok()) return Fail(kBadUsage, names.status());
  absl::StatusOr<std::vector<std::string>> selected = SelectCases(harness, *names);
  if (!selected.ok()) return Fail(kBadUsage, selected.status());
  if (under_mpi) {
    const absl::Status agreed =
        AgreeAcrossRanks(**world, mpi_ranks, *options, *selected, argc, argv);
    if (!agreed.ok()) return Fail(kBadUsage, agreed);
  }
  if (absl::GetFlag(FLAGS_list)) {
    if (rank0)
      for (const auto& n : *selected) std::printf("%s\n", n.c_str());
    return 0;
  }

  std::unique_ptr<ResultFile> out;
  if (rank0) {
    absl::StatusOr<std::unique_ptr<ResultFile>> opened =
        OpenResults(*output, *options, harness, under_mpi);
    if (!opened.ok()) return Fail(kOutputFailed, opened.status());
    out = *std::move(opened);
  }
  // mpirun passes a signal on to every rank and kills them a second later:
  // its follow-up is not the user's second signal.
  if (under_mpi) TreatParentSignalsAsOneRequest(true);
  InstallInterruptHandlers();
  std::optional<FirstSignalWatcher> signal_watcher;
  StoreReport stored;
  if (out != nullptr)
    WatchFirstSignal(signal_watcher, *out, stored, *output, harness, mpi_ranks, under_mpi);
  harness.SetStopCheck([] { return InterruptSignal() != 0; });
  if (under_mpi) SetUpMpiEnding(*options, harness, **world, mpi_ranks, out.get(), *output);
  harness.set_verbose(absl::GetFlag(FLAGS_verbose));
  if (absl::GetFlag(FLAGS_verbose)) SetCompileLog(true);
  PowerSensors power_sensors;
  if (absl::Status power = OpenPowerSensors(*options, harness, power_sensors); !power.ok())
    return Fail(kBadUsage, power);
  AddContexts(*options, mpi_ranks, under_mpi, command_line, *selected,
              out != nullptr ? output->out_path : "");

  std::unique_ptr<benchmark::BenchmarkReporter> display =
      rank0 ? MakeDisplayReporter([&harness] { return harness.stopped(); })
            : std::make_unique<SilentReporter>();
  const size_t ran = out ? benchmark::RunSpecifiedBenchmarks(display.get(), out->reporter())
                         : benchmark::RunSpecifiedBenchmarks(display.get());
  harness.Release();
  benchmark::Shutdown();
  signal_watcher.reset();  // its work done, if a signal came
  const absl::Status written = WriteResults(out.get(), ran, *output, world->get(), rank0, &stored);
  // The filter was checked above; Google Benchmark disagreeing still must not pass.
  if (ran == 0)
    return LeaveMpi(*std::move(world),
                    Fail(kBadUsage, absl::InternalError("no case ran; no output was written")));
  if (!written.ok()) return LeaveMpi(*std::move(world), Fail(kOutputFailed, written));
  PrintEndScreen(*output, out != nullptr, stored);
  return LeaveMpi(*std::move(world), RunExitStatus(harness, out.get(), output->out_path, rank0));
}

}  // namespace
}  // namespace cnnbench::bench

int main(int argc, char** argv) { return cnnbench::bench::Main(argc, argv); }
