#include "core/platform.h"

#include <sched.h>

#include <algorithm>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/device.h"
#include "core/nvml.h"
#include "gtest/gtest.h"

namespace cnnbench {
namespace {

TEST(PlatformTest, AllContextFieldsPresentAndFilled) {
  PlatformInfo info = CollectPlatformInfo();
  std::map<std::string, std::string> kv;
  for (auto& [k, v] : info.ToKeyValues()) {
    EXPECT_TRUE(kv.emplace(k, v).second) << "duplicate key " << k;
    EXPECT_FALSE(v.empty()) << k;
  }
  for (const char* key : {"platform",
                          "host_name",
                          "os",
                          "cpu_model",
                          "cpu_cores",
                          "host_cpus",
                          "cpu_isa",
                          "memory_bytes",
                          "gpu_count",
                          "gpu_model",
                          "driver_version",
                          "cuda_runtime_version",
                          "cudnn_version",
                          "cublas_version",
                          "nccl_version",
                          "onednn_version",
                          "git_commit",
                          "build_config",
                          "gpu_sm_clock_max_mhz",
                          "gpu_memory_clock_max_mhz",
                          "gpu_power_limit_w"}) {
    EXPECT_TRUE(kv.count(key)) << "missing " << key;
  }
  EXPECT_GE(info.cpu_cores, 1);
  EXPECT_GT(info.memory_bytes, 0);
  EXPECT_EQ(info.gpu_count, CudaDeviceCount());
  EXPECT_EQ(static_cast<int>(info.gpus.size()), info.gpu_count);
  // oneDNN is always linked: a dotted version like "2.6.3".
  EXPECT_EQ(std::count(info.onednn_version.begin(), info.onednn_version.end(), '.'), 2)
      << info.onednn_version;
  EXPECT_NE(info.build_config.find(CudaBuiltIn() ? "cuda" : "nocuda"), std::string::npos);
}

TEST(PlatformTest, VersionEncodings) {
  EXPECT_EQ(CudaVersionString(13000), "13.0");
  EXPECT_EQ(CudaVersionString(12040), "12.4");
  EXPECT_EQ(CudaVersionString(0), "none");
  EXPECT_EQ(CudnnVersionString(91900), "9.19.0");
  EXPECT_EQ(CudnnVersionString(8902), "8.9.2");
  EXPECT_EQ(NcclVersionString(22803), "2.28.3");
  EXPECT_EQ(NcclVersionString(2708), "2.7.8");
}

// Clocks and power limits per GPU, "unknown" where NVML did not say.
TEST(PlatformTest, GpuClocksAndPowerLimitPerGpu) {
  PlatformInfo info;
  info.gpu_count = 2;
  GpuInfo a{"NVIDIA H200", 1, "9.0", 132};
  a.sm_clock_max_mhz = 1980;
  a.memory_clock_max_mhz = 3201;
  a.power_limit_w = 700;
  info.gpus = {a, GpuInfo{"NVIDIA H200", 1, "9.0", 132}};
  std::map<std::string, std::string> kv;
  for (const auto& [k, v] : info.ToKeyValues()) kv[k] = v;
  EXPECT_EQ(kv["gpu_sm_clock_max_mhz"], "1980;unknown");
  EXPECT_EQ(kv["gpu_memory_clock_max_mhz"], "3201;unknown");
  EXPECT_EQ(kv["gpu_power_limit_w"], "700;unknown");
}

// Without NVML (no driver here) or for a bus id it does not know: an error
// that says why, never a crash.
TEST(PlatformTest, GpuClocksWithoutTheGpuAreAnError) {
  absl::StatusOr<GpuClocks> clocks = ReadGpuClocks("0000:FF:1F.7");
  EXPECT_FALSE(clocks.ok());
  EXPECT_FALSE(clocks.status().message().empty());
}

TEST(PlatformTest, DefaultNameIsShortAndSpaceless) {
  PlatformInfo info;
  info.cpu_model = "AMD EPYC 7B13 64-Core Processor";
  info.cpu_cores = 2;
  EXPECT_EQ(DefaultPlatformName(info), "cpu-AMD-EPYC-7B13-64-Core-2c");
  info.gpu_count = 8;
  info.gpus.push_back({"NVIDIA H200", 0, "9.0", 132});
  EXPECT_EQ(DefaultPlatformName(info), "8xNVIDIA-H200");
}

// The platform names the host: a process bound to fewer CPUs than the host
// has (a rank under mpirun, a run under taskset) is on the same platform.
TEST(PlatformTest, DefaultNameCountsTheHostsCpusNotTheAffinity) {
  PlatformInfo info;
  info.cpu_model = "AMD EPYC 7B13 64-Core Processor";
  info.cpu_cores = 1;
  info.host_cpus = 2;
  EXPECT_EQ(DefaultPlatformName(info), "cpu-AMD-EPYC-7B13-64-Core-2c");
}

// The console header's CPUs: the machine's, as the platform name counts
// them, and what this process may use only when it is fewer.
TEST(PlatformTest, CpuCountTextSaysTheMachinesCpusAndThenTheProcesss) {
  PlatformInfo info;
  info.cpu_model = "AMD EPYC 7B13 64-Core Processor";
  info.cpu_cores = 1;
  info.host_cpus = 2;
  EXPECT_EQ(CpuCountText(info), "2 CPUs, 1 usable by this process");
  EXPECT_TRUE(absl::EndsWith(DefaultPlatformName(info), "-2c"));
  info.cpu_cores = 2;
  EXPECT_EQ(CpuCountText(info), "2 CPUs");
  info.host_cpus = 1;
  info.cpu_cores = 1;
  EXPECT_EQ(CpuCountText(info), "1 CPU");
  info.host_cpus = 0;  // not read: the process's count is all there is
  info.cpu_cores = 4;
  EXPECT_EQ(CpuCountText(info), "4 CPUs");
}

TEST(PlatformTest, CollectedUnderOneCpuAffinityNamesTheHost) {
  cpu_set_t all;
  ASSERT_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
  if (CPU_COUNT(&all) < 2) GTEST_SKIP() << "this process may use one CPU only";
  int first = 0;
  while (!CPU_ISSET(first, &all)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  const PlatformInfo bound = CollectPlatformInfo();
  ASSERT_EQ(sched_setaffinity(0, sizeof(all), &all), 0);
  const PlatformInfo free = CollectPlatformInfo();
  EXPECT_EQ(bound.cpu_cores, 1);
  EXPECT_GE(bound.host_cpus, CPU_COUNT(&all));
  EXPECT_EQ(bound.platform, free.platform);
  EXPECT_TRUE(absl::EndsWith(bound.platform, absl::StrCat("-", bound.host_cpus, "c")))
      << bound.platform;
  std::map<std::string, std::string> kv;
  for (const auto& [k, v] : bound.ToKeyValues()) kv[k] = v;
  EXPECT_EQ(kv["cpu_cores"], "1");
  EXPECT_EQ(kv["host_cpus"], absl::StrCat(bound.host_cpus));
  EXPECT_EQ(CpuCountText(bound), absl::StrCat(bound.host_cpus, " CPUs, 1 usable by this process"));
}

// A job across hosts is a platform of its own; one host keeps its name.
TEST(PlatformTest, AJobAcrossHostsIsNamedWithItsHostCount) {
  EXPECT_EQ(MultiHostPlatformName("cpu-AMD-EPYC-2c", 1), "cpu-AMD-EPYC-2c");
  EXPECT_EQ(MultiHostPlatformName("cpu-AMD-EPYC-2c", 2), "cpu-AMD-EPYC-2c-2hosts");
  EXPECT_EQ(MultiHostPlatformName("8xNVIDIA-H100", 16), "8xNVIDIA-H100-16hosts");
}

}  // namespace
}  // namespace cnnbench
