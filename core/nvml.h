// GPU clocks and power limit from NVML (the driver's management library),
// loaded at run time with dlopen: no build or link dependency, and machines
// without a driver simply report nothing.
#ifndef CNNBENCH_CORE_NVML_H_
#define CNNBENCH_CORE_NVML_H_

#include <string>

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

}  // namespace cnnbench

#endif  // CNNBENCH_CORE_NVML_H_
