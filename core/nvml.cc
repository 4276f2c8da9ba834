#include "core/nvml.h"

#include <dlfcn.h>

#include "absl/strings/str_cat.h"

namespace cnnbench {
namespace {

// NVML's C API, as its public header declares it (nvml.h is not needed).
using NvmlReturn = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr int kClockSm = 1;   // NVML_CLOCK_SM
constexpr int kClockMem = 2;  // NVML_CLOCK_MEM

struct Nvml {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  NvmlReturn (*by_bus_id)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*max_clock)(NvmlDevice, int, unsigned int*) = nullptr;
  NvmlReturn (*clock)(NvmlDevice, int, unsigned int*) = nullptr;
  NvmlReturn (*power_limit)(NvmlDevice, unsigned int*) = nullptr;
};

template <typename F>
void Bind(void* library, const char* name, F* f) {
  *f = reinterpret_cast<F>(dlsym(library, name));
}

}  // namespace

absl::StatusOr<GpuClocks> ReadGpuClocks(const std::string& pci_bus_id) {
  void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr)
    return absl::UnavailableError(absl::StrCat("NVML not loadable: ", dlerror()));
  Nvml n;
  Bind(library, "nvmlInit_v2", &n.init);
  Bind(library, "nvmlShutdown", &n.shutdown);
  Bind(library, "nvmlDeviceGetHandleByPciBusId_v2", &n.by_bus_id);
  Bind(library, "nvmlDeviceGetMaxClockInfo", &n.max_clock);
  Bind(library, "nvmlDeviceGetClockInfo", &n.clock);
  Bind(library, "nvmlDeviceGetEnforcedPowerLimit", &n.power_limit);
  absl::StatusOr<GpuClocks> result;
  if (n.init == nullptr || n.shutdown == nullptr || n.by_bus_id == nullptr) {
    result = absl::UnavailableError("NVML lacks nvmlInit_v2 or nvmlDeviceGetHandleByPciBusId_v2");
  } else if (NvmlReturn r = n.init(); r != 0) {
    result = absl::UnavailableError(absl::StrCat("nvmlInit_v2 failed (", r, ")"));
  } else {
    NvmlDevice device = nullptr;
    if (NvmlReturn d = n.by_bus_id(pci_bus_id.c_str(), &device); d != 0) {
      result = absl::NotFoundError(absl::StrCat("NVML has no GPU at ", pci_bus_id, " (", d, ")"));
    } else {
      GpuClocks clocks;
      unsigned int value = 0;
      if (n.max_clock != nullptr && n.max_clock(device, kClockSm, &value) == 0)
        clocks.sm_clock_max_mhz = static_cast<int>(value);
      if (n.max_clock != nullptr && n.max_clock(device, kClockMem, &value) == 0)
        clocks.memory_clock_max_mhz = static_cast<int>(value);
      if (n.clock != nullptr && n.clock(device, kClockSm, &value) == 0)
        clocks.sm_clock_mhz = static_cast<int>(value);
      if (n.power_limit != nullptr && n.power_limit(device, &value) == 0)
        clocks.power_limit_w = static_cast<int>(value / 1000);  // milliwatts
      result = clocks;
    }
    n.shutdown();
  }
  dlclose(library);
  return result;
}

}  // namespace cnnbench
