// The RAPL reader against folders that mimic /sys/class/powercap: package
// and DRAM zones found (core and uncore zones left to their package),
// energy accumulated across a counter's wrap-around, clear errors where
// there is no powercap or no readable counter; the CPU clock from cpufreq.
#include "core/rapl.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_files.h"

namespace cnnbench {
namespace {

using test_files::FreshTempDir;
using test_files::MakeDirs;
using test_files::WriteLine;

// A zone folder with its name, counter and range.
void Zone(const std::string& dir, const std::string& name, uint64_t energy, uint64_t range) {
  MakeDirs(dir);
  WriteLine(dir + "/name", name);
  WriteLine(dir + "/energy_uj", std::to_string(energy));
  WriteLine(dir + "/max_energy_range_uj", std::to_string(range));
}

TEST(RaplTest, EnergyDeltaAcrossOneWrapAround) {
  EXPECT_EQ(EnergyDelta(100, 250, 1000), 150u);
  EXPECT_EQ(EnergyDelta(900, 100, 1000), 200u);  // 900 -> 1000 wrapped -> 100
  EXPECT_EQ(EnergyDelta(5, 5, 1000), 0u);
}

TEST(RaplTest, ReadsPackagesAndDramAndAccumulatesAcrossAWrap) {
  const std::string root = FreshTempDir("powercap");
  Zone(root + "/intel-rapl:0", "package-0", 1'000'000, 10'000'000);
  Zone(root + "/intel-rapl:0/intel-rapl:0:0", "core", 5, 10'000'000);  // inside the package
  Zone(root + "/intel-rapl:0/intel-rapl:0:1", "dram", 200'000, 1'000'000);
  Zone(root + "/intel-rapl:1", "package-1", 9'500'000, 10'000'000);
  MakeDirs(root + "/intel-rapl-mmio:0");  // another interface: not read
  absl::StatusOr<RaplReader> rapl = RaplReader::Open(root);
  ASSERT_TRUE(rapl.ok()) << rapl.status();
  ASSERT_EQ(rapl->zones().size(), 3u);  // two packages and a DRAM; not the core zone
  EXPECT_EQ(rapl->package_joules(), 0);
  // Package 0 +2 J, package 1 wraps: 9.5 J -> 10 J -> 0.25 J (+0.75 J), DRAM +0.5 J.
  WriteLine(root + "/intel-rapl:0/energy_uj", "3000000");
  WriteLine(root + "/intel-rapl:1/energy_uj", "250000");
  WriteLine(root + "/intel-rapl:0/intel-rapl:0:1/energy_uj", "700000");
  ASSERT_TRUE(rapl->Sample().ok());
  EXPECT_NEAR(rapl->package_joules(), 2.75, 1e-12);
  EXPECT_NEAR(rapl->dram_joules(), 0.5, 1e-12);
  // The DRAM wraps too (0.7 J -> 1 J -> 0.1 J: +0.4 J).
  WriteLine(root + "/intel-rapl:0/intel-rapl:0:1/energy_uj", "100000");
  ASSERT_TRUE(rapl->Sample().ok());
  EXPECT_NEAR(rapl->dram_joules(), 0.9, 1e-12);
  EXPECT_NEAR(rapl->package_joules(), 2.75, 1e-12);
}

TEST(RaplTest, NoPowercapOrNoZoneOrAnUnreadableCounterSaysWhat) {
  absl::StatusOr<RaplReader> none = RaplReader::Open(FreshTempDir("empty") + "/missing");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("missing"), std::string::npos) << none.status();
  const std::string only_mmio = FreshTempDir("only_mmio");
  Zone(only_mmio + "/dtpm", "dtpm", 0, 0);
  absl::StatusOr<RaplReader> no_zone = RaplReader::Open(only_mmio);
  ASSERT_FALSE(no_zone.ok());
  EXPECT_NE(no_zone.status().message().find("no RAPL package zone"), std::string::npos);
  const std::string garbled = FreshTempDir("garbled");
  Zone(garbled + "/intel-rapl:0", "package-0", 1, 10);
  WriteLine(garbled + "/intel-rapl:0/energy_uj", "lots");
  absl::StatusOr<RaplReader> bad = RaplReader::Open(garbled);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("energy_uj"), std::string::npos) << bad.status();
}

TEST(RaplTest, CpuClockIsTheMeanOfCpufreqAndAbsentWithout) {
  const std::string cpus = FreshTempDir("cpus");
  for (const auto& [cpu, khz] : {std::pair{"cpu0", "2000000"}, std::pair{"cpu1", "3000000"}}) {
    MakeDirs(absl::StrCat(cpus, "/", cpu, "/cpufreq"));
    WriteLine(absl::StrCat(cpus, "/", cpu, "/cpufreq/scaling_cur_freq"), khz);
  }
  MakeDirs(cpus + "/cpufreq");  // not a CPU
  const std::optional<double> mhz = ReadCpuMhz(cpus);
  ASSERT_TRUE(mhz.has_value());
  EXPECT_DOUBLE_EQ(*mhz, 2500);
  EXPECT_FALSE(ReadCpuMhz(FreshTempDir("no_cpufreq")).has_value());
}

}  // namespace
}  // namespace cnnbench
