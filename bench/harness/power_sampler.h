// Power, energy, clocks and throttling during a case's timed span: a thread
// started just before the first timed step and stopped just after the last
// (never inside the timed work itself) reads the sensors every period — on
// GPUs NVML (power draw, SM and memory clocks, temperature, throttle
// reasons, the energy counter), on the CPU RAPL's package and DRAM energy
// counters (/sys/class/powercap) and the CPU clock (cpufreq) — and sums
// them up as the case's counters. A sensor that is missing gives no counter
// (never a zero) and the run's context says why once.
#ifndef CNNBENCH_BENCH_POWER_SAMPLER_H_
#define CNNBENCH_BENCH_POWER_SAMPLER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "benchmark/benchmark.h"
#include "core/nvml.h"
#include "core/rapl.h"

namespace cnnbench::bench {

// What this machine can measure, opened once for the run.
struct PowerSensors {
  std::optional<RaplReader> rapl;                 // the CPU's packages and DRAM
  std::vector<std::unique_ptr<NvmlSensor>> gpus;  // by CUDA ordinal (null: not available)
  std::string sysfs_cpu = "/sys/devices/system/cpu";
  // Why a kind has no sensor ("" when it has one), for the context.
  std::string cpu_unavailable, gpu_unavailable;

  // This machine's: RAPL under /sys/class/powercap, NVML for each of the
  // `gpu_bus_ids` (cudaDeviceGetPCIBusId's, by ordinal).
  static PowerSensors Open(const std::vector<std::string>& gpu_bus_ids,
                           const std::string& powercap = "/sys/class/powercap");
  // The context's one line: "RAPL package+dram; NVML on 1 GPU(s)", or
  // "not available (no /sys/class/powercap)".
  std::string Describe() const;
};

// One case's span, summed up.
struct PowerSummary {
  double seconds = 0;             // Start to Stop
  int samples = 0;                // periodic readings in the span (Start's and Stop's included)
  std::string source;             // "RAPL package+dram", "NVML, 2 GPU(s)"
  std::optional<double> joules;   // the case's device(s) over the span
  std::optional<double> power_w;  // mean
  std::optional<double> cpu_mhz_mean, cpu_mhz_min;
  std::optional<double> sm_clock_mhz_mean, sm_clock_mhz_min;
  std::optional<double> temperature_c_max;
  std::optional<double> throttled_fraction;   // of the GPU samples with a throttling reason
  std::vector<std::string> throttle_reasons;  // seen in the span, by name
};

class PowerSampler {
 public:
  // Samples the GPUs `gpus` (CUDA ordinals) when not empty, else the CPU,
  // every `period`. Without a sensor for them Start starts no thread and
  // Stop returns an empty summary.
  PowerSampler(PowerSensors& sensors, std::vector<int> gpus, std::chrono::milliseconds period);
  ~PowerSampler();
  PowerSampler(const PowerSampler&) = delete;
  PowerSampler& operator=(const PowerSampler&) = delete;

  bool has_sensor() const { return has_sensor_; }
  // Takes the first reading and starts the thread (when there is a sensor).
  void Start();
  // Takes the last reading, joins the thread and sums the span up.
  PowerSummary Stop();
  bool thread_running() const { return thread_.joinable(); }
  // Seconds since Start of each reading taken (tests: none outside the span).
  std::vector<double> sample_times() const;

 private:
  void SampleNow();  // under mutex_
  void Loop();

  PowerSensors& sensors_;
  std::vector<NvmlSensor*> gpus_;
  bool use_rapl_ = false;
  bool has_sensor_ = false;
  std::chrono::milliseconds period_;
  std::chrono::steady_clock::time_point start_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
  // The readings.
  std::vector<double> times_;
  std::vector<double> gpu_power_, sm_clock_, cpu_mhz_, temperature_;
  int gpu_samples_ = 0, throttled_samples_ = 0;
  uint64_t reasons_seen_ = 0;
  double rapl_start_j_ = 0;
  std::vector<std::optional<double>> gpu_energy_start_;
  std::vector<std::optional<double>> gpu_energy_last_;
};

// The counters of a summary, where its sensors gave them: power_w,
// energy_j (per step), images_per_joule (with `items_per_step` > 0),
// sm_clock_mhz and _min, cpu_clock_mhz and _min, gpu_temperature_c_max,
// and throttled_fraction where some sample throttled (absent: none did).
void AddPowerCounters(benchmark::State& state, const PowerSummary& power, int64_t steps,
                      double items_per_step);

// The label's note: ", throttled 12% of samples (sw_power_cap, hw_thermal)"
// where a GPU throttled; "" otherwise.
std::string ThrottleNote(const PowerSummary& power);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_POWER_SAMPLER_H_
