#include "bench/harness/power_sampler.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace cnnbench::bench {
namespace {

double Mean(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

}  // namespace

PowerSensors PowerSensors::Open(const std::vector<std::string>& gpu_bus_ids,
                                const std::string& powercap) {
  PowerSensors s;
  absl::StatusOr<RaplReader> rapl = RaplReader::Open(powercap);
  if (rapl.ok()) {
    s.rapl = *std::move(rapl);
  } else {
    s.cpu_unavailable = std::string(rapl.status().message());
  }
  if (gpu_bus_ids.empty()) return s;
  absl::StatusOr<NvmlApi> api = LoadNvml();
  if (!api.ok()) {
    s.gpu_unavailable = std::string(api.status().message());
    return s;
  }
  for (const std::string& bus : gpu_bus_ids) {
    absl::StatusOr<std::unique_ptr<NvmlSensor>> sensor = NvmlSensor::Open(*api, bus);
    if (!sensor.ok() && s.gpu_unavailable.empty())
      s.gpu_unavailable = std::string(sensor.status().message());
    s.gpus.push_back(sensor.ok() ? *std::move(sensor) : nullptr);
  }
  return s;
}

std::string PowerSensors::Describe() const {
  std::vector<std::string> parts;
  if (rapl) {
    bool dram = false;
    for (const RaplReader::Zone& z : rapl->zones()) dram |= z.dram;
    parts.push_back(dram ? "RAPL package+dram" : "RAPL package");
  } else {
    parts.push_back(absl::StrCat("CPU not available (", cpu_unavailable, ")"));
  }
  const int gpu_sensors = static_cast<int>(
      std::count_if(gpus.begin(), gpus.end(), [](const auto& g) { return g != nullptr; }));
  if (gpu_sensors > 0) {
    parts.push_back(absl::StrCat("NVML on ", gpu_sensors, " GPU(s)"));
  } else if (!gpu_unavailable.empty()) {
    parts.push_back(absl::StrCat("GPU not available (", gpu_unavailable, ")"));
  }
  return absl::StrJoin(parts, "; ");
}

PowerSampler::PowerSampler(PowerSensors& sensors, std::vector<int> gpus,
                           std::chrono::milliseconds period)
    : sensors_(sensors), period_(period) {
  for (int ordinal : gpus)
    if (ordinal >= 0 && ordinal < static_cast<int>(sensors.gpus.size()) &&
        sensors.gpus[ordinal] != nullptr)
      gpus_.push_back(sensors.gpus[ordinal].get());
  // A GPU case is measured by its GPUs only; one whose GPUs have no sensor
  // has no counters rather than the CPU's.
  use_rapl_ = gpus.empty() && sensors.rapl.has_value();
  has_sensor_ = use_rapl_ || !gpus_.empty() || (gpus.empty() && ReadCpuMhz(sensors.sysfs_cpu));
  gpu_energy_start_.assign(gpus_.size(), std::nullopt);
  gpu_energy_last_.assign(gpus_.size(), std::nullopt);
}

PowerSampler::~PowerSampler() {
  if (thread_.joinable()) Stop();
}

void PowerSampler::SampleNow() {
  times_.push_back(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  if (use_rapl_) (void)sensors_.rapl->Sample();  // a failed read keeps the last total
  if (gpus_.empty()) {
    if (std::optional<double> mhz = ReadCpuMhz(sensors_.sysfs_cpu)) cpu_mhz_.push_back(*mhz);
    return;
  }
  double power = 0;
  bool all_power = true;
  bool throttled = false;
  for (size_t g = 0; g < gpus_.size(); ++g) {
    const GpuSample s = gpus_[g]->Read();
    if (s.power_w) {
      power += *s.power_w;
    } else {
      all_power = false;
    }
    if (s.sm_clock_mhz) sm_clock_.push_back(*s.sm_clock_mhz);
    if (s.temperature_c) temperature_.push_back(*s.temperature_c);
    if (s.throttle_reasons) {
      const uint64_t bits = ThrottlingBits(*s.throttle_reasons);
      reasons_seen_ |= bits;
      throttled |= bits != 0;
    }
    if (s.energy_j) {
      if (!gpu_energy_start_[g]) gpu_energy_start_[g] = s.energy_j;
      gpu_energy_last_[g] = s.energy_j;
    }
  }
  if (all_power) gpu_power_.push_back(power);
  ++gpu_samples_;
  throttled_samples_ += throttled;
}

void PowerSampler::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, period_, [this] { return stop_; })) SampleNow();
}

void PowerSampler::Start() {
  if (!has_sensor_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  start_ = std::chrono::steady_clock::now();
  if (use_rapl_) {
    (void)sensors_.rapl->Sample();
    rapl_start_j_ = sensors_.rapl->package_joules() + sensors_.rapl->dram_joules();
  }
  SampleNow();
  stop_ = false;
  thread_ = std::thread([this] { Loop(); });
}

PowerSummary PowerSampler::Stop() {
  PowerSummary p;
  if (!thread_.joinable()) return p;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    SampleNow();
  }
  wake_.notify_all();
  thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  p.seconds = times_.back();
  p.samples = static_cast<int>(times_.size());
  if (use_rapl_) {
    bool dram = false;
    for (const RaplReader::Zone& z : sensors_.rapl->zones()) dram |= z.dram;
    p.source = dram ? "RAPL package+dram" : "RAPL package";
    p.joules = sensors_.rapl->package_joules() + sensors_.rapl->dram_joules() - rapl_start_j_;
    if (p.seconds > 0) p.power_w = *p.joules / p.seconds;
  }
  if (!cpu_mhz_.empty()) {
    p.cpu_mhz_mean = Mean(cpu_mhz_);
    p.cpu_mhz_min = *std::min_element(cpu_mhz_.begin(), cpu_mhz_.end());
  }
  if (!gpus_.empty()) {
    p.source = absl::StrCat("NVML, ", gpus_.size(), " GPU(s)");
    // The energy counter where every GPU has one; else mean power x time.
    bool counted = true;
    double joules = 0;
    for (size_t g = 0; g < gpus_.size(); ++g) {
      counted &= gpu_energy_start_[g].has_value();
      if (counted) joules += *gpu_energy_last_[g] - *gpu_energy_start_[g];
    }
    if (!gpu_power_.empty()) p.power_w = Mean(gpu_power_);
    if (counted && p.seconds > 0) {
      p.joules = joules;
      p.power_w = joules / p.seconds;
    } else if (p.power_w) {
      p.joules = *p.power_w * p.seconds;
    }
    if (!sm_clock_.empty()) {
      p.sm_clock_mhz_mean = Mean(sm_clock_);
      p.sm_clock_mhz_min = *std::min_element(sm_clock_.begin(), sm_clock_.end());
    }
    if (!temperature_.empty())
      p.temperature_c_max = *std::max_element(temperature_.begin(), temperature_.end());
    if (gpu_samples_ > 0)
      p.throttled_fraction = static_cast<double>(throttled_samples_) / gpu_samples_;
    p.throttle_reasons = ThrottleReasonNames(reasons_seen_);
  }
  return p;
}

std::vector<double> PowerSampler::sample_times() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return times_;
}

void AddPowerCounters(benchmark::State& state, const PowerSummary& power, int64_t steps,
                      double items_per_step) {
  if (power.power_w) state.counters["power_w"] = *power.power_w;
  if (power.joules && steps > 0) {
    state.counters["energy_j"] = *power.joules / static_cast<double>(steps);
    if (items_per_step > 0 && *power.joules > 0)
      state.counters["images_per_joule"] =
          items_per_step * static_cast<double>(steps) / *power.joules;
  }
  if (power.sm_clock_mhz_mean) {
    state.counters["sm_clock_mhz"] = *power.sm_clock_mhz_mean;
    state.counters["sm_clock_mhz_min"] = *power.sm_clock_mhz_min;
  }
  if (power.cpu_mhz_mean) {
    state.counters["cpu_clock_mhz"] = *power.cpu_mhz_mean;
    state.counters["cpu_clock_mhz_min"] = *power.cpu_mhz_min;
  }
  if (power.temperature_c_max) state.counters["gpu_temperature_c_max"] = *power.temperature_c_max;
  // Only where some sample throttled: a counter 0 in every repetition has a
  // NaN variation, which Google Benchmark writes as bare NaN (not JSON).
  if (power.throttled_fraction && *power.throttled_fraction > 0)
    state.counters["throttled_fraction"] = *power.throttled_fraction;
}

std::string ThrottleNote(const PowerSummary& power) {
  if (!power.throttled_fraction || !(*power.throttled_fraction > 0)) return "";
  return absl::StrFormat(", throttled in %.0f%% of samples (%s)", *power.throttled_fraction * 100,
                         absl::StrJoin(power.throttle_reasons, ", "));
}

}  // namespace cnnbench::bench
