// A fake NVML for tests (NvmlApi's entries): one GPU at bus id
// 0000:3B:00.0 whose readings the test sets; counts init and shutdown.
#ifndef CNNBENCH_TESTS_CORE_FAKE_NVML_H_
#define CNNBENCH_TESTS_CORE_FAKE_NVML_H_

#include <string>

#include "core/nvml.h"

namespace cnnbench::nvml_test {

struct Fake {
  static inline int inits = 0, shutdowns = 0;
  static inline bool temperature_fails = false;
  static inline unsigned int power_mw = 0;
  static inline unsigned long long reasons = 0, energy_mj = 0;
  static int Init() { return ++inits, 0; }
  static int Shutdown() { return ++shutdowns, 0; }
  static int ByBusId(const char* bus, NvmlDevice* device) {
    if (std::string(bus) != "0000:3B:00.0") return 13;  // NVML_ERROR_NOT_FOUND
    *device = reinterpret_cast<NvmlDevice>(0x1);
    return 0;
  }
  static int Power(NvmlDevice, unsigned int* mw) { return *mw = power_mw, 0; }
  static int Clock(NvmlDevice, int which, unsigned int* mhz) {
    return *mhz = which == 1 ? 1980 : 2619, 0;
  }
  static int Temperature(NvmlDevice, int, unsigned int* c) {
    if (temperature_fails) return 3;
    return *c = 61, 0;
  }
  static int Reasons(NvmlDevice, unsigned long long* bits) { return *bits = reasons, 0; }
  static int Energy(NvmlDevice, unsigned long long* mj) { return *mj = energy_mj, 0; }
};

inline NvmlApi FakeApi() {
  NvmlApi api;
  api.init = &Fake::Init;
  api.shutdown = &Fake::Shutdown;
  api.by_bus_id = &Fake::ByBusId;
  api.power_usage = &Fake::Power;
  api.clock = &Fake::Clock;
  api.temperature = &Fake::Temperature;
  api.throttle_reasons = &Fake::Reasons;
  api.total_energy = &Fake::Energy;
  return api;
}

}  // namespace cnnbench::nvml_test

#endif  // CNNBENCH_TESTS_CORE_FAKE_NVML_H_
