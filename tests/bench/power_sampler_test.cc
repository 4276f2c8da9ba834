// The power sampler's lifecycle and sums: a thread only while a span is
// sampled and only where there is a sensor, every reading inside the span,
// CPU energy from RAPL's counters (a fixture folder that mimics powercap),
// GPU power, clocks and throttling from a fake NVML, and the counters:
// absent without a sensor, never zeros.
#include "bench/harness/power_sampler.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/bench/recorder.h"
#include "tests/core/fake_nvml.h"
#include "tests/testing/temp_files.h"

namespace cnnbench::bench {
namespace {

using test_files::FreshTempDir;
using test_files::MakeDirs;
using test_files::WriteLine;

using nvml_test::Fake;
using nvml_test::FakeApi;
using std::chrono::milliseconds;

// A powercap folder with one package at `uj` microjoules.
std::string Powercap(const std::string& name, uint64_t uj) {
  const std::string root = FreshTempDir(name);
  MakeDirs(root + "/intel-rapl:0");
  WriteLine(root + "/intel-rapl:0/name", "package-0");
  WriteLine(root + "/intel-rapl:0/energy_uj", std::to_string(uj));
  WriteLine(root + "/intel-rapl:0/max_energy_range_uj", "1000000000");
  return root;
}

TEST(PowerSamplerTest, NoSensorNoThreadNoCounters) {
  PowerSensors none = PowerSensors::Open({}, FreshTempDir("no_powercap") + "/missing");
  none.sysfs_cpu = FreshTempDir("no_cpufreq");
  EXPECT_FALSE(none.rapl.has_value());
  EXPECT_NE(none.Describe().find("CPU not available ("), std::string::npos) << none.Describe();
  PowerSampler sampler(none, {}, milliseconds(1));
  EXPECT_FALSE(sampler.has_sensor());
  sampler.Start();
  EXPECT_FALSE(sampler.thread_running());
  const PowerSummary summary = sampler.Stop();
  EXPECT_EQ(summary.samples, 0);
  EXPECT_FALSE(summary.power_w || summary.joules || summary.cpu_mhz_mean);
  // A GPU case whose GPU has no sensor is not measured by the CPU's instead.
  PowerSensors cpu_only = PowerSensors::Open({}, Powercap("cpu_only", 0));
  PowerSampler gpu_case(cpu_only, {0}, milliseconds(1));
  EXPECT_FALSE(gpu_case.has_sensor());
}

TEST(PowerSamplerTest, CpuEnergyOverTheSpanAndEveryReadingInsideIt) {
  const std::string root = Powercap("cpu", 5'000'000);
  PowerSensors sensors = PowerSensors::Open({}, root);
  sensors.sysfs_cpu = FreshTempDir("no_cpufreq_either");
  ASSERT_TRUE(sensors.rapl.has_value()) << sensors.cpu_unavailable;
  EXPECT_EQ(sensors.Describe(), "RAPL package");
  // Energy spent before the span does not count.
  WriteLine(root + "/intel-rapl:0/energy_uj", "6000000");
  PowerSampler sampler(sensors, {}, milliseconds(2));
  ASSERT_TRUE(sampler.has_sensor());
  sampler.Start();
  EXPECT_TRUE(sampler.thread_running());
  std::this_thread::sleep_for(milliseconds(20));
  WriteLine(root + "/intel-rapl:0/energy_uj", "9000000");  // 3 J in the span
  std::this_thread::sleep_for(milliseconds(10));
  const PowerSummary summary = sampler.Stop();
  EXPECT_FALSE(sampler.thread_running());
  ASSERT_TRUE(summary.joules.has_value());
  EXPECT_NEAR(*summary.joules, 3.0, 1e-9);
  EXPECT_NEAR(*summary.power_w, 3.0 / summary.seconds, 1e-9);
  // Start's and Stop's; the periodic ones depend on the thread being
  // scheduled, which a busy machine may not do within the span.
  EXPECT_GE(summary.samples, 2);
  const std::vector<double> times = sampler.sample_times();
  ASSERT_EQ(static_cast<int>(times.size()), summary.samples);
  for (double t : times) {
    EXPECT_GE(t, 0);
    EXPECT_LE(t, summary.seconds);
  }
  // Stopped: no reading after the span.
  std::this_thread::sleep_for(milliseconds(10));
  EXPECT_EQ(sampler.sample_times().size(), times.size());
  EXPECT_EQ(summary.source, "RAPL package");
}

TEST(PowerSamplerTest, GpuPowerClocksThrottlingAndEnergyFromNvml) {
  Fake::power_mw = 500'000;
  Fake::reasons = 0x1;  // idle only: not throttling
  Fake::energy_mj = 1'000'000;
  Fake::temperature_fails = false;
  PowerSensors sensors;
  auto sensor = NvmlSensor::Open(FakeApi(), "0000:3B:00.0");
  ASSERT_TRUE(sensor.ok()) << sensor.status();
  sensors.gpus.push_back(*std::move(sensor));
  EXPECT_NE(sensors.Describe().find("NVML on 1 GPU(s)"), std::string::npos) << sensors.Describe();
  PowerSampler sampler(sensors, {0}, milliseconds(2));
  ASSERT_TRUE(sampler.has_sensor());
  sampler.Start();
  std::this_thread::sleep_for(milliseconds(20));
  Fake::reasons = 0x4;          // a software power cap from now on
  Fake::energy_mj = 1'400'000;  // 400 J over the span (the counter wins over power x time)
  std::this_thread::sleep_for(milliseconds(20));
  const PowerSummary summary = sampler.Stop();
  ASSERT_TRUE(summary.joules.has_value());
  EXPECT_NEAR(*summary.joules, 400, 1e-9);
  EXPECT_NEAR(*summary.power_w, 400 / summary.seconds, 1e-6);
  EXPECT_DOUBLE_EQ(*summary.sm_clock_mhz_mean, 1980);
  EXPECT_DOUBLE_EQ(*summary.sm_clock_mhz_min, 1980);
  EXPECT_DOUBLE_EQ(*summary.temperature_c_max, 61);
  ASSERT_TRUE(summary.throttled_fraction.has_value());
  EXPECT_GT(*summary.throttled_fraction, 0);
  EXPECT_LT(*summary.throttled_fraction, 1);
  EXPECT_EQ(summary.throttle_reasons, (std::vector<std::string>{"sw_power_cap"}));
  EXPECT_NE(ThrottleNote(summary).find("(sw_power_cap)"), std::string::npos);
  EXPECT_EQ(ThrottleNote(PowerSummary{}), "");
}

// The counters of a summary in a benchmark's state: per step and per
// joule, and nothing a sensor did not give.
void Counters(benchmark::State& state, const PowerSummary* summary) {
  for (auto _ : state) state.SetIterationTime(0.001);
  AddPowerCounters(state, *summary, 10, 32);
}

TEST(PowerSamplerTest, CountersPerStepAndPerJouleAndNoneWithoutASensor) {
  PowerSummary gpu;
  gpu.seconds = 2;
  gpu.joules = 800;
  gpu.power_w = 400;
  gpu.sm_clock_mhz_mean = 1900;
  gpu.sm_clock_mhz_min = 1700;
  gpu.throttled_fraction = 0;
  PowerSummary none;
  benchmark::ClearRegisteredBenchmarks();
  benchmark::RegisterBenchmark("power_test/gpu", Counters, &gpu)->Iterations(1)->UseManualTime();
  benchmark::RegisterBenchmark("power_test/none", Counters, &none)->Iterations(1)->UseManualTime();
  Recorder recorder;
  benchmark::RunSpecifiedBenchmarks(&recorder, "^power_test/");
  benchmark::ClearRegisteredBenchmarks();
  ASSERT_EQ(recorder.Of("power_test/gpu").size(), 1u);
  ASSERT_EQ(recorder.Of("power_test/none").size(), 1u);
  const benchmark::UserCounters g = recorder.Of("power_test/gpu").at(0).counters;
  EXPECT_DOUBLE_EQ(g.at("power_w").value, 400);
  EXPECT_DOUBLE_EQ(g.at("energy_j").value, 80);           // per step
  EXPECT_DOUBLE_EQ(g.at("images_per_joule").value, 0.4);  // 320 images / 800 J
  EXPECT_DOUBLE_EQ(g.at("sm_clock_mhz_min").value, 1700);
  EXPECT_EQ(g.count("throttled_fraction"), 0u);  // none throttled: left out
  EXPECT_EQ(g.count("cpu_clock_mhz"), 0u);
  EXPECT_TRUE(recorder.Of("power_test/none").at(0).counters.empty());
}

// Through the harness: each repetition's timed span is sampled (the
// workload sees its summary in Report, the counters follow), the thread is
// gone after every case, and a harness without sensors writes no counter.
class SleepingWorkload : public Workload {
 public:
  const Stream& stream() const override { return stream_; }
  absl::Status Run() override {
    std::this_thread::sleep_for(milliseconds(5));
    return absl::OkStatus();
  }
  double items_per_iteration() const override { return 8; }
  absl::Status Report(benchmark::State&) override {
    seen.push_back(power());
    return absl::OkStatus();
  }
  static inline std::vector<PowerSummary> seen;

 private:
  Stream stream_ = Stream::Cpu();
};

TEST(PowerSamplerTest, TheHarnessSamplesEachRepetitionsTimedSpan) {
  const std::string root = Powercap("harness", 0);
  PowerSensors sensors = PowerSensors::Open({}, root);
  ASSERT_TRUE(sensors.rapl.has_value());
  for (bool with_sensors : {true, false}) {
    SleepingWorkload::seen.clear();
    TimedCase c;
    c.name = "power_test/case";
    c.family = "train";
    c.iterations = 4;
    c.prepare = [] {
      return absl::StatusOr<std::unique_ptr<Workload>>(std::make_unique<SleepingWorkload>());
    };
    benchmark::ClearRegisteredBenchmarks();
    Harness harness(TimingSettings{.repetitions = 2});
    if (with_sensors) harness.SetPowerSensors(&sensors, milliseconds(2));
    harness.Register(std::move(c));
    Recorder recorder;
    benchmark::RunSpecifiedBenchmarks(&recorder, "^power_test/");
    harness.Release();
    benchmark::ClearRegisteredBenchmarks();
    const std::vector<BenchRun> runs = recorder.Of("power_test/case");
    ASSERT_EQ(runs.size(), 2u);
    ASSERT_EQ(SleepingWorkload::seen.size(), 2u);
    for (size_t i = 0; i < runs.size(); ++i) {
      const PowerSummary& p = SleepingWorkload::seen[i];
      if (!with_sensors) {
        EXPECT_EQ(p.samples, 0);
        EXPECT_EQ(runs[i].counters.count("power_w"), 0u);
        continue;
      }
      // The span: four steps of at least 5 ms, sampled at its start and its
      // end (and every 2 ms where the thread gets the time).
      EXPECT_GE(p.seconds, 0.02);
      EXPECT_GE(p.samples, 2);
      ASSERT_TRUE(p.joules.has_value());  // 0 J: the fixture's counter did not move
      EXPECT_EQ(runs[i].counters.count("power_w"), 1u);
      EXPECT_EQ(runs[i].counters.count("energy_j"), 1u);
      EXPECT_EQ(runs[i].counters.count("images_per_joule"), 0u);  // no energy, no rate
    }
  }
}

}  // namespace
}  // namespace cnnbench::bench
