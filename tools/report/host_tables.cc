#include "tools/report/host_tables.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tools/report/format_number.h"
#include "tools/report/model_names.h"
#include "tools/report/train_query.h"

namespace cnnbench::report {
namespace {

std::string Counter(int host) { return absl::StrCat("host", host, "_arrival_ms"); }

// How many hosts' counters the case has.
int HostsOf(const Measurement& m) {
  int hosts = 0;
  while (m.Mean(Counter(hosts))) ++hosts;
  return hosts;
}

}  // namespace

std::vector<std::string> HostNames(const std::string& host_facts) {
  std::vector<std::string> names;
  for (absl::string_view entry : absl::StrSplit(host_facts, " | ", absl::SkipEmpty())) {
    entry = absl::StripAsciiWhitespace(entry);
    names.emplace_back(entry.substr(0, entry.find(" (")));
  }
  return names;
}

std::optional<Section> HostSection(const PlatformResults& p) {
  int most = 0;
  for (const auto& [c, m] : p.train) most = std::max(most, HostsOf(m));
  if (most < 2) return std::nullopt;
  const std::vector<std::string> names = HostNames(p.Context("host_facts"));
  Table t;
  t.title = "Arrival at each step's all-reduce, by host (ms)";
  t.header = {"Model", "Precision", "Batch", "GPUs"};
  for (int h = 0; h < most; ++h)
    t.header.push_back(h < static_cast<int>(names.size()) ? names[h] : absl::StrCat("host ", h));
  t.header.push_back("slowest host");
  t.header.push_back("slowest - fastest");
  for (const auto& [c, m] : p.train) {
    const int hosts = HostsOf(m);
    if (hosts < 2) continue;
    std::vector<std::string> row = {ModelDisplayName(c.model), c.precision, absl::StrCat(c.batch),
                                    GpuLabel(Placement::Of(c))};
    int slowest = 0, fastest = 0;
    for (int h = 0; h < most; ++h) {
      const std::optional<double> ms = m.Mean(Counter(h));
      row.push_back(ms ? FormatThroughput(*ms) : "-");
      if (h >= hosts) continue;
      if (*ms > *m.Mean(Counter(slowest))) slowest = h;
      if (*ms < *m.Mean(Counter(fastest))) fastest = h;
    }
    row.push_back(t.header[4 + slowest]);
    row.push_back(FormatThroughput(*m.Mean(Counter(slowest)) - *m.Mean(Counter(fastest))));
    t.rows.push_back(std::move(row));
  }
  t.notes.push_back(
      "Each host's mean, over its ranks and the timed steps, of the time from a step's start "
      "until its ranks had handed their last gradients to the all-reduce; the rest of the step "
      "is waiting for the others and the reduction. The slowest host sets every rank's step.");
  return Section{"Hosts", {std::move(t)}, {}};
}

}  // namespace cnnbench::report
