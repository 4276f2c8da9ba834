#include "tools/report/kernel_tables.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tools/report/collective_tables.h"
#include "tools/report/format_number.h"
#include "tools/report/messages.h"
#include "tools/report/model_names.h"
#include "tools/report/peak_tables.h"
#include "tools/report/spread.h"
#include "tools/report/train_tables.h"

namespace cnnbench::report {
namespace {

// A failed or missing case's cell; "" when the case has a value.
std::string FailureCell(const Measurement* m, Footnotes& notes, const std::string& where) {
  if (m == nullptr) return absl::StrCat("N/A", notes.Mark("not run", where));
  if (m->oom()) return "OOM";
  if (!m->ok()) return absl::StrCat("N/A", notes.Mark(FailureNote(m->FirstError()), where));
  return "";
}

// One kernel table: an operation, pass and device; rows = shapes, columns =
// precisions.
struct KernelGroup {
  std::string family, variant, device;
  std::vector<std::string> shapes, precisions;
  std::map<std::pair<std::string, std::string>, const Measurement*> cells;  // (shape, precision)

  // Compute kernels report FLOP/s; memory-bound ones (pooling) bytes/s: the
  // family's counter (bench/suite/names.h).
  bool flops() const { return bench::FindCaseFamily(family)->counter == "flops"; }
  const char* counter() const { return flops() ? "flops" : "bytes_per_second"; }
  // "conv fwd on cuda".
  std::string Name() const {
    return absl::StrCat(family, variant.empty() ? "" : " ", variant, " on ", device);
  }
  const Measurement* Find(const std::string& shape, const std::string& precision) const {
    auto it = cells.find({shape, precision});
    return it == cells.end() ? nullptr : it->second;
  }
};

// In first-seen order, which follows registration.
std::vector<KernelGroup> KernelGroups(const PlatformResults& p) {
  using GroupKey = std::tuple<std::string, std::string, std::string>;
  std::vector<GroupKey> order;
  std::map<GroupKey, KernelGroup> groups;
  for (const CaseName& c : p.kernel_order) {
    GroupKey key{c.family, KernelVariant(c), c.device};
    if (!groups.count(key)) {
      order.push_back(key);
      groups[key] = KernelGroup{c.family, KernelVariant(c), c.device, {}, {}, {}};
    }
    KernelGroup& g = groups[key];
    AddDistinct(c.shape, g.shapes);
    AddDistinct(c.precision, g.precisions);
    g.cells[{c.shape, c.precision}] = &p.kernels.at(c);
  }
  std::vector<KernelGroup> out;
  for (const GroupKey& key : order) {
    KernelGroup& g = groups[key];
    std::sort(g.precisions.begin(), g.precisions.end(),
              [](const std::string& a, const std::string& b) {
                return std::make_pair(PrecisionRank(a), a) < std::make_pair(PrecisionRank(b), b);
              });
    out.push_back(std::move(g));
  }
  return out;
}

// Each precision's best cell of a kernel table as a fraction of its
// ceiling measured in the same platform's run: a compute kernel against the
// device's peak of that precision (peak/<precision>/cpu, or /cuda), a
// memory-bound one against the memory's copy rate (bandwidth/copy/cpu, or
// bandwidth/d2d/cuda); "" without any.
std::string CeilingNote(const PlatformResults& p, const KernelGroup& g) {
  const bool cpu = g.device == "cpu";
  std::vector<std::string> parts;
  for (const std::string& precision : g.precisions) {
    double best = 0;
    for (const std::string& shape : g.shapes)
      if (const Measurement* m = g.Find(shape, precision); m != nullptr && m->ok())
        best = std::max(best, m->Mean(g.counter()).value_or(0));
    if (!(best > 0)) continue;
    std::string name;
    double ceiling = 0;
    if (g.flops()) {
      const auto* peak = cpu ? ReferencePeak(p, precision) : GpuReferencePeak(p, precision);
      if (peak == nullptr || !peak->second.ok()) continue;
      name = peak->first.ToString();
      ceiling = peak->second.Mean("flops").value_or(0);
    } else {
      const std::optional<ReferenceRate> rate = MemoryReference(p, cpu ? "local" : "nccl");
      if (!rate) continue;
      name = rate->name;
      ceiling = rate->bytes_per_second;
    }
    if (!(ceiling > 0)) continue;
    parts.push_back(absl::StrCat(precision, " ", FormatPercent(best / ceiling), " of ", name));
  }
  if (parts.empty()) return "";
  return absl::StrCat(
      "Best cell against its ceiling measured in this run: ", absl::StrJoin(parts, "; "), ".");
}

Section KernelSection(const PlatformResults& p, double max_cv) {
  Section section{"Kernels", {}, {}};
  // The CPU's peak first: the ceiling the kernels below are read against.
  if (std::optional<Table> peak = PeakTable(p, max_cv)) section.tables.push_back(*peak);
  if (std::optional<Table> gpu = GpuPeakTable(p, max_cv)) section.tables.push_back(*gpu);
  for (const KernelGroup& g : KernelGroups(p)) {
    const bool flops = g.flops();
    double max_flops = 0;
    for (const auto& [cell, m] : g.cells)
      max_flops = std::max(max_flops, m->Mean("flops").value_or(0));
    // TFLOP/s as DeepBench prints GPUs; GFLOP/s where nothing reaches one TFLOP/s (CPUs).
    const bool giga = flops && max_flops > 0 && max_flops < 1e12;
    const double scale = flops && !giga ? 1e12 : 1e9;
    Table t;
    t.title = absl::StrCat(g.Name(), ", ", flops ? (giga ? "GFLOP/s" : "TFLOP/s") : "GB/s");
    t.header = {"Shape"};
    t.header.insert(t.header.end(), g.precisions.begin(), g.precisions.end());
    Footnotes notes;
    for (const std::string& shape : g.shapes) {
      std::vector<std::string> row = {shape};
      for (const std::string& precision : g.precisions) {
        const Measurement* m = g.Find(shape, precision);
        const std::string where = absl::StrCat(shape, ", ", precision);
        std::string cell = FailureCell(m, notes, where);
        if (cell.empty()) cell = ValueCell(*m, g.counter(), scale, max_cv, notes, where);
        row.push_back(cell);
      }
      t.rows.push_back(std::move(row));
    }
    t.notes = notes.Notes();
    if (std::string ceiling = CeilingNote(p, g); !ceiling.empty()) t.notes.push_back(ceiling);
    section.tables.push_back(std::move(t));
  }
  return section;
}

// One step's gradient all-reduce per model (grads/ cases): what the
// communication of a data-parallel step costs, beside the models' tables.
Section GradsSection(const PlatformResults& p, double max_cv) {
  Section section{"Gradient all-reduce per step", {}, {}};
  Table t;
  t.title = "Gradient all-reduce per step";
  t.header = {"Model",   "implementation", "ranks",        "bucket (MiB)", "gradients (MiB)",
              "buckets", "time (ms)",      "algbw (GB/s)", "busbw (GB/s)"};
  Footnotes notes;
  for (const auto& [c, m] : p.grads) {
    const std::string where =
        absl::StrCat(ModelDisplayName(c.model), ", ", c.impl, ", ", c.ranks, " ranks");
    std::vector<std::string> row = {ModelDisplayName(c.model), c.impl, absl::StrCat(c.ranks),
                                    absl::StrCat(c.bytes >> 20)};
    const std::string failure = FailureCell(&m, notes, where);
    if (!failure.empty()) {
      row.insert(row.end(), {"-", "-", failure, "-", "-"});
    } else {
      auto bytes = m.Mean("gradient_bytes"), buckets = m.Mean("buckets");
      auto seconds = m.Mean("seconds"), algbw = m.Mean("algbw"), busbw = m.Mean("busbw");
      row.push_back(bytes ? absl::StrFormat("%.1f", *bytes / (1 << 20)) : "-");
      row.push_back(buckets ? absl::StrFormat("%.0f", *buckets) : "-");
      row.push_back(seconds ? absl::StrCat(absl::StrFormat("%.2f", *seconds * 1e3),
                                           NoiseMark(m, "seconds", max_cv, notes, where))
                            : "-");
      row.push_back(algbw ? absl::StrFormat("%.2f", *algbw / 1e9) : "-");
      row.push_back(busbw ? absl::StrFormat("%.2f", *busbw / 1e9) : "-");
    }
    t.rows.push_back(std::move(row));
  }
  t.notes = notes.Notes();
  t.notes.push_back(
      "The model's gradient block in the trainer's buckets and order, fp32 average in place; "
      "busbw = algbw * 2(n-1)/n.");
  section.tables.push_back(std::move(t));
  return section;
}

// The input table's layout: (source, preprocess) columns and thread-count rows.
struct InputLayout {
  std::vector<std::pair<std::string, std::string>> columns;
  std::set<int> threads;
};

InputLayout InputLayoutOf(const PlatformResults& p) {
  InputLayout layout;
  for (const auto& [c, m] : p.input) {
    if (std::find(layout.columns.begin(), layout.columns.end(),
                  std::make_pair(c.source, c.preprocess)) == layout.columns.end()) {
      layout.columns.emplace_back(c.source, c.preprocess);
    }
    layout.threads.insert(c.threads);
  }
  return layout;
}

// The input table with `cell` printing each (measurement or null, place).
Table InputTable(
    const PlatformResults& p, const std::string& title,
    const std::function<std::string(const Measurement*, Footnotes&, const std::string&)>& cell) {
  const InputLayout layout = InputLayoutOf(p);
  Table t;
  t.title = title;
  t.header = {"Threads"};
  for (const auto& [source, preprocess] : layout.columns) {
    t.header.push_back(absl::StrCat(source, " ", preprocess));
  }
  Footnotes notes;
  for (int n : layout.threads) {
    std::vector<std::string> row = {absl::StrCat(n)};
    for (const auto& [source, preprocess] : layout.columns) {
      auto it = p.input.find(CaseName::Input(source, preprocess, n));
      const Measurement* m = it == p.input.end() ? nullptr : &it->second;
      row.push_back(
          cell(m, notes,
               absl::StrCat(source, " ", preprocess, ", ", n, n == 1 ? " thread" : " threads")));
    }
    t.rows.push_back(std::move(row));
  }
  t.notes = notes.Notes();
  return t;
}

Section InputSection(const PlatformResults& p, double max_cv) {
  Section section{"Input pipeline", {}, {}};
  section.tables.push_back(
      InputTable(p, "Input pipeline, images/sec",
                 [max_cv](const Measurement* m, Footnotes& notes, const std::string& where) {
                   return ThroughputCell(m, notes, where, max_cv);
                 }));
  return section;
}

}  // namespace

std::vector<Section> KernelSections(const PlatformResults& p, double max_cv) {
  std::vector<Section> sections;
  if (!p.kernels.empty() || !p.peak.empty()) sections.push_back(KernelSection(p, max_cv));
  if (std::optional<Section> bandwidth = BandwidthSection(p, max_cv))
    sections.push_back(std::move(*bandwidth));
  if (std::optional<Section> collectives = CollectiveSection(p, max_cv))
    sections.push_back(std::move(*collectives));
  if (!p.grads.empty()) sections.push_back(GradsSection(p, max_cv));
  if (!p.input.empty()) sections.push_back(InputSection(p, max_cv));
  return sections;
}

std::vector<Table> KernelSpreadTables(const PlatformResults& p) {
  std::vector<Table> tables;
  if (std::optional<Table> peak = PeakSpreadTable(p)) tables.push_back(*peak);
  for (const KernelGroup& g : KernelGroups(p)) {
    Table t;
    t.title = absl::StrCat("Spread: ", g.Name());
    t.header = {"Shape"};
    t.header.insert(t.header.end(), g.precisions.begin(), g.precisions.end());
    for (const std::string& shape : g.shapes) {
      std::vector<std::string> row = {shape};
      for (const std::string& precision : g.precisions) {
        row.push_back(SpreadCell(g.Find(shape, precision), g.counter()));
      }
      t.rows.push_back(std::move(row));
    }
    tables.push_back(std::move(t));
  }
  for (Table& t : CollectiveSpreadTables(p)) tables.push_back(std::move(t));
  if (!p.input.empty()) {
    Table t = InputTable(p, "Spread: Input pipeline",
                         [](const Measurement* m, Footnotes&, const std::string&) {
                           return SpreadCell(m, "images_per_second");
                         });
    tables.push_back(std::move(t));
  }
  return tables;
}

}  // namespace cnnbench::report
