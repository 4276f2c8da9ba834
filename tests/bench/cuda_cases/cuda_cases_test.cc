// The suite's cuda cases. With a GPU visible (gpu_count > 0) the kernel and
// GEMM families add ".../cuda/..." cases beside the CPU's and the names
// parse back to the same fields; with none, nothing cuda registers. Without
// a GPU, the backend a cuda case asks for is an error naming the device
// (the case's skip reason).
#include <set>
#include <string>
#include <vector>

#include "bench/harness/harness.h"
#include "bench/suite/names.h"
#include "bench/suite/suite.h"
#include "core/device.h"
#include "gtest/gtest.h"

namespace cnnbench::bench {
namespace {

std::vector<std::string> Registered(int gpu_count) {
  auto options = PresetOptions("tiny", gpu_count);
  EXPECT_TRUE(options.ok()) << options.status();
  options->gpus = {0, 1};
  options->precisions = {"fp32", "bf16"};
  static std::vector<std::unique_ptr<SuiteOptions>> keep;  // must outlive the harness
  static std::vector<std::unique_ptr<Harness>> harnesses;
  keep.push_back(std::make_unique<SuiteOptions>(*options));
  harnesses.push_back(std::make_unique<Harness>(TimingOf(*keep.back())));
  auto names = RegisterSuite(*keep.back(), *harnesses.back());
  EXPECT_TRUE(names.ok()) << names.status();
  return names.ok() ? *names : std::vector<std::string>{};
}

TEST(CudaCasesTest, WithAGpuKernelAndGemmFamiliesAddCudaCases) {
  const std::vector<std::string> names = Registered(1);
  std::set<std::string> cuda_families, cpu_families;
  for (const std::string& name : names) {
    auto parsed = ParseCaseName(name);
    ASSERT_TRUE(parsed.ok()) << name << ": " << parsed.status();
    EXPECT_EQ(parsed->ToString(), name);
    // The kernel and GEMM families (those whose names carry a descriptor):
    // the others have devices of their own (train, infer, peak, bandwidth)
    // or none.
    if (FindCaseFamily(parsed->family)->shape_kind.empty()) continue;
    (parsed->device == "cuda" ? cuda_families : cpu_families).insert(parsed->family);
    if (parsed->device == "cuda") {
      // The same case exists on the CPU: only the device differs.
      CaseName cpu = *parsed;
      cpu.device = "cpu";
      EXPECT_NE(std::find(names.begin(), names.end(), cpu.ToString()), names.end()) << name;
    }
  }
  EXPECT_EQ(cuda_families, cpu_families);
  for (const char* family : {"conv", "fc", "pool", "relu", "gemm"})  // lenet has no batch norm
    EXPECT_EQ(cuda_families.count(family), 1u) << family;
  EXPECT_NE(
      std::find(names.begin(), names.end(), TrainCaseName("trivial", "bf16", "synthetic", 2, 1)),
      names.end());
  // Inference on one GPU, beside the CPU's.
  for (int gpus : {0, 1})
    EXPECT_NE(std::find(names.begin(), names.end(),
                        CaseName::Infer("trivial", "bf16", "synthetic", 2, gpus).ToString()),
              names.end())
        << gpus;
}

TEST(CudaCasesTest, WithoutAGpuNothingCudaRegisters) {
  for (const std::string& name : Registered(0)) {
    auto parsed = ParseCaseName(name);
    ASSERT_TRUE(parsed.ok()) << name;
    EXPECT_NE(parsed->device, "cuda") << name;
    EXPECT_NE(parsed->impl, "nccl") << name;
  }
}

// With a GPU, every collective and the gradient all-reduce add nccl cases
// over the non-zero --gpus counts (here 1), beside the host's.
TEST(CudaCasesTest, WithAGpuTheCollectivesAndGradsAddNcclCases) {
  std::set<std::string> nccl_families;
  for (const std::string& name : Registered(1)) {
    auto parsed = ParseCaseName(name);
    ASSERT_TRUE(parsed.ok()) << name;
    if (parsed->impl != "nccl") continue;
    nccl_families.insert(parsed->family);
    EXPECT_EQ(parsed->ranks, 1) << name;
  }
  EXPECT_EQ(nccl_families,
            (std::set<std::string>{"allreduce", "allgather", "reducescatter", "broadcast", "reduce",
                                   "alltoall", "gather", "scatter", "grads"}));
}

TEST(CudaCasesTest, KernelDevicesFollowTheGpuCount) {
  SuiteOptions options;
  EXPECT_EQ(KernelDevices(options), std::vector<std::string>{"cpu"});
  options.gpu_count = 2;
  EXPECT_EQ(KernelDevices(options), (std::vector<std::string>{"cpu", "cuda"}));
  auto full = PresetOptions("full", 1);
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->kernel.gemm_sizes.back(), 8192);
  EXPECT_EQ(full->gpu_count, 1);
}

TEST(CudaCasesTest, ACudaCaseWithoutAGpuGetsAReason) {
  if (CudaDeviceCount() > 0) GTEST_SKIP() << "a GPU is present";
  SuiteOptions options;
  auto backend = CreateCaseBackend(options, Device::Cuda(0));
  ASSERT_FALSE(backend.ok());
  EXPECT_NE(std::string(backend.status().message()).find("cuda:0"), std::string::npos)
      << backend.status();
  auto cpu = CreateCaseBackend(options, Device::Cpu());
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_EQ((*cpu)->name(), "onednn");
}

}  // namespace
}  // namespace cnnbench::bench
