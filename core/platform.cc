#include "core/platform.h"

#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/gpu_runtime.h"
#include "core/nvml.h"
#include "core/onednn_isa.h"
#include "dnnl.hpp"

namespace cnnbench {
namespace {

std::string ReadFirstMatch(const std::string& path, absl::string_view key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (absl::StartsWith(line, key)) {
      auto pos = line.find_first_of(":=");
      if (pos == std::string::npos) continue;
      std::string value(absl::StripAsciiWhitespace(line.substr(pos + 1)));
      return std::string(absl::StripSuffix(absl::StripPrefix(value, "\""), "\""));
    }
  }
  return "";
}

std::string CpuIsa() {
  const std::string flags = " " + ReadFirstMatch("/proc/cpuinfo", "flags") + " ";
  std::vector<std::string> present;
  for (const char* f : {"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512_vnni",
                        "avx512_bf16", "amx_bf16", "amx_tile", "avx512_fp16"}) {
    if (absl::StrContains(flags, absl::StrCat(" ", f, " "))) present.push_back(f);
  }
  if (present.empty()) return "unknown";
  return absl::StrJoin(present, " ");
}

int UsableCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(std::thread::hardware_concurrency());
}

int OnlineCpus() {
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : UsableCpus();
}

std::string OrUnknown(std::string s) { return s.empty() ? "unknown" : s; }

}  // namespace

std::string CudaVersionString(int version) {
  if (version <= 0) return "none";
  return absl::StrCat(version / 1000, ".", (version % 1000) / 10);
}

std::string CudnnVersionString(int version) {
  if (version <= 0) return "none";
  if (version >= 90000)  // cuDNN 9: major*10000 + minor*100 + patch
    return absl::StrCat(version / 10000, ".", (version % 10000) / 100, ".", version % 100);
  return absl::StrCat(version / 1000, ".", (version % 1000) / 100, ".", version % 100);
}

std::string NcclVersionString(int version) {
  if (version <= 0) return "none";
  if (version >= 20900)  // NCCL >= 2.9: major*10000 + minor*100 + patch
    return absl::StrCat(version / 10000, ".", (version % 10000) / 100, ".", version % 100);
  return absl::StrCat(version / 1000, ".", (version % 1000) / 100, ".", version % 100);
}

PlatformInfo CollectPlatformInfo() {
  PlatformInfo info;
  char host[256] = {0};
  info.host_name = gethostname(host, sizeof(host) - 1) == 0 ? host : "unknown";
  info.os = OrUnknown(ReadFirstMatch("/etc/os-release", "PRETTY_NAME"));
  struct utsname uts;
  info.kernel = uname(&uts) == 0 ? uts.release : "unknown";
  info.cpu_model = OrUnknown(ReadFirstMatch("/proc/cpuinfo", "model name"));
  info.cpu_cores = UsableCpus();
  info.host_cpus = std::max(OnlineCpus(), info.cpu_cores);
  info.cpu_isa = CpuIsa();
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  info.memory_bytes = pages > 0 && page_size > 0 ? static_cast<int64_t>(pages) * page_size : 0;

  info.cuda_built_in = gpu::BuiltIn();
  info.gpu_count = gpu::DeviceCount();
  for (int i = 0; i < info.gpu_count; ++i) {
    auto props = gpu::GetDeviceProperties(i);
    if (!props.ok()) continue;
    GpuInfo gpu{props->name, props->memory_bytes,
                absl::StrCat(props->compute_capability_major, ".", props->compute_capability_minor),
                props->multiprocessors};
    if (absl::StatusOr<GpuClocks> clocks = ReadGpuClocks(props->pci_bus_id); clocks.ok()) {
      gpu.sm_clock_max_mhz = clocks->sm_clock_max_mhz;
      gpu.memory_clock_max_mhz = clocks->memory_clock_max_mhz;
      gpu.power_limit_w = clocks->power_limit_w;
    }
    info.gpus.push_back(gpu);
  }
  const gpu::Versions v = gpu::GetVersions();
  info.driver_version = CudaVersionString(v.driver);
  info.cuda_runtime_version = CudaVersionString(v.runtime);
  info.cuda_toolkit_version = CudaVersionString(v.toolkit);
  info.cudnn_version = CudnnVersionString(v.cudnn);
  if (v.cublas > 0)
    info.cublas_version =
        absl::StrCat(v.cublas / 10000, ".", (v.cublas % 10000) / 100, ".", v.cublas % 100);
  else
    info.cublas_version = "none";
  info.nccl_version = NcclVersionString(v.nccl);

  const dnnl_version_t* dnnl = dnnl_version();
  info.onednn_version = absl::StrCat(dnnl->major, ".", dnnl->minor, ".", dnnl->patch);
  info.onednn_cpu_isa = OnednnCpuIsa();
  info.onednn_max_cpu_isa = OnednnIsaCap().empty() ? "none" : OnednnIsaCap();

  info.git_commit = BuildGitCommit();
  info.build_config =
      absl::StrCat(BuildCompilationMode(), " ", info.cuda_built_in ? "cuda" : "nocuda", " gcc-",
                   __GNUC__, ".", __GNUC_MINOR__, ".", __GNUC_PATCHLEVEL__);
  info.platform = DefaultPlatformName(info);
  return info;
}

std::string DefaultPlatformName(const PlatformInfo& info) {
  auto tidy = [](std::string s) {
    s = absl::StrReplaceAll(s, {{"(R)", ""}, {"(TM)", ""}, {" CPU", ""}, {"Processor", ""}});
    std::vector<std::string> words = absl::StrSplit(s, ' ', absl::SkipEmpty());
    return absl::StrJoin(words, "-");
  };
  if (info.gpu_count > 0 && !info.gpus.empty())
    return absl::StrCat(info.gpu_count, "x", tidy(info.gpus[0].name));
  const int cpus = info.host_cpus > 0 ? info.host_cpus : info.cpu_cores;
  return absl::StrCat("cpu-", tidy(info.cpu_model), "-", cpus, "c");
}

std::string MultiHostPlatformName(const std::string& platform, int hosts) {
  return hosts > 1 ? absl::StrCat(platform, "-", hosts, "hosts") : platform;
}

std::string CpuCountText(const PlatformInfo& info) {
  const int machine = info.host_cpus > 0 ? info.host_cpus : info.cpu_cores;  // as the name counts
  std::string text = absl::StrCat(machine, machine == 1 ? " CPU" : " CPUs");
  if (info.cpu_cores > 0 && info.cpu_cores < machine)
    absl::StrAppend(&text, ", ", info.cpu_cores, " usable by this process");
  return text;
}

std::vector<std::pair<std::string, std::string>> PlatformInfo::ToKeyValues() const {
  std::vector<std::pair<std::string, std::string>> kv = {
      {"platform", platform},
      {"host_name", host_name},
      {"os", os},
      {"kernel", kernel},
      {"cpu_model", cpu_model},
      {"cpu_cores", absl::StrCat(cpu_cores)},
      {"host_cpus", absl::StrCat(host_cpus)},
      {"cpu_isa", cpu_isa},
      {"memory_bytes", absl::StrCat(memory_bytes)},
      {"cuda_built_in", cuda_built_in ? "true" : "false"},
      {"gpu_count", absl::StrCat(gpu_count)},
  };
  std::vector<std::string> names, memory, capability, sm_clock, memory_clock, power;
  auto known = [](int value) { return value > 0 ? absl::StrCat(value) : std::string("unknown"); };
  for (const GpuInfo& g : gpus) {
    names.push_back(g.name);
    memory.push_back(absl::StrCat(g.memory_bytes));
    capability.push_back(g.compute_capability);
    sm_clock.push_back(known(g.sm_clock_max_mhz));
    memory_clock.push_back(known(g.memory_clock_max_mhz));
    power.push_back(known(g.power_limit_w));
  }
  kv.push_back({"gpu_model", gpus.empty() ? "none" : gpus[0].name});
  kv.push_back({"gpu_names", gpus.empty() ? "none" : absl::StrJoin(names, ";")});
  kv.push_back({"gpu_memory_bytes", gpus.empty() ? "0" : absl::StrJoin(memory, ";")});
  kv.push_back({"gpu_compute_capability", gpus.empty() ? "none" : absl::StrJoin(capability, ";")});
  // Each GPU's maximum SM and memory clocks and its enforced power limit
  // (NVML): the ceilings the figures were taken under, not the clocks a
  // case ran at.
  kv.push_back({"gpu_sm_clock_max_mhz", gpus.empty() ? "none" : absl::StrJoin(sm_clock, ";")});
  kv.push_back(
      {"gpu_memory_clock_max_mhz", gpus.empty() ? "none" : absl::StrJoin(memory_clock, ";")});
  kv.push_back({"gpu_power_limit_w", gpus.empty() ? "none" : absl::StrJoin(power, ";")});
  kv.push_back({"driver_version", driver_version});
  kv.push_back({"cuda_runtime_version", cuda_runtime_version});
  kv.push_back({"cuda_toolkit_version", cuda_toolkit_version});
  kv.push_back({"cudnn_version", cudnn_version});
  kv.push_back({"cublas_version", cublas_version});
  kv.push_back({"nccl_version", nccl_version});
  kv.push_back({"onednn_version", onednn_version});
  kv.push_back({"onednn_cpu_isa", onednn_cpu_isa});
  kv.push_back({"onednn_max_cpu_isa", onednn_max_cpu_isa});
  kv.push_back({"git_commit", git_commit});
  kv.push_back({"build_config", build_config});
  return kv;
}

}  // namespace cnnbench
