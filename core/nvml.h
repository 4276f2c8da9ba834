// GPU clocks, power limit and live sensors (power, clocks, temperature,
// throttle reasons, energy) from NVML (the driver's management library),
// loaded at run time with dlopen: no build or link dependency, and machines
// without a driver simply report nothing.
#ifndef CNNBENCH_CORE_NVML_H_
#define CNNBENCH_CORE_NVML_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace cnnbench {

struct GpuClocks {
  int sm_clock_max_mhz = 0;
  int memory_clock_max_mhz = 0;
  int sm_clock_mhz = 0;   // at the moment of reading
  int power_limit_w = 0;  // the enforced limit
};

// The GPU at `pci_bus_id` (as cudaDeviceGetPCIBusId writes it, e.g.
// "0000:3B:00.0"). An error saying why when NVML or the device is absent;
// fields NVML does not report stay 0.
absl::StatusOr<GpuClocks> ReadGpuClocks(const std::string& pci_bus_id);

// NVML's C entry points the sensor calls, as its public header declares
// them (0 is NVML_SUCCESS): LoadNvml binds them from the driver's library;
// tests give fakes. A null entry is a reading NVML does not offer.
struct NvmlDeviceOpaque;
using NvmlDevice = NvmlDeviceOpaque*;
struct NvmlApi {
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*by_bus_id)(const char*, NvmlDevice*) = nullptr;
  int (*power_usage)(NvmlDevice, unsigned int*) = nullptr;             // milliwatts
  int (*clock)(NvmlDevice, int, unsigned int*) = nullptr;              // MHz; 1 SM, 2 memory
  int (*temperature)(NvmlDevice, int, unsigned int*) = nullptr;        // C; sensor 0: the GPU
  int (*throttle_reasons)(NvmlDevice, unsigned long long*) = nullptr;  // clocks event reasons
  int (*total_energy)(NvmlDevice, unsigned long long*) = nullptr;      // millijoules (Volta on)
  int (*max_clock)(NvmlDevice, int, unsigned int*) = nullptr;          // MHz
  int (*power_limit)(NvmlDevice, unsigned int*) = nullptr;             // enforced, milliwatts
  std::shared_ptr<void> library;  // keeps the library loaded while the entries are used
};
absl::StatusOr<NvmlApi> LoadNvml();

// One reading of a GPU's sensors; what NVML does not report is unset.
struct GpuSample {
  std::optional<double> power_w;
  std::optional<int> sm_clock_mhz, memory_clock_mhz, temperature_c;
  std::optional<uint64_t> throttle_reasons;  // NVML's clocks event reason bits
  std::optional<double> energy_j;            // since the driver loaded
};

// NVML's clocks event reasons that slow the clocks below what was asked
// (software power cap, hardware slowdown, thermal, power brake, sync
// boost): `bits` without idle, application-clock and display-clock bits.
uint64_t ThrottlingBits(uint64_t bits);
// Their names, in bit order ("sw_power_cap", "hw_slowdown", ...).
std::vector<std::string> ThrottleReasonNames(uint64_t bits);

// A GPU's sensors, NVML initialised while it lives.
class NvmlSensor {
 public:
  // The GPU at `pci_bus_id` through `api`. Errors say why (no init, no such
  // device, no power reading).
  static absl::StatusOr<std::unique_ptr<NvmlSensor>> Open(const NvmlApi& api,
                                                          const std::string& pci_bus_id);
  ~NvmlSensor();
  NvmlSensor(const NvmlSensor&) = delete;
  NvmlSensor& operator=(const NvmlSensor&) = delete;
  // Every reading NVML gives; a call that fails leaves its field unset.
  GpuSample Read() const;
  const std::string& bus_id() const { return bus_id_; }

 private:
  NvmlSensor(NvmlApi api, NvmlDevice device, std::string bus_id)
      : api_(std::move(api)), device_(device), bus_id_(std::move(bus_id)) {}
  NvmlApi api_;
  NvmlDevice device_;
  std::string bus_id_;
};

}  // namespace cnnbench

#endif  // CNNBENCH_CORE_NVML_H_
