#include "tools/report/energy_tables.h"

#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/report/format_number.h"

namespace cnnbench::report {
namespace {

std::string Number(const std::optional<double>& v, const char* format) {
  return v ? absl::StrFormat(format, *v) : "-";
}

void AddRows(const std::map<CaseName, Measurement>& cases, Table& t) {
  for (const auto& [name, m] : cases) {
    if (!m.ok()) continue;
    const std::optional<double> power = m.Mean("power_w");
    if (!power) continue;
    const std::optional<double> ips = m.Mean("images_per_second");
    const std::optional<double> throttled = m.Mean("throttled_fraction");
    std::optional<double> clock = m.Mean("sm_clock_mhz");
    std::optional<double> clock_min = m.Mean("sm_clock_mhz_min");
    if (!clock) {
      clock = m.Mean("cpu_clock_mhz");
      clock_min = m.Mean("cpu_clock_mhz_min");
    }
    t.rows.push_back(
        {name.ToString(), ips ? FormatThroughput(*ips) : "-", Number(power, "%.1f"),
         Number(m.Mean("images_per_joule"), "%.3g"), Number(m.Mean("energy_j"), "%.3g"),
         clock ? absl::StrFormat("%.0f (min %.0f)", *clock, clock_min.value_or(*clock)) : "-",
         throttled ? FormatPercent(*throttled) : "0%"});
  }
}

}  // namespace

std::optional<Section> EnergySection(const PlatformResults& p) {
  Table t;
  t.title = "Energy (train and infer cases whose timed span had a power sensor)";
  t.header = {"case", "images/sec", "power W", "images/J", "J/step", "clock MHz", "throttled"};
  AddRows(p.train, t);
  AddRows(p.infer, t);
  if (t.rows.empty()) return std::nullopt;
  t.notes.push_back(
      "Power: the case's GPUs through NVML (their energy counter where it has one), or the "
      "CPU's RAPL package and DRAM counters on CPU cases, sampled over each repetition's timed "
      "span, averaged over the repetitions; images/J = images/sec / W (perf per watt). "
      "Clock: the GPU's SM clock (the CPU's where there is no GPU). Throttled: the share of "
      "samples with a throttle reason (the case's label names them).");
  return Section{"Energy", {std::move(t)}, {}};
}

std::string ThrottleMark(const Measurement& m, Footnotes& notes, const std::string& where) {
  const std::optional<double> throttled = m.Mean("throttled_fraction");
  if (!throttled || !(*throttled > 0)) return "";
  return notes.Mark(
      "throttled during the timed span (power cap, thermal or other clock slowdown; see Energy "
      "and the case's label)",
      absl::StrCat(where, ": ", FormatPercent(*throttled), " of samples"));
}

}  // namespace cnnbench::report
