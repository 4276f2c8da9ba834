// The collective cases on GPUs through NCCL, device buffers: every
// collective at ranks:1 (a copy through NCCL) on one GPU, and at 2 ranks
// where there are two, in two types and with a root that is not 0 where
// there are ranks for it, enqueued and as a captured CUDA graph, each
// result checked on every rank (0 wrong elements); in place is not timed
// at one rank (a no-op in NCCL). Skips without a GPU.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "bench/cases/collective/collective_cases.h"
#include "bench/harness/harness.h"
#include "bench/suite/suite.h"
#include "benchmark/benchmark.h"
#include "core/device.h"
#include "gtest/gtest.h"
#include "kernels/collectives/nccl.h"
#include "tests/bench/recorder.h"

namespace cnnbench::bench {
namespace {

std::vector<BenchRun> RunOnGpus(int ranks, const CollectiveCase& spec) {
  std::vector<Device> devices;
  for (int r = 0; r < ranks; ++r) devices.push_back(Device::Cuda(r));
  TimedCase c = CollectiveTimedCase("nccl_case_test/case", spec);
  c.prepare = [devices, spec]() -> absl::StatusOr<std::unique_ptr<Workload>> {
    auto comms = CreateNcclGroup(devices);
    if (!comms.ok()) return comms.status();
    auto group = std::make_shared<CommunicatorGroup>();
    group->comms = *std::move(comms);
    group->devices = devices;
    return PrepareCollectiveWorkload(group, spec);
  };
  return RunOneCase(std::move(c), TimingSettings{.repetitions = 2});
}

void CheckEveryCollective(int ranks) {
  for (Collective collective : kCollectives)
    for (DType dtype : {DType::kF32, DType::kBF16})
      for (bool graph : {false, true}) {
        CollectiveCase spec;
        spec.collective = collective;
        spec.dtype = dtype;
        // fp32 sums, bf16 takes the max (the copies ignore the op).
        spec.op = dtype == DType::kBF16 ? ReduceOp::kMax : ReduceOp::kSum;
        spec.bytes = int64_t{1} << 20;
        spec.root = ranks - 1;
        spec.warmup = 2;
        spec.iterations = 5;
        spec.graph = graph;
        const std::string what = absl::StrCat(CollectiveName(collective), " ", DTypeName(dtype),
                                              " ranks ", ranks, graph ? " graph" : " enqueued");
        const std::vector<BenchRun> runs = RunOnGpus(ranks, spec);
        ASSERT_EQ(runs.size(), 2u) << what;
        for (const BenchRun& r : runs) {
          EXPECT_FALSE(r.error_occurred) << what << ": " << r.error_message;
          EXPECT_TRUE(absl::StrContains(r.report_label, "device memory")) << r.report_label;
          EXPECT_TRUE(absl::StrContains(r.report_label, "0 wrong elements")) << r.report_label;
          EXPECT_EQ(absl::StrContains(r.report_label, "CUDA graph"), graph) << r.report_label;
          if (!r.error_occurred) {
            EXPECT_GT(r.counters.at("algbw").value, 0) << what;
          }
          // In place at one rank is a no-op in NCCL: not timed, and said so.
          EXPECT_EQ(r.counters.count("algbw_inplace") > 0,
                    ranks > 1 && HasInPlace(collective))
              << what;
          if (ranks == 1 && HasInPlace(collective)) {
            EXPECT_TRUE(absl::StrContains(r.report_label, "no-op in NCCL")) << r.report_label;
          }
        }
      }
}

TEST(NcclCasesTest, EveryCollectiveOnOneGpuIsACheckedCopy) {
  if (CudaDeviceCount() < 1) GTEST_SKIP() << "no GPU";
  CheckEveryCollective(1);
}

TEST(NcclCasesTest, EveryCollectiveOnTwoGpusIsChecked) {
  if (CudaDeviceCount() < 2) GTEST_SKIP() << "fewer than 2 GPUs";
  CheckEveryCollective(2);
}

// One step's gradient all-reduce of a model as the trainer lays it out on
// the GPU, through NCCL on device memory, checked.
TEST(NcclCasesTest, GradsOnOneGpuAreChecked) {
  if (CudaDeviceCount() < 1) GTEST_SKIP() << "no GPU";
  benchmark::ClearRegisteredBenchmarks();
  SuiteOptions o;
  o.gpu_count = CudaDeviceCount();
  o.gpus = {1};
  o.train.models = {"trivial"};
  o.collectives.ranks = {1};
  o.collectives.iters = 3;
  Harness harness(TimingSettings{.repetitions = 1});
  ASSERT_TRUE(RegisterGradsCases(o, harness).ok());
  Recorder recorder;
  benchmark::RunSpecifiedBenchmarks(&recorder, "^grads/trivial/nccl/");
  harness.Release();
  benchmark::ClearRegisteredBenchmarks();
  ASSERT_EQ(recorder.iterations.size(), 1u);
  const BenchRun& r = recorder.iterations[0];
  EXPECT_FALSE(r.error_occurred) << r.error_message;
  EXPECT_TRUE(absl::StrContains(r.report_label, "device memory")) << r.report_label;
  EXPECT_TRUE(absl::StrContains(r.report_label, "result checked")) << r.report_label;
}

}  // namespace
}  // namespace cnnbench::bench
