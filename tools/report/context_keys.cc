#include "tools/report/context_keys.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace cnnbench::report {

const std::vector<std::string>& MachineKeys() {
  static const std::vector<std::string> kKeys = {
      "cpu_model",    "cpu_isa",   "host_cpus",        "memory_bytes",           "gpu_model",
      "gpu_count",    "gpu_names", "gpu_memory_bytes", "gpu_compute_capability", "hosts",
      "instance_type"};
  return kKeys;
}

const std::vector<std::string>& MeasurementSettingKeys() {
  static const std::vector<std::string> kKeys = {
      // How the suite measured (bench/cli/main.cc), and what other harnesses record.
      "preset", "steps", "warmup_steps", "kernel_min_time", "collective_warmup", "collective_iters",
      "collective_root", "collective_graph", "infer_iterations", "infer_include_copy",
      "fold_batch_norm", "conv_relu", "conv_add", "concat_in_place", "image_size", "cpu_backend",
      "cpu_conv_algorithm", "cuda_graph", "gpu_layout", "cuda_batch_norm", "fuse_relu", "backend",
      "framework", "framework_settings", "cnnbench_build", "build_mode", "build_config",
      "cuda_built_in", "optimizer",
      // Inference's warm-up, data parallelism's buckets and threads, the
      // accuracy counters' work, NCCL's forced algorithm, the input's work.
      "infer_warmup", "overlap", "bucket_bytes", "threads_per_replica", "train_accuracy",
      // The CPUs the process could use: a rank bound to one core by mpirun,
      // or a run under taskset, is on the host's machine but not its setting.
      "cpu_cores", "nccl_algo", "nccl_proto", "distortions", "input_cores",
      // The instruction set oneDNN dispatches to and its cap: a run under
      // ONEDNN_MAX_CPU_ISA=AVX2 is another setting, never merged with an
      // uncapped one.
      "onednn_cpu_isa", "onednn_max_cpu_isa"};
  return kKeys;
}

const std::vector<std::string>& EnvironmentKeys() {
  static const std::vector<std::string> kKeys = {
      // The libraries that compute the figure, and what runs them.
      "onednn_version", "cudnn_version", "cublas_version", "nccl_version", "driver_version",
      "cuda_runtime_version", "cuda_toolkit_version", "mpi_version", "library_build_type", "os",
      "kernel", "torch_version",
      // Conditions an administrator sets: the CPU governor, the GPUs' clock
      // and power limits.
      "cpu_governor", "gpu_sm_clock_max_mhz", "gpu_memory_clock_max_mhz", "gpu_power_limit_w"};
  return kKeys;
}

const std::vector<std::string>& RunRecordKeys() {
  static const std::vector<std::string> kKeys = {
      // When, where and how the run was made, and how far it got.
      "date", "host_name", "executable", "command_line", "run_uuid", "git_commit", "platform",
      "data_dir", "repetitions", "methodology", "interrupted", "dataset", "ranks",
      // What the machine was doing then (Google Benchmark's and the suite's
      // readings), which describe the run, not the machine.
      "load_avg", "load_average_start", "load_average_end", "cpu_mhz_start", "cpu_mhz_end",
      "cpu_mhz_min", "cpu_mhz_max", "mhz_per_cpu", "num_cpus", "caches", "cpu_scaling_enabled",
      // Notes and knobs that never change a figure.
      "library_build_type_note", "cnnbench_assertions", "json_schema_version", "power",
      "power_sample_ms", "drift_threshold", "keep_step_times", "compile_deadline_s",
      "collective_timeout_s", "cuda_plan_cache", "cuda_rtc_attempts", "cuda_rtc_process_builds",
      // The Slurm job the run was (bench/output/context.h's AddSlurmContext).
      "slurm_job_id", "slurm_job_nodelist", "slurm_job_num_nodes", "slurm_ntasks",
      "slurm_job_partition", "slurm_cluster_name",
      // Each host of a multi-host job (rank 0's are the machine keys').
      "host_facts"};
  return kKeys;
}

std::string ModelDefinitionKey(absl::string_view model) {
  return absl::StrCat(kModelDefinitionPrefix, model);
}

bool IsModelDefinitionKey(absl::string_view key) {
  return absl::StartsWith(key, kModelDefinitionPrefix) &&
         key.size() > kModelDefinitionPrefix.size();
}

std::optional<KeyClass> ClassOfKey(absl::string_view key) {
  if (IsModelDefinitionKey(key)) return KeyClass::kSetting;
  auto in = [key](const std::vector<std::string>& keys) {
    return std::find(keys.begin(), keys.end(), key) != keys.end();
  };
  if (in(MachineKeys())) return KeyClass::kMachine;
  if (in(MeasurementSettingKeys())) return KeyClass::kSetting;
  if (in(EnvironmentKeys())) return KeyClass::kEnvironment;
  if (in(RunRecordKeys())) return KeyClass::kRunRecord;
  return std::nullopt;
}

const char* KeyClassName(KeyClass key_class) {
  switch (key_class) {
    case KeyClass::kMachine:
      return "machine identity";
    case KeyClass::kSetting:
      return "measurement setting";
    case KeyClass::kEnvironment:
      return "environment";
    case KeyClass::kRunRecord:
      return "run record";
  }
  return "?";
}

}  // namespace cnnbench::report
