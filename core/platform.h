// What machine a run is on: host, CPU, GPUs, driver and library versions,
// and the build (commit, config). Added to every benchmark JSON's context.
#ifndef CNNBENCH_CORE_PLATFORM_H_
#define CNNBENCH_CORE_PLATFORM_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cnnbench {

struct GpuInfo {
  std::string name;
  int64_t memory_bytes = 0;
  std::string compute_capability;  // "9.0"
  int multiprocessors = 0;
  // From NVML where the driver has it (0: not reported).
  int sm_clock_max_mhz = 0;
  int memory_clock_max_mhz = 0;
  int power_limit_w = 0;
};

struct PlatformInfo {
  std::string host_name;
  std::string os;      // PRETTY_NAME of /etc/os-release
  std::string kernel;  // uname -r
  std::string cpu_model;
  // Logical CPUs this process may use (its affinity: a rank mpirun binds to
  // one core has 1), the context's `cpu_cores`, a setting of the run.
  int cpu_cores = 0;
  // Logical CPUs online on the machine, whatever the affinity, the
  // context's `host_cpus`: the count the platform name ("...-2c") and the
  // console header say.
  int host_cpus = 0;
  std::string cpu_isa;  // the notable vector extensions present, e.g. "avx2 avx512f avx512_bf16"
  int64_t memory_bytes = 0;

  bool cuda_built_in = false;
  int gpu_count = 0;
  std::vector<GpuInfo> gpus;
  // Versions as dotted strings; "none" where a library or driver is absent.
  std::string driver_version;
  std::string cuda_runtime_version;
  std::string cuda_toolkit_version;
  std::string cudnn_version;
  std::string cublas_version;
  std::string nccl_version;
  std::string onednn_version;
  // The instruction set oneDNN dispatches to (its effective ISA, after any
  // cap: "avx512_core_bf16", "avx2") and the variable that caps it
  // ("ONEDNN_MAX_CPU_ISA=AVX2"; "none"). A capped run is another setting.
  std::string onednn_cpu_isa;
  std::string onednn_max_cpu_isa;

  std::string git_commit;
  std::string build_config;  // "opt cuda gcc-12.2.0"
  std::string platform;      // short name that reports group by

  // Ordered (key, value) pairs for benchmark::AddCustomContext and reports.
  std::vector<std::pair<std::string, std::string>> ToKeyValues() const;
};

// Reads everything from the running machine; never fails (unknown fields
// are "unknown", absent GPUs give gpu_count 0).
PlatformInfo CollectPlatformInfo();

// The short default platform name: "1xNVIDIA-H200" on GPUs, "cpu-AMD-EPYC-2c"
// otherwise, with the host's online CPUs (host_cpus), not the process's
// affinity: a rank that mpirun binds to one core is on the same platform as
// a run over the whole host (cpu_cores, a setting, tells the two apart).
std::string DefaultPlatformName(const PlatformInfo& info);
// A job across `hosts` hosts is a system of its own: "<platform>-2hosts"
// (rank 0's host's name for the one); `platform` itself on one host.
std::string MultiHostPlatformName(const std::string& platform, int hosts);

// The CPUs as the console header says them: the machine's (host_cpus, as
// the platform name counts them) and, when this process may use fewer (a
// rank mpirun binds, a run under taskset), how many it may use: "2 CPUs",
// "2 CPUs, 1 usable by this process".
std::string CpuCountText(const PlatformInfo& info);

// Versions encoded as the libraries do (12040 -> "12.4", 91900 -> "9.19.0").
std::string CudaVersionString(int version);
std::string CudnnVersionString(int version);
std::string NcclVersionString(int version);

// Set by the stamped build_info target.
const char* BuildGitCommit();
const char* BuildCompilationMode();

}  // namespace cnnbench

#endif  // CNNBENCH_CORE_PLATFORM_H_
