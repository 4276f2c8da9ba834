// The NVML sensor through a fake NVML: readings converted to watts, MHz,
// joules; a call that fails leaves its field unset; no power reading or no
// device is an error; throttle reasons named without the idle ones; NVML
// shut down when the sensor goes.
#include "core/nvml.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/core/fake_nvml.h"

namespace cnnbench {
namespace {

using nvml_test::Fake;
using nvml_test::FakeApi;

TEST(NvmlSensorTest, ReadsEverySensorInItsUnit) {
  Fake::inits = Fake::shutdowns = 0;
  Fake::temperature_fails = false;
  Fake::power_mw = 612'345;
  Fake::reasons = 0x1 | 0x4 | 0x40;  // idle, software power cap, hardware thermal
  Fake::energy_mj = 9'876'543;
  {
    auto sensor = NvmlSensor::Open(FakeApi(), "0000:3B:00.0");
    ASSERT_TRUE(sensor.ok()) << sensor.status();
    const GpuSample s = (*sensor)->Read();
    EXPECT_DOUBLE_EQ(*s.power_w, 612.345);
    EXPECT_EQ(*s.sm_clock_mhz, 1980);
    EXPECT_EQ(*s.memory_clock_mhz, 2619);
    EXPECT_EQ(*s.temperature_c, 61);
    EXPECT_EQ(*s.throttle_reasons, 0x45u);
    EXPECT_DOUBLE_EQ(*s.energy_j, 9876.543);
    Fake::temperature_fails = true;
    EXPECT_FALSE((*sensor)->Read().temperature_c.has_value());
    EXPECT_EQ(Fake::shutdowns, 0);
  }
  EXPECT_EQ(Fake::inits, 1);
  EXPECT_EQ(Fake::shutdowns, 1);
  // Without the optional entries: only power.
  NvmlApi bare = FakeApi();
  bare.clock = nullptr;
  bare.temperature = nullptr;
  bare.throttle_reasons = nullptr;
  bare.total_energy = nullptr;
  auto sensor = NvmlSensor::Open(bare, "0000:3B:00.0");
  ASSERT_TRUE(sensor.ok());
  const GpuSample s = (*sensor)->Read();
  EXPECT_TRUE(s.power_w.has_value());
  EXPECT_FALSE(s.sm_clock_mhz || s.temperature_c || s.throttle_reasons || s.energy_j);
}

TEST(NvmlSensorTest, NoDeviceOrNoPowerReadingIsAnError) {
  Fake::inits = Fake::shutdowns = 0;
  auto missing = NvmlSensor::Open(FakeApi(), "0000:AA:00.0");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("0000:AA:00.0"), std::string::npos);
  EXPECT_EQ(Fake::shutdowns, Fake::inits);  // shut down again
  NvmlApi no_power = FakeApi();
  no_power.power_usage = nullptr;
  auto powerless = NvmlSensor::Open(no_power, "0000:3B:00.0");
  ASSERT_FALSE(powerless.ok());
  EXPECT_NE(powerless.status().message().find("nvmlDeviceGetPowerUsage"), std::string::npos);
}

TEST(NvmlSensorTest, ThrottleReasonsLeaveOutIdleAndApplicationClocks) {
  EXPECT_EQ(ThrottlingBits(0x1 | 0x2 | 0x100), 0u);  // idle, app clocks, display clock
  EXPECT_EQ(ThrottlingBits(0x1 | 0x4 | 0x80), 0x84u);
  EXPECT_EQ(ThrottleReasonNames(0x4 | 0x8 | 0x20 | 0x40 | 0x80 | 0x10),
            (std::vector<std::string>{"sw_power_cap", "hw_slowdown", "sync_boost", "sw_thermal",
                                      "hw_thermal", "power_brake"}));
  EXPECT_TRUE(ThrottleReasonNames(0x1).empty());
}

}  // namespace
}  // namespace cnnbench
