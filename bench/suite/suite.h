// What the runner registers: the options (flags and presets) and the case
// families. Every case is registered at run time from data.
#ifndef CNNBENCH_BENCH_SUITE_H_
#define CNNBENCH_BENCH_SUITE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/cases/bandwidth/bandwidth_options.h"
#include "bench/cases/collective/collective_options.h"
#include "bench/cases/infer/infer_options.h"
#include "bench/cases/input/input_options.h"
#include "bench/cases/kernel/kernel_options.h"
#include "bench/cases/train/train_options.h"
#include "bench/harness/harness.h"
#include "core/device.h"
#include "input/image/preprocess.h"
#include "kernels/collectives/communicator.h"
#include "kernels/kernel.h"
#include "kernels/onednn/conv_choices.h"
#include "models/graph.h"
#include "train/step_plan.h"

namespace cnnbench::bench {

// When an MPI launcher (mpirun, srun) started the suite, this process is
// one rank of the job: training cases run one replica per process, the
// all-reduce cases reduce across processes (docs/benchmarks.md).
struct MpiRanks {
  int rank = 0, size = 1;
  int local_rank = 0;  // among the ranks on this host: the GPU it drives
  int hosts = 1;
  std::vector<std::string> host_names;  // by rank (MPI_Get_processor_name)
  // Each host's facts, as rank 0 gathered them: "a (ranks 0, 1; AMD EPYC;
  // 2 CPUs; 23.5 GiB) | b (ranks 2, 3; ...)".
  std::string host_facts;
  std::string library_version;
};

// How GPU cases run (train cases and the kernel cases on cuda).
struct CudaCaseOptions {
  bool graph = true;              // GPU training steps replay a captured CUDA graph
  bool nhwc = true;               // fp16/bf16/tf32 GPU activations in NHWC (else NCHW)
  bool batch_norm_graphs = true;  // CudaBackendOptions::batch_norm_graphs
  int rtc_attempts = -1;          // CudaBackendOptions::runtime_compiled_attempts
  // Run-time compiled engine builds in the whole process (-1: the
  // environment's, else 24) and the plan-choice file ("": the
  // environment's, else none): process-wide, put in place once.
  int rtc_process_builds = -1;
  std::string plan_cache;
};

// What the runner registers: the options every family reads, then each
// family's own part.
struct SuiteOptions {
  std::string preset;                   // quick, published, full, tiny
  std::vector<std::string> families;    // registered CaseFamilies() (bench/suite/names.h)
  std::vector<std::string> precisions;  // fp32, tf32, fp16, bf16
  std::vector<int> gpus;                // 0 = the CPU
  absl::Duration collective_timeout = absl::Minutes(5);  // train, collectives, grads
  const MpiRanks* mpi = nullptr;                         // set under an MPI launcher
  // Under MPI, what ends the job when a collective timed out (the results
  // written, the line said, every rank ended; it does not return); unset:
  // AbortMpiJob with the error.
  std::function<void(const absl::Status&)> end_job;
  std::string data_dir;                                  // data:real training, input cases
  // Colour distortion of real training images (data:real training and the
  // input cases): none, Inception's fast mode, tf_cnn_benchmarks' full one.
  input::ColorDistortion distortions = input::ColorDistortion::kNone;
  int64_t image_size = 0;          // 0: each model's own (train and kernel cases)
  int repetitions = 5;             // every family (after --benchmark_repetitions)
  std::string backend = "onednn";  // for CPU cases
  // What oneDNN's convolutions run (kernels/onednn/conv_choices.h).
  CpuConvAlgorithm cpu_conv_algorithm = CpuConvAlgorithm::kTimed;
  int gpu_count = 0;  // GPUs visible: cuda cases register only with one
  std::string platform;
  // Inside a run, for the cases timed step by step (train, infer): each
  // repetition's step times in the JSON; a live progress line every this
  // many steps (TimingSettings::display_every); the drift above which a
  // label and the report flag a case (bench/harness/iteration_stats.h DriftRatio).
  bool keep_step_times = true;
  int display_every = -1;
  double drift_threshold = 0.05;
  // Each repetition's timed span samples the power, energy and clock
  // sensors every this many ms (bench/harness/power_sampler.h); 0: off.
  int power_sample_ms = 100;
  // Seconds after the start past which plan building stops (0: the
  // environment's CNNBENCH_COMPILE_DEADLINE_S, else none).
  double compile_deadline_s = 0;
  // Single-replica train and infer cases: after the first repetition's
  // timed steps, one more step traced into this file, the case's name
  // inserted (TraceFilePath); "" none.
  std::string trace_file;

  TrainCaseOptions train;
  InferCaseOptions infer;
  KernelCaseOptions kernel;
  CollectiveCaseOptions collectives;
  BandwidthCaseOptions bandwidth;
  InputCaseOptions input;
  CudaCaseOptions cuda;
};

// An MPI job's CPU ranks run the convolution algorithms rank 0 timed
// (kernels/onednn/conv_choices.h): rank 0 compiles first, alone, then
// sends `choices`; the others merge them into theirs before they compile,
// so nothing is timed twice and no two ranks time beside each other. A
// collective: every rank calls it, rank 0 after compiling, the others
// before.
absl::Status ShareConvChoices(Communicator& comm, ConvChoices& choices);

// For oneDNN cases, which algorithm the plan's convolution passes run
// (--cpu_conv_algorithm): ", conv timed: Winograd in 14 of 48 passes";
// "" on other backends.
std::string ConvAlgorithmNote(const SuiteOptions& options, const Backend& backend,
                              const StepPlan& plan);

// Where case `name`'s trace goes for --trace_file=`path`: `path` itself
// when the run traces one case (SetTracedCaseCount(1), as
// tf_cnn_benchmarks' --trace_file), else the case's name, '/' and ':' made
// '_' and '-', before the extension ("trace.json" ->
// "trace.train_lenet_fp32_synthetic_batch-8_gpus-0.json").
std::string TraceFilePath(const std::string& path, const std::string& name);
// How many of the selected cases trace (train and infer cases); set once
// the filter has chosen them. Unset (-1): names are always inserted.
void SetTracedCaseCount(int count);

// The most cases the quick preset (the default without a GPU) may select
// on a machine without a GPU: about 3 minutes of cases on 2 cores
// (tests/bench/suite_test.cc holds it to this).
inline constexpr int kQuickCaseBound = 60;

// Every preset's name, in the order --help and errors list them.
inline constexpr const char* kPresetNames[] = {"quick", "published", "full", "inference", "tiny"};

// The preset's defaults for this machine (`gpu_count` GPUs visible).
absl::StatusOr<SuiteOptions> PresetOptions(const std::string& preset, int gpu_count);

// Folds the user's timing flags into `options`: --benchmark_repetitions (or
// the suite's --repetitions, `repetitions_flag` >= 0; both given must agree)
// wins over the preset for every family, --benchmark_min_time over the
// preset's min time of the cases that count time (kernel, GEMM).
absl::Status ApplyTimingFlags(const BenchmarkTimingFlags& user, int repetitions_flag,
                              SuiteOptions& options);
// The harness's settings for these options.
TimingSettings TimingOf(const SuiteOptions& options);

// The backend a case runs on: --backend on the CPU, "cuda" on a GPU. The
// one place the suite creates backends.
absl::StatusOr<std::unique_ptr<Backend>> CreateCaseBackend(const SuiteOptions& options,
                                                           const Device& device);

// Where the ranks of a data-parallel case that live in this process run:
// their communicators (element i: the i-th rank of this process) and devices.
struct ReplicaPlacement {
  std::vector<std::unique_ptr<Communicator>> group;
  std::vector<Device> devices;
};
// `ranks` replicas in this process (the local group on the CPU, gpus == 0;
// NCCL over GPUs 0..ranks-1), or under MPI this process's one rank (mpi on
// the CPU, NCCL on GPU local_rank, its id shared over MPI). Collective under
// MPI: every process calls it.
absl::StatusOr<ReplicaPlacement> PlaceReplicas(const SuiteOptions& options, int gpus, int ranks);
// Under MPI, a timed-out collective leaves the others stuck: the job ends
// (every process) with the error, through options.end_job where it is set.
// Otherwise returns `status`.
absl::Status EndJobOnTimeout(const SuiteOptions& options, absl::Status status);

// The devices kernel and GEMM cases run on, as case names spell them:
// "cpu", plus "cuda" (device 0) when a GPU is visible.
std::vector<std::string> KernelDevices(const SuiteOptions& options);

// A kernel model's training graph as its kernel and GEMM cases see it: at
// the kernel batch (or the model's own) and the suite's image size.
absl::StatusOr<Graph> KernelModelGraph(const SuiteOptions& options, const std::string& model);

// Registers every case `options` asks for on `harness`; returns their names
// in order. `options` and `harness` must outlive the run.
absl::StatusOr<std::vector<std::string>> RegisterSuite(const SuiteOptions& options,
                                                       Harness& harness);

// Case families: each registers its cases, in one signature (kRegistrars in
// suite.cc holds one per family).
absl::Status RegisterTrainCases(const SuiteOptions& options, Harness& harness);
absl::Status RegisterKernelCases(const SuiteOptions& options, Harness& harness);
absl::Status RegisterGemmCases(const SuiteOptions& options, Harness& harness);
// <collective>/...: nccl-tests' sweep of each collective (bench/cases/collective/collective_cases.h).
// One function serves every collective family (as RegisterKernelCases the
// layer kernels'), so that all of them share one set of communicators per
// transport and rank count: it registers each wanted one, in family order.
absl::Status RegisterCollectiveCases(const SuiteOptions& options, Harness& harness);
// infer/...: each model's forward pass for inference, batch by batch
// (bench/cases/infer/infer_cases.h).
absl::Status RegisterInferCases(const SuiteOptions& options, Harness& harness);
// grads/<model>/local/...: one step's gradient all-reduce of each training model.
absl::Status RegisterGradsCases(const SuiteOptions& options, Harness& harness);
// input/...: one case per data format, preprocessing (train: the training
// crop and flip over the train subset; eval: the central crop over
// validation) and decode thread count (--input_threads). With --data_dir
// the folder is checked here, before any case runs: missing, empty or
// holding neither format is an error; without it the cases read a data set
// generated once per process (input::GeneratedDataDir).
absl::Status RegisterInputCases(const SuiteOptions& options, Harness& harness);

// peak/...: the CPU's arithmetic peak in each precision of --precisions the
// CPU has, on its default thread count (bench/cases/peak/peak_cases.h).
absl::Status RegisterPeakCases(const SuiteOptions& options, Harness& harness);

// bandwidth/...: the memory's rates (bench/cases/bandwidth/bandwidth_cases.h): STREAM copy
// and triad on the CPU per thread count, and with a GPU its device, host to
// device and device to host copies.
absl::Status RegisterBandwidthCases(const SuiteOptions& options, Harness& harness);
// --input_threads, --input_batch and --on_bad_record into options.input;
// errors name the flag.
absl::Status ApplyInputFlags(SuiteOptions& options);
// --bandwidth_bytes into options.bandwidth; errors name the flag.
absl::Status ApplyBandwidthFlags(SuiteOptions& options);
// The thread counts the CPU bandwidth cases run on.
std::vector<int> BandwidthThreads(const SuiteOptions& options);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_SUITE_H_
