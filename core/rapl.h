// CPU energy from the kernel's powercap interface (RAPL: Intel's, and AMD's
// through the same `intel-rapl` zones), and the CPU clock where readable.
// Each package zone (`intel-rapl:N`, named "package-N") and its DRAM
// subzone (`intel-rapl:N:M` named "dram") has a cumulative `energy_uj`
// counter that wraps at `max_energy_range_uj`; the reader accumulates the
// deltas, so it must sample at least once per wrap (minutes at full power).
#ifndef CNNBENCH_CORE_RAPL_H_
#define CNNBENCH_CORE_RAPL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace cnnbench {

class RaplReader {
 public:
  struct Zone {
    std::string path;  // the zone's folder
    std::string name;  // "package-0", "dram"
    bool dram = false;
    uint64_t max_range_uj = 0;
    uint64_t last_uj = 0;
    double joules = 0;  // accumulated since Open
  };

  // The package and DRAM zones under `root` (/sys/class/powercap), each read
  // once. NotFound naming what is missing when there is none (no powercap,
  // e.g. in a VM); PermissionDenied when the counters are not readable (the
  // kernel restricts energy_uj to root since 5.10).
  static absl::StatusOr<RaplReader> Open(const std::string& root = "/sys/class/powercap");

  // Reads every counter and adds what each moved since the last read
  // (across one wrap-around: now + max_range - last).
  absl::Status Sample();
  // Joules since Open, as of the last Sample: the packages' and the DRAMs'.
  double package_joules() const;
  double dram_joules() const;
  const std::vector<Zone>& zones() const { return zones_; }

 private:
  std::vector<Zone> zones_;
};

// The energy a counter moved from `last` to `now` (microjoules), across at
// most one wrap-around at `max_range` (a counter that came back below its
// last value wrapped).
uint64_t EnergyDelta(uint64_t last, uint64_t now, uint64_t max_range);

// The mean clock of the CPUs in MHz: each `cpu*/cpufreq/scaling_cur_freq`
// under `sysfs_cpu` (kHz); nullopt where no CPU has one (a VM: its
// /proc/cpuinfo "cpu MHz" is the nominal clock, not a reading, so it is
// not used).
std::optional<double> ReadCpuMhz(const std::string& sysfs_cpu = "/sys/devices/system/cpu");

}  // namespace cnnbench

#endif  // CNNBENCH_CORE_RAPL_H_
