#include "tools/report/collective_tables.h"

#include <algorithm>
#include <cstdio>
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <tuple>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/dtype.h"
#include "kernels/collectives/communicator.h"
#include "tools/report/format_number.h"
#include "tools/report/messages.h"
#include "tools/report/spread.h"

namespace cnnbench::report {
namespace {

// nccl-tests' order of the reductions (-o all), then none.
int OpOrder(const std::string& op) {
  static const std::vector<std::string> kOrder = {"sum", "prod", "max", "min", "avg", "none"};
  auto it = std::find(kOrder.begin(), kOrder.end(), op);
  return static_cast<int>(it - kOrder.begin());
}

// The collective's display name from its traits, capitalised ("All-reduce").
std::string DisplayName(const std::string& family) {
  Collective collective;
  if (!FindCollective(family, &collective)) return family;
  std::string name(CollectiveTraitsOf(collective).display);
  if (!name.empty()) name[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(name[0])));
  return name;
}

// The wrong-element counts a failed check names.
void WrongFromError(const std::string& error, CollectiveRow& row) {
  static const std::regex kCounts("wrong elements: ([0-9]+) out of place, ([0-9]+) in place");
  std::smatch match;
  if (!std::regex_search(error, match, kCounts)) return;
  int64_t out = 0, in = 0;
  if (absl::SimpleAtoi(match[1].str(), &out)) row.out_wrong = out;
  if (absl::SimpleAtoi(match[2].str(), &in)) row.in_wrong = in;
}

CollectiveRow RowOf(const CaseName& c, const Measurement& m, int context_root) {
  CollectiveRow row;
  row.name = &c;
  row.m = &m;
  Collective collective = Collective::kAllReduce;
  const bool known = FindCollective(c.family, &collective);
  absl::StatusOr<DType> dtype = ParseDType(c.dtype);
  // nccl-tests' count column is its paramcount: the whole buffer of an
  // all-reduce, broadcast or reduce, one rank's part of an all-gather,
  // reduce-scatter or all-to-all (the case's ShapeOf).
  if (dtype.ok())
    row.count = known ? static_cast<int64_t>(
                            ShapeOf(collective, SizeOf(*dtype), c.bytes, c.ranks).count)
                      : c.bytes / static_cast<int64_t>(SizeOf(*dtype));
  row.root = known && Rooted(collective) ? context_root : -1;
  if (!m.ok()) {
    WrongFromError(m.FirstError(), row);
    return row;
  }
  row.out_wrong = row.in_wrong = 0;  // the case checks its results: it passed
  if (known && !HasInPlace(collective)) row.in_wrong.reset();  // no in-place variant
  const double factor = known ? BusFactor(collective, c.ranks) : 0;
  const double bytes = static_cast<double>(c.bytes);
  if (auto s = m.Mean("seconds"); s && *s > 0) row.out_us = *s * 1e6;
  row.out_algbw = m.Mean("algbw");
  row.out_busbw = m.Mean("busbw");
  if (!row.out_algbw && row.out_us) row.out_algbw = bytes / (*row.out_us * 1e-6);
  if (!row.out_busbw && row.out_algbw) row.out_busbw = *row.out_algbw * factor;
  if (known && !HasInPlace(collective)) return row;  // nothing in place to read
  row.in_algbw = m.Mean("algbw_inplace");
  row.in_busbw = m.Mean("busbw_inplace");
  if (row.in_algbw && *row.in_algbw > 0) row.in_us = bytes / *row.in_algbw * 1e6;
  return row;
}

// Why a collective's in-place columns are empty when it has no in-place
// form (all-to-all), and what nccl-tests does there; "" when it has one.
std::string NoInPlaceNote(const std::string& family) {
  Collective collective;
  if (!FindCollective(family, &collective) || HasInPlace(collective)) return "";
  std::string note = absl::StrCat("not timed by cnnbench, whose ",
                                  CollectiveTraitsOf(collective).display, " has no in-place form");
  if (collective == Collective::kAllToAll)
    absl::StrAppend(&note,
                    " (nccl-tests' alltoall_perf times one buffer as both send and receive "
                    "buffer, and does not check that result: its #wrong is N/A)");
  return note;
}

std::string Gbps(const std::optional<double>& v) {
  return v ? absl::StrFormat("%.2f", *v / 1e9) : "-";
}
std::string Wrong(const std::optional<int64_t>& v) { return v ? absl::StrCat(*v) : "-"; }

}  // namespace

std::optional<ReferenceRate> MemoryReference(const PlatformResults& p,
                                             const std::string& transport) {
  std::optional<ReferenceRate> best;
  const bool gpu = transport == "nccl";
  for (const auto& [c, m] : p.bandwidth) {
    if (c.algorithm != (gpu ? "d2d" : "copy")) continue;
    const std::optional<double> rate = m.ok() ? m.Mean("bytes_per_second") : std::nullopt;
    if (!rate || !(*rate > 0)) continue;
    if (!best || *rate > best->bytes_per_second) best = ReferenceRate{c.ToString(), *rate};
  }
  return best;
}

std::optional<Section> BandwidthSection(const PlatformResults& p, double max_cv) {
  if (p.bandwidth.empty()) return std::nullopt;
  // Rows (kind, device, bytes) in the family's order; columns thread counts.
  std::vector<std::tuple<int, std::string, std::string, int64_t>> rows;
  std::vector<int> threads;
  auto kind_order = [](const std::string& k) {
    static const std::vector<std::string> kOrder = {"copy", "triad", "d2d", "h2d", "d2h"};
    return static_cast<int>(std::find(kOrder.begin(), kOrder.end(), k) - kOrder.begin());
  };
  for (const auto& [c, m] : p.bandwidth) {
    const auto row = std::make_tuple(kind_order(c.algorithm), c.algorithm, c.device, c.bytes);
    if (std::find(rows.begin(), rows.end(), row) == rows.end()) rows.push_back(row);
    if (std::find(threads.begin(), threads.end(), c.threads) == threads.end())
      threads.push_back(c.threads);
  }
  std::sort(rows.begin(), rows.end());
  std::sort(threads.begin(), threads.end());
  Table t;
  t.title = "Memory bandwidth, GB/s";
  t.header = {"kind", "device", "size (B)"};
  for (int n : threads) t.header.push_back(absl::StrCat(n, n == 1 ? " thread" : " threads"));
  Footnotes notes;
  for (const auto& [order, kind, device, bytes] : rows) {
    std::vector<std::string> row = {kind, device, absl::StrCat(bytes)};
    for (int n : threads) {
      auto it = p.bandwidth.find(CaseName::Bandwidth(kind, device, bytes, n));
      if (it == p.bandwidth.end()) {
        row.push_back("");
        continue;
      }
      const Measurement& m = it->second;
      const std::string where = absl::StrCat(kind, " ", device, " ", n, " threads");
      if (m.oom()) {
        row.push_back("OOM");
      } else if (!m.ok()) {
        row.push_back(absl::StrCat("N/A", notes.Mark(FailureNote(m.FirstError()), where)));
      } else {
        row.push_back(ValueCell(m, "bytes_per_second", 1e9, max_cv, notes, where));
      }
    }
    t.rows.push_back(std::move(row));
  }
  t.notes = notes.Notes();
  t.notes.push_back(
      "Counted as STREAM counts, the bytes the kernel reads and writes (copy and d2d: read + "
      "write, triad: 2 reads + write; h2d, d2h: the bytes copied); write-allocate traffic not "
      "counted. GPU copies are one host thread's cudaMemcpyAsync; host copies an OpenMP team.");
  return Section{"Memory bandwidth", {std::move(t)}, {}};
}

std::optional<double> CollectiveGroup::AvgBusbw() const {
  double sum = 0;
  int n = 0;
  for (const CollectiveRow& r : rows)
    for (const auto& v : {r.out_busbw, r.in_busbw})
      if (v) sum += *v, ++n;
  if (n == 0) return std::nullopt;
  return sum / n;
}

std::string CollectiveGroup::Title() const {
  return absl::StrCat(DisplayName(family), ", ", impl, ", ", ranks, " rank", ranks == 1 ? "" : "s",
                      ", ", dtype);
}

std::vector<CollectiveGroup> CollectiveGroups(const PlatformResults& p) {
  int root = 0;
  if (!absl::SimpleAtoi(p.Context("collective_root"), &root)) root = 0;
  using Key = std::tuple<int, std::string, int, std::string>;  // family order, impl, ranks, dtype
  std::map<Key, CollectiveGroup> groups;
  for (const auto& [c, m] : p.collectives) {
    const bench::CaseFamily* f = bench::FindCaseFamily(c.family);
    const Key key{f != nullptr ? static_cast<int>(f->id) : 0, c.impl, c.ranks, c.dtype};
    CollectiveGroup& g = groups[key];
    g.family = c.family;
    g.impl = c.impl;
    g.ranks = c.ranks;
    g.dtype = c.dtype;
    g.rows.push_back(RowOf(c, m, root));
  }
  std::vector<CollectiveGroup> out;
  for (auto& [key, g] : groups) {
    std::sort(g.rows.begin(), g.rows.end(), [](const CollectiveRow& a, const CollectiveRow& b) {
      return std::make_tuple(OpOrder(a.name->op), a.name->bytes) <
             std::make_tuple(OpOrder(b.name->op), b.name->bytes);
    });
    out.push_back(std::move(g));
  }
  return out;
}

std::optional<Section> CollectiveSection(const PlatformResults& p, double max_cv) {
  const std::vector<CollectiveGroup> groups = CollectiveGroups(p);
  if (groups.empty()) return std::nullopt;
  Section section{"Collectives", {}, {}};
  for (const CollectiveGroup& g : groups) {
    Table t;
    t.title = g.Title();
    t.header = {"size (B)",          "count (elements)", "type",         "redop",  "root",
                "out-of-place (us)", "algbw (GB/s)",     "busbw (GB/s)", "#wrong", "in-place (us)",
                "algbw (GB/s)",      "busbw (GB/s)",     "#wrong"};
    Footnotes notes;
    for (const CollectiveRow& r : g.rows) {
      const CaseName& c = *r.name;
      std::vector<std::string> row = {absl::StrCat(c.bytes), absl::StrCat(r.count), c.dtype, c.op,
                                      absl::StrCat(r.root)};
      const std::string where = absl::StrCat(c.bytes, " B ", c.op);
      std::string failure;
      if (r.m->oom()) {
        failure = "OOM";
      } else if (!r.m->ok()) {
        failure = absl::StrCat("N/A", notes.Mark(FailureNote(r.m->FirstError()), where));
      } else if (!r.m->NotFiniteText("seconds").empty()) {
        failure = ValueCell(*r.m, "seconds", 1, max_cv, notes, where);  // N/A, not finite
      }
      if (!failure.empty()) {
        row.insert(row.end(),
                   {failure, "-", "-", Wrong(r.out_wrong), "-", "-", "-", Wrong(r.in_wrong)});
      } else {
        row.push_back(r.out_us ? absl::StrCat(FormatMicroseconds(*r.out_us),
                                              NoiseMark(*r.m, "seconds", max_cv, notes, where))
                               : "-");
        row.insert(row.end(), {Gbps(r.out_algbw), Gbps(r.out_busbw), Wrong(r.out_wrong),
                               r.in_us ? FormatMicroseconds(*r.in_us) : "-", Gbps(r.in_algbw),
                               Gbps(r.in_busbw), Wrong(r.in_wrong)});
      }
      t.rows.push_back(std::move(row));
    }
    t.notes = notes.Notes();
    const std::optional<double> avg = g.AvgBusbw();
    t.notes.push_back(absl::StrCat("Avg bus bandwidth: ", avg ? Gbps(avg) : "-",
                                   " GB/s (the mean of every busbw above, out of place and in "
                                   "place, as nccl-tests' summary line)."));
    if (std::optional<ReferenceRate> ref = MemoryReference(p, g.impl)) {
      // The largest size that gave an out-of-place busbw.
      const CollectiveRow* largest = nullptr;
      for (const CollectiveRow& r : g.rows)
        if (r.out_busbw && (largest == nullptr || r.name->bytes > largest->name->bytes))
          largest = &r;
      if (largest != nullptr)
        t.notes.push_back(absl::StrFormat(
            "busbw at %d B: %.2f GB/s, %.1f%% of %s (%.2f GB/s), measured in the same run.",
            largest->name->bytes, *largest->out_busbw / 1e9,
            100 * *largest->out_busbw / ref->bytes_per_second, ref->name,
            ref->bytes_per_second / 1e9));
    }
    section.tables.push_back(std::move(t));
  }
  // Once for the section, under its first table: what the columns mean.
  std::vector<std::string>& notes = section.tables.front().notes;
  notes.push_back(
      "algbw = size / time; busbw = algbw x the collective's factor of nccl-tests' "
      "doc/PERFORMANCE.md (all-reduce 2(n-1)/n, all-gather, reduce-scatter, all-to-all, "
      "gather and scatter (n-1)/n, broadcast and reduce 1). Size: the buffer (all-gather "
      "and gather: the gathered one; reduce-scatter and scatter: the scattered one; "
      "all-to-all: a rank's send buffer). These hold for every table of this section.");
  std::set<std::string> explained;
  for (const CollectiveGroup& g : groups) {
    const std::string note = NoInPlaceNote(g.family);
    if (!note.empty() && explained.insert(note).second)
      notes.push_back(absl::StrCat("In place ('-'): ", note, "."));
  }
  return section;
}

std::vector<Table> CollectiveSpreadTables(const PlatformResults& p) {
  std::vector<Table> tables;
  for (const CollectiveGroup& g : CollectiveGroups(p)) {
    Table t;
    t.title = absl::StrCat("Spread: ", g.Title());
    t.header = {"size (B)", "redop", "out-of-place time"};
    for (const CollectiveRow& r : g.rows)
      t.rows.push_back({absl::StrCat(r.name->bytes), r.name->op, SpreadCell(r.m, "seconds")});
    tables.push_back(std::move(t));
  }
  return tables;
}

std::string NcclTestsTypeName(const std::string& dtype) {
  static const std::map<std::string, std::string> kNames = {
      {"fp32", "float"},  {"fp16", "half"},   {"bf16", "bfloat16"},
      {"fp64", "double"}, {"int32", "int32"}, {"int64", "int64"}};
  auto it = kNames.find(dtype);
  return it == kNames.end() ? dtype : it->second;
}

std::string NcclTestsNumber(double value, int width) {
  char text[64];
  for (int decimals : {2, 1, 0}) {
    const int n = std::snprintf(text, sizeof(text), "%*.*f", width, decimals, value);
    if (n <= width) return text;
  }
  std::snprintf(text, sizeof(text), "%*.*e", width, width >= 7 ? 1 : 0, value);
  return text;
}

namespace {

// nccl-tests' -d all order of the types the collectives reduce.
int TypeOrder(const std::string& dtype) {
  static const std::vector<std::string> kOrder = {"int32", "int64", "fp16", "fp32", "fp64", "bf16"};
  auto it = std::find(kOrder.begin(), kOrder.end(), dtype);
  return static_cast<int>(it - kOrder.begin());
}

// One side of a row: time, algbw, busbw, #wrong.
std::string Body(const std::optional<double>& us, const std::optional<double>& algbw,
                 const std::optional<double>& busbw, const std::optional<int64_t>& wrong) {
  auto number = [](const std::optional<double>& v, int width) {
    return v ? NcclTestsNumber(*v, width) : absl::StrFormat("%*s", width, "N/A");
  };
  return absl::StrFormat("  %7s  %6s  %6s  %6s", number(us, 7),
                         number(algbw ? std::optional<double>(*algbw / 1e9) : std::nullopt, 6),
                         number(busbw ? std::optional<double>(*busbw / 1e9) : std::nullopt, 6),
                         wrong ? absl::StrCat(*wrong) : "N/A");
}

}  // namespace

std::string RenderNcclTests(const Results& results) {
  std::string out;
  for (const PlatformResults& p : results.platforms) {
    // (family order, impl, ranks) -> the groups of its types.
    std::map<std::tuple<int, std::string, int>, std::vector<CollectiveGroup>> tables;
    for (CollectiveGroup& g : CollectiveGroups(p)) {
      const bench::CaseFamily* f = bench::FindCaseFamily(g.family);
      tables[{f != nullptr ? static_cast<int>(f->id) : 0, g.impl, g.ranks}].push_back(std::move(g));
    }
    for (auto& [key, groups] : tables) {
      std::sort(groups.begin(), groups.end(),
                [](const CollectiveGroup& a, const CollectiveGroup& b) {
                  return TypeOrder(a.dtype) < TypeOrder(b.dtype);
                });
      const CollectiveGroup& first = groups.front();
      absl::StrAppend(&out, "# cnnbench ", first.family, " on ", p.name, ": ", first.impl, ", ",
                      first.ranks, " rank", first.ranks == 1 ? "" : "s", "\n");
      absl::StrAppend(&out, "#\n");
      absl::StrAppend(&out,
                      absl::StrFormat("# %10s  %12s  %8s  %6s  %6s           out-of-place          "
                                      "             in-place          \n",
                                      "", "", "", "", ""));
      absl::StrAppend(
          &out,
          absl::StrFormat("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n",
                          "size", "count", "type", "redop", "root", "time", "algbw", "busbw",
                          "#wrong", "time", "algbw", "busbw", "#wrong"));
      absl::StrAppend(
          &out,
          absl::StrFormat("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n",
                          "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)",
                          "(GB/s)", "(GB/s)", ""));
      int64_t wrong = 0;
      double busbw_sum = 0;
      int busbw_count = 0;
      for (const CollectiveGroup& g : groups)
        for (const CollectiveRow& r : g.rows) {
          const CaseName& c = *r.name;
          const std::string type = NcclTestsTypeName(c.dtype);
          if (!r.m->ok()) {
            // Not a row: scripts that read the rows skip '#' lines.
            absl::StrAppend(&out, "# ", c.bytes, " ", type, " ", c.op, ": ",
                            FailureNote(r.m->FirstError()), "\n");
            wrong += r.out_wrong.value_or(0) + r.in_wrong.value_or(0);
            continue;
          }
          absl::StrAppend(
              &out,
              absl::StrFormat("%12d  %12d  %8s  %6s  %6d", c.bytes, r.count, type, c.op, r.root),
              Body(r.out_us, r.out_algbw, r.out_busbw, r.out_wrong),
              Body(r.in_us, r.in_algbw, r.in_busbw, r.in_wrong), "\n");
          for (const auto& v : {r.out_busbw, r.in_busbw})
            if (v) busbw_sum += *v / 1e9, ++busbw_count;
        }
      // Scripts skip '#' lines: the reason stays beside the N/A it explains.
      if (const std::string note = NoInPlaceNote(first.family); !note.empty())
        absl::StrAppend(&out, "# in place: ", note, "\n");
      absl::StrAppend(&out, absl::StrFormat("# %-20s : %d %s\n", "Out of bounds values", wrong,
                                            wrong == 0 ? "OK" : "FAILED"));
      absl::StrAppend(&out, absl::StrFormat("# %-20s : %g \n", "Avg bus bandwidth",
                                            busbw_count ? busbw_sum / busbw_count : 0.0));
      absl::StrAppend(&out, "#\n");
      absl::StrAppend(&out, "# Collective test concluded: ", first.family, "\n\n");
    }
  }
  return out;
}

}  // namespace cnnbench::report
