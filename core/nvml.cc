#include "core/nvml.h"

#include <dlfcn.h>

#include "absl/strings/str_cat.h"

namespace cnnbench {
namespace {

// NVML's C API, as its public header declares it (nvml.h is not needed).
using NvmlReturn = int;       // nvmlReturn_t; 0 is NVML_SUCCESS
constexpr int kClockSm = 1;   // NVML_CLOCK_SM
constexpr int kClockMem = 2;  // NVML_CLOCK_MEM

template <typename F>
void Bind(void* library, const char* name, F* f) {
  *f = reinterpret_cast<F>(dlsym(library, name));
}

}  // namespace

absl::StatusOr<GpuClocks> ReadGpuClocks(const std::string& pci_bus_id) {
  absl::StatusOr<NvmlApi> api = LoadNvml();
  if (!api.ok()) return api.status();
  if (NvmlReturn r = api->init(); r != 0)
    return absl::UnavailableError(absl::StrCat("nvmlInit_v2 failed (", r, ")"));
  absl::StatusOr<GpuClocks> result;
  NvmlDevice device = nullptr;
  if (NvmlReturn d = api->by_bus_id(pci_bus_id.c_str(), &device); d != 0) {
    result = absl::NotFoundError(absl::StrCat("NVML has no GPU at ", pci_bus_id, " (", d, ")"));
  } else {
    GpuClocks clocks;
    unsigned int value = 0;
    if (api->max_clock != nullptr && api->max_clock(device, kClockSm, &value) == 0)
      clocks.sm_clock_max_mhz = static_cast<int>(value);
    if (api->max_clock != nullptr && api->max_clock(device, kClockMem, &value) == 0)
      clocks.memory_clock_max_mhz = static_cast<int>(value);
    if (api->clock != nullptr && api->clock(device, kClockSm, &value) == 0)
      clocks.sm_clock_mhz = static_cast<int>(value);
    if (api->power_limit != nullptr && api->power_limit(device, &value) == 0)
      clocks.power_limit_w = static_cast<int>(value / 1000);  // milliwatts
    result = clocks;
  }
  api->shutdown();
  return result;
}

absl::StatusOr<NvmlApi> LoadNvml() {
  void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr)
    return absl::UnavailableError(absl::StrCat("NVML not loadable: ", dlerror()));
  NvmlApi api;
  api.library = std::shared_ptr<void>(library, [](void* l) { dlclose(l); });
  Bind(library, "nvmlInit_v2", &api.init);
  Bind(library, "nvmlShutdown", &api.shutdown);
  Bind(library, "nvmlDeviceGetHandleByPciBusId_v2", &api.by_bus_id);
  Bind(library, "nvmlDeviceGetPowerUsage", &api.power_usage);
  Bind(library, "nvmlDeviceGetClockInfo", &api.clock);
  Bind(library, "nvmlDeviceGetTemperature", &api.temperature);
  Bind(library, "nvmlDeviceGetCurrentClocksEventReasons", &api.throttle_reasons);
  if (api.throttle_reasons == nullptr)  // its name before NVML 12.2
    Bind(library, "nvmlDeviceGetCurrentClocksThrottleReasons", &api.throttle_reasons);
  Bind(library, "nvmlDeviceGetTotalEnergyConsumption", &api.total_energy);
  Bind(library, "nvmlDeviceGetMaxClockInfo", &api.max_clock);
  Bind(library, "nvmlDeviceGetEnforcedPowerLimit", &api.power_limit);
  if (api.init == nullptr || api.shutdown == nullptr || api.by_bus_id == nullptr)
    return absl::UnavailableError("NVML lacks nvmlInit_v2 or nvmlDeviceGetHandleByPciBusId_v2");
  return api;
}

namespace {
// NVML's clocks event reason bits (nvml.h's nvmlClocksEventReason*).
struct ReasonBit {
  uint64_t bit;
  const char* name;
};
constexpr ReasonBit kThrottling[] = {
    {0x4, "sw_power_cap"}, {0x8, "hw_slowdown"}, {0x10, "sync_boost"},
    {0x20, "sw_thermal"},  {0x40, "hw_thermal"}, {0x80, "power_brake"},
};
}  // namespace

uint64_t ThrottlingBits(uint64_t bits) {
  uint64_t mask = 0;
  for (const ReasonBit& r : kThrottling) mask |= r.bit;
  return bits & mask;
}

std::vector<std::string> ThrottleReasonNames(uint64_t bits) {
  std::vector<std::string> names;
  for (const ReasonBit& r : kThrottling)
    if (bits & r.bit) names.push_back(r.name);
  return names;
}

absl::StatusOr<std::unique_ptr<NvmlSensor>> NvmlSensor::Open(const NvmlApi& api,
                                                             const std::string& pci_bus_id) {
  if (api.init == nullptr || api.shutdown == nullptr || api.by_bus_id == nullptr)
    return absl::UnavailableError("NVML lacks nvmlInit_v2 or nvmlDeviceGetHandleByPciBusId_v2");
  if (api.power_usage == nullptr)
    return absl::UnavailableError("NVML lacks nvmlDeviceGetPowerUsage");
  if (NvmlReturn r = api.init(); r != 0)
    return absl::UnavailableError(absl::StrCat("nvmlInit_v2 failed (", r, ")"));
  NvmlDevice device = nullptr;
  if (NvmlReturn d = api.by_bus_id(pci_bus_id.c_str(), &device); d != 0) {
    api.shutdown();
    return absl::NotFoundError(absl::StrCat("NVML has no GPU at ", pci_bus_id, " (", d, ")"));
  }
  return std::unique_ptr<NvmlSensor>(new NvmlSensor(api, device, pci_bus_id));
}

NvmlSensor::~NvmlSensor() { api_.shutdown(); }

GpuSample NvmlSensor::Read() const {
  GpuSample s;
  unsigned int value = 0;
  if (api_.power_usage(device_, &value) == 0) s.power_w = value / 1000.0;
  if (api_.clock != nullptr && api_.clock(device_, kClockSm, &value) == 0)
    s.sm_clock_mhz = static_cast<int>(value);
  if (api_.clock != nullptr && api_.clock(device_, kClockMem, &value) == 0)
    s.memory_clock_mhz = static_cast<int>(value);
  if (api_.temperature != nullptr && api_.temperature(device_, 0, &value) == 0)
    s.temperature_c = static_cast<int>(value);
  unsigned long long wide = 0;
  if (api_.throttle_reasons != nullptr && api_.throttle_reasons(device_, &wide) == 0)
    s.throttle_reasons = wide;
  if (api_.total_energy != nullptr && api_.total_energy(device_, &wide) == 0)
    s.energy_j = wide / 1000.0;
  return s;
}

}  // namespace cnnbench
