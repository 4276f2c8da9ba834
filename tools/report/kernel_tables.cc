#include "tools/report/kernel_tables.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/report/format_number.h"
#include "tools/report/train_tables.h"

namespace cnnbench::report {
namespace {

// A failed or missing case's cell; "" when the case has a value.
std::string FailureCell(const Measurement* m, Footnotes& notes, const std::string& where) {
  if (m == nullptr) return absl::StrCat("N/A", notes.Mark("not run", where));
  if (m->oom()) return "OOM";
  if (!m->ok())
    return absl::StrCat("N/A", notes.Mark(absl::StrCat("skipped: ", m->errors.front()), where));
  return "";
}

Section KernelSection(const PlatformResults& p) {
  Section section{"Kernels", {}, {}};
  // (family, variant, device) in first-seen order, each with its shapes,
  // precisions and cases.
  using GroupKey = std::tuple<std::string, std::string, std::string>;
  struct Group {
    std::vector<std::string> shapes, precisions;
    std::map<std::pair<std::string, std::string>, const Measurement*> cells;  // (shape, precision)
  };
  std::vector<GroupKey> order;
  std::map<GroupKey, Group> groups;
  for (const CaseName& c : p.kernel_order) {
    GroupKey key{c.family, KernelVariant(c), c.device};
    if (!groups.count(key)) order.push_back(key);
    Group& g = groups[key];
    AddDistinct(c.shape, g.shapes);
    AddDistinct(c.precision, g.precisions);
    g.cells[{c.shape, c.precision}] = &p.kernels.at(c);
  }
  for (const GroupKey& key : order) {
    const auto& [family, variant, device] = key;
    Group& g = groups[key];
    std::vector<std::string>& columns = g.precisions;
    std::sort(columns.begin(), columns.end(), [](const std::string& a, const std::string& b) {
      return std::make_pair(PrecisionRank(a), a) < std::make_pair(PrecisionRank(b), b);
    });
    // Compute kernels report FLOP/s; memory-bound ones (pooling) bytes/s:
    // the family's counter (bench/names.h).
    const bool flops = bench::FindCaseFamily(family)->counter == "flops";
    double max_flops = 0;
    for (const auto& [cell, m] : g.cells)
      max_flops = std::max(max_flops, m->Mean("flops").value_or(0));
    // TFLOP/s as DeepBench prints GPUs; GFLOP/s where nothing reaches one TFLOP/s (CPUs).
    const bool giga = flops && max_flops > 0 && max_flops < 1e12;
    const char* counter = flops ? "flops" : "bytes_per_second";
    const double scale = flops && !giga ? 1e12 : 1e9;
    Table t;
    t.title = absl::StrCat(family, variant.empty() ? "" : " ", variant, " on ", device, ", ",
                           flops ? (giga ? "GFLOP/s" : "TFLOP/s") : "GB/s");
    t.header = {"Shape"};
    t.header.insert(t.header.end(), columns.begin(), columns.end());
    Footnotes notes;
    for (const std::string& shape : g.shapes) {
      std::vector<std::string> row = {shape};
      for (const std::string& precision : columns) {
        auto it = g.cells.find({shape, precision});
        const Measurement* m = it == g.cells.end() ? nullptr : it->second;
        std::string cell = FailureCell(m, notes, absl::StrCat(shape, ", ", precision));
        if (cell.empty()) {
          std::optional<double> v = m->Mean(counter);
          cell = v ? FormatThroughput(*v / scale) : "-";
        }
        row.push_back(cell);
      }
      t.rows.push_back(std::move(row));
    }
    t.notes = notes.Notes();
    section.tables.push_back(std::move(t));
  }
  return section;
}

int DtypeBytes(const std::string& dtype) {
  static const std::map<std::string, int> kSizes = {
      {"int8", 1},   {"uint8", 1}, {"fp16", 2},  {"half", 2},   {"bf16", 2},
      {"fp32", 4},   {"float", 4}, {"int32", 4}, {"uint32", 4}, {"fp64", 8},
      {"double", 8}, {"int64", 8}, {"uint64", 8}};
  auto it = kSizes.find(dtype);
  return it == kSizes.end() ? 0 : it->second;
}

Section AllReduceSection(const PlatformResults& p) {
  Section section{"All-reduce", {}, {}};
  std::map<std::pair<std::string, int>, std::vector<const CaseName*>> groups;
  for (const auto& [c, m] : p.allreduce) groups[{c.impl, c.ranks}].push_back(&c);
  for (auto& [key, cases] : groups) {
    std::sort(cases.begin(), cases.end(), [](const CaseName* a, const CaseName* b) {
      return std::tie(a->dtype, a->bytes) < std::tie(b->dtype, b->bytes);
    });
    Table t;
    t.title = absl::StrCat("All-reduce, ", key.first, ", ", key.second, " ranks");
    t.header = {"size (B)",  "count (elements)", "type",        "redop",
                "time (us)", "algbw (GB/s)",     "busbw (GB/s)"};
    Footnotes notes;
    for (const CaseName* c : cases) {
      const Measurement& m = p.allreduce.at(*c);
      int element = DtypeBytes(c->dtype);
      std::vector<std::string> row = {absl::StrCat(c->bytes),
                                      element ? absl::StrCat(c->bytes / element) : "-", c->dtype,
                                      "sum"};
      std::string failure = FailureCell(&m, notes, absl::StrCat(c->bytes, " B ", c->dtype));
      if (!failure.empty()) {
        row.insert(row.end(), {failure, "-", "-"});
      } else {
        auto seconds = m.Mean("seconds");
        auto algbw = m.Mean("algbw"), busbw = m.Mean("busbw");
        row.push_back(seconds ? FormatMicroseconds(*seconds * 1e6) : "-");
        row.push_back(algbw ? absl::StrFormat("%.2f", *algbw / 1e9) : "-");
        row.push_back(busbw ? absl::StrFormat("%.2f", *busbw / 1e9) : "-");
      }
      t.rows.push_back(std::move(row));
    }
    t.notes = notes.Notes();
    t.notes.push_back("busbw = algbw * 2(n-1)/n, as nccl-tests defines it.");
    section.tables.push_back(std::move(t));
  }
  return section;
}

Section InputSection(const PlatformResults& p) {
  Section section{"Input pipeline", {}, {}};
  std::vector<std::pair<std::string, std::string>> columns;
  std::set<int> threads;
  for (const auto& [c, m] : p.input) {
    if (std::find(columns.begin(), columns.end(), std::make_pair(c.source, c.preprocess)) ==
        columns.end()) {
      columns.emplace_back(c.source, c.preprocess);
    }
    threads.insert(c.threads);
  }
  Table t;
  t.title = "Input pipeline, images/sec";
  t.header = {"Threads"};
  for (const auto& [source, preprocess] : columns) {
    t.header.push_back(absl::StrCat(source, " ", preprocess));
  }
  Footnotes notes;
  for (int n : threads) {
    std::vector<std::string> row = {absl::StrCat(n)};
    for (const auto& [source, preprocess] : columns) {
      auto it = p.input.find(CaseName::Input(source, preprocess, n));
      const Measurement* m = it == p.input.end() ? nullptr : &it->second;
      row.push_back(ThroughputCell(
          m, notes,
          absl::StrCat(source, " ", preprocess, ", ", n, n == 1 ? " thread" : " threads")));
    }
    t.rows.push_back(std::move(row));
  }
  t.notes = notes.Notes();
  section.tables.push_back(std::move(t));
  return section;
}

}  // namespace

std::vector<Section> KernelSections(const PlatformResults& p) {
  std::vector<Section> sections;
  if (!p.kernels.empty()) sections.push_back(KernelSection(p));
  if (!p.allreduce.empty()) sections.push_back(AllReduceSection(p));
  if (!p.input.empty()) sections.push_back(InputSection(p));
  return sections;
}

}  // namespace cnnbench::report
