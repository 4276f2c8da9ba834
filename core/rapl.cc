#include "core/rapl.h"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace cnnbench {
namespace {

// The entries of `dir` (sorted), or an empty list when it cannot be read.
std::vector<std::string> List(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

// The first line of a file, or an error naming it with the system's reason.
absl::StatusOr<std::string> FirstLine(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    const int error = errno;
    const std::string why = absl::StrCat(path, ": ", std::strerror(error));
    if (error == EACCES || error == EPERM) return absl::PermissionDeniedError(why);
    return absl::NotFoundError(why);
  }
  std::string line;
  std::getline(in, line);
  return std::string(absl::StripAsciiWhitespace(line));
}

absl::StatusOr<uint64_t> Counter(const std::string& path) {
  absl::StatusOr<std::string> line = FirstLine(path);
  if (!line.ok()) return line.status();
  uint64_t value = 0;
  if (!absl::SimpleAtoi(*line, &value))
    return absl::DataLossError(absl::StrCat(path, ": '", *line, "' is not a counter"));
  return value;
}

// A zone folder name as the kernel writes them: intel-rapl:N or intel-rapl:N:M.
bool IsZone(const std::string& name) { return absl::StartsWith(name, "intel-rapl:"); }

}  // namespace

uint64_t EnergyDelta(uint64_t last, uint64_t now, uint64_t max_range) {
  if (now >= last) return now - last;
  return max_range >= last ? now + (max_range - last) : now;  // wrapped once
}

absl::StatusOr<RaplReader> RaplReader::Open(const std::string& root) {
  RaplReader reader;
  const std::vector<std::string> entries = List(root);
  if (entries.empty()) return absl::NotFoundError(absl::StrCat("no ", root));
  for (const std::string& top : entries) {
    // Packages at the top (intel-rapl:N); their subzones (intel-rapl:N:M)
    // inside them, where DRAM is.
    if (!IsZone(top) || std::count(top.begin(), top.end(), ':') != 1) continue;
    std::vector<std::string> zones = {root + "/" + top};
    for (const std::string& sub : List(root + "/" + top))
      if (IsZone(sub)) zones.push_back(root + "/" + top + "/" + sub);
    for (const std::string& path : zones) {
      absl::StatusOr<std::string> name = FirstLine(path + "/name");
      if (!name.ok()) continue;
      const bool dram = *name == "dram";
      if (!dram && !absl::StartsWith(*name, "package"))
        continue;  // core, uncore: inside the package
      Zone zone;
      zone.path = path;
      zone.name = *name;
      zone.dram = dram;
      absl::StatusOr<uint64_t> range = Counter(path + "/max_energy_range_uj");
      absl::StatusOr<uint64_t> energy = Counter(path + "/energy_uj");
      if (!energy.ok()) return energy.status();
      if (!range.ok()) return range.status();
      zone.max_range_uj = *range;
      zone.last_uj = *energy;
      reader.zones_.push_back(zone);
    }
  }
  if (reader.zones_.empty())
    return absl::NotFoundError(absl::StrCat("no RAPL package zone under ", root));
  return reader;
}

absl::Status RaplReader::Sample() {
  for (Zone& zone : zones_) {
    absl::StatusOr<uint64_t> now = Counter(zone.path + "/energy_uj");
    if (!now.ok()) return now.status();
    zone.joules += static_cast<double>(EnergyDelta(zone.last_uj, *now, zone.max_range_uj)) * 1e-6;
    zone.last_uj = *now;
  }
  return absl::OkStatus();
}

double RaplReader::package_joules() const {
  double j = 0;
  for (const Zone& zone : zones_)
    if (!zone.dram) j += zone.joules;
  return j;
}

double RaplReader::dram_joules() const {
  double j = 0;
  for (const Zone& zone : zones_)
    if (zone.dram) j += zone.joules;
  return j;
}

std::optional<double> ReadCpuMhz(const std::string& sysfs_cpu) {
  double sum = 0;
  int count = 0;
  for (const std::string& cpu : List(sysfs_cpu)) {
    if (!absl::StartsWith(cpu, "cpu") || cpu.size() < 4 || !absl::ascii_isdigit(cpu[3])) continue;
    absl::StatusOr<uint64_t> khz = Counter(sysfs_cpu + "/" + cpu + "/cpufreq/scaling_cur_freq");
    if (!khz.ok()) continue;
    sum += static_cast<double>(*khz) / 1000.0;
    ++count;
  }
  if (count > 0) return sum / count;
  return std::nullopt;
}

}  // namespace cnnbench
