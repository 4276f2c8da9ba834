#include "tools/report/compare.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tools/report/format_number.h"
#include "tools/report/records.h"
#include "tools/report/significance.h"
#include "tools/report/train_tables.h"

namespace cnnbench::report {
namespace {

std::string ValueText(const std::optional<double>& v) {
  return v ? FormatThroughput(*v) : "failed or not run";
}

// "steps 100 vs 5, image_size 224 vs 112": the settings both sides recorded
// with different values.
std::string SettingDifferences(const PlatformResults& now, const PlatformResults& base) {
  std::string out;
  for (const auto& [key, value] : now.settings) {
    for (const auto& [base_key, base_value] : base.settings) {
      if (key == base_key && value != base_value) {
        absl::StrAppend(&out, out.empty() ? "" : ", ", key, " ", value, " vs ", base_value);
      }
    }
  }
  return out;
}

const PlatformResults* BaseFor(const PlatformResults& p, const Results& current,
                               const Results& base) {
  if (const PlatformResults* same = base.Find(p.name)) return same;
  for (const PlatformResults& b : base.platforms) {
    if (b.platform == p.platform && SettingDifferences(p, b).empty()) return &b;
  }
  if (current.platforms.size() == 1 && base.platforms.size() == 1) return &base.platforms[0];
  return nullptr;
}

// Every (platform, key) record of `results` by key.
std::map<std::pair<std::string, std::string>, Record> RecordsByKey(const Results& results) {
  std::map<std::pair<std::string, std::string>, Record> out;
  for (Record& r : MakeRecords(results))
    out.emplace(std::make_pair(r.platform, r.key), std::move(r));
  return out;
}

}  // namespace

std::string Regression::Describe() const {
  if (!current) {
    return absl::StrCat(platform, " ", key, ": ", ValueText(base), " ", unit,
                        " in base, failed or not run now");
  }
  std::string text = absl::StrCat(platform, " ", key, ": ", ValueText(base), " -> ",
                                  ValueText(current), " ", unit);
  if (base && *base > 0) absl::StrAppend(&text, " (", FormatRatio(*current / *base), ")");
  if (!test.empty()) absl::StrAppend(&text, "; ", test);
  return text;
}

namespace {

using RecordMap = std::map<std::pair<std::string, std::string>, Record>;

// A platform the base files do not hold: a table that says so, and a warning.
void NoBase(const PlatformResults& p, const Results& base, Comparison& out) {
  Section section{"Comparison with base", {}, {}};
  Table missing;
  missing.title = "No base";
  missing.header = {"Platform", "Base platforms"};
  std::string names;
  for (const PlatformResults& q : base.platforms)
    absl::StrAppend(&names, names.empty() ? "" : ", ", q.name);
  missing.rows = {{p.name, names}};
  missing.notes = {"The base files hold no platform of this name; nothing compared."};
  section.tables.push_back(std::move(missing));
  out.sections.push_back(std::move(section));
  out.warnings.push_back(absl::StrCat("platform '", p.name,
                                      "' not compared: the base has no platform of that "
                                      "name (base: ",
                                      names, ")"));
}

// Regressions over every kind of case, by canonical name: the cases of `p`
// below `threshold` of base platform `b`'s, or gone; the table of them, and
// the counts and warnings in `out`.
Table RegressionTable(const PlatformResults& p, const PlatformResults& b,
                      const RecordMap& base_records, double threshold, Comparison& out) {
  std::vector<Regression> found, noise;
  Results one;
  one.platforms.push_back(p);
  int common = 0;
  for (const Record& r : MakeRecords(one)) {
    auto it = base_records.find({b.name, r.key});
    if (it == base_records.end()) continue;
    ++common;
    if (!it->second.value) continue;
    const double base_value = *it->second.value;
    if (!r.value) {
      found.push_back(Regression{p.name, r.key, r.unit, base_value, r.value, ""});
      continue;
    }
    if (!(base_value > 0 && *r.value / base_value < 1 - threshold)) continue;
    const Verdict verdict = Distinguish(it->second.samples, r.samples);
    Regression regression{p.name, r.key, r.unit, base_value, r.value, verdict.text};
    if (verdict.test == Verdict::Test::kNone || verdict.distinguishable) {
      found.push_back(std::move(regression));
    } else {
      noise.push_back(std::move(regression));
    }
  }
  Table summary;
  summary.title = absl::StrCat("Regressions (ratio below ", FormatRatio(1 - threshold),
                               ", told from noise by the repetitions)");
  summary.header = {"Case", "Unit", "Base", "This run", "Ratio", "Test"};
  auto row = [](const Regression& r) {
    return std::vector<std::string>{
        r.key, r.unit, ValueText(r.base), ValueText(r.current),
        r.current && *r.base > 0 ? FormatRatio(*r.current / *r.base) : "-",
        r.test.empty() ? "-" : r.test};
  };
  for (const Regression& r : found) summary.rows.push_back(row(r));
  for (const Regression& r : noise)
    summary.notes.push_back(absl::StrCat("Below the threshold but within noise (not a "
                                         "regression): ",
                                         r.key, " ", FormatRatio(*r.current / *r.base), ", ",
                                         r.test, "."));
  summary.notes.push_back(absl::StrCat(
      "Test: Mann-Whitney U, p < ", kMannWhitneyAlpha, ", where each side has at least ",
      kMannWhitneyMinRepetitions,
      " repetitions; else the means' 99% intervals must not overlap; with fewer than 2 "
      "repetitions on a side the threshold alone decides (untested)."));
  out.within_noise.insert(out.within_noise.end(), noise.begin(), noise.end());
  out.compared += common;
  if (common == 0) {
    out.warnings.push_back(absl::StrCat("platform '", p.name,
                                        "' not compared: no case in common "
                                        "with base platform '",
                                        b.name, "'"));
  }
  summary.notes.push_back(absl::StrCat("Base: ", b.name, " (", b.files.size(), " file",
                                       b.files.size() == 1 ? "" : "s", ")."));
  if (found.empty()) summary.notes.push_back("No regressions.");
  out.regressions.insert(out.regressions.end(), found.begin(), found.end());
  return summary;
}

// The training results tables of `p` with this run / base ratios for cells.
std::vector<Table> RatioTables(const PlatformResults& p, const PlatformResults& b,
                               double threshold) {
  const std::string limit = FormatRatio(1 - threshold);
  std::vector<Table> tables;
  for (const TrainGroup& group : TrainGroups(p)) {
    Table t = GroupTable(
        group, absl::StrCat("This run / base: ", group.Describe()),
        [&](const CaseName& c, Footnotes& notes, const std::string& where) -> std::string {
          auto now_it = p.train.find(c);
          auto base_it = b.train.find(c);
          if (now_it == p.train.end()) return ThroughputCell(nullptr, notes, where);
          const Measurement& now = now_it->second;
          if (base_it == b.train.end() || !base_it->second.ok()) {
            if (!now.ok()) return ThroughputCell(&now, notes, where);
            return absl::StrCat("new", notes.Mark("no base result", where));
          }
          std::optional<double> now_value = now.Mean("images_per_second");
          std::optional<double> base_value = base_it->second.Mean("images_per_second");
          if (!now_value) return absl::StrCat(ThroughputCell(&now, notes, where), "!");
          if (!base_value || *base_value <= 0) {
            return absl::StrCat("new", notes.Mark("no finite base result", where));
          }
          double ratio = *now_value / *base_value;
          if (ratio >= 1 - threshold) return FormatRatio(ratio);
          // Below the threshold: a regression where the repetitions tell
          // it from noise (or cannot be tested), else within noise.
          auto samples = [](const Measurement& m) {
            auto it = m.values.find("images_per_second");
            return it == m.values.end() ? std::vector<double>() : it->second;
          };
          const Verdict verdict = Distinguish(samples(base_it->second), samples(now));
          const bool regression =
              verdict.test == Verdict::Test::kNone || verdict.distinguishable;
          return absl::StrCat(FormatRatio(ratio), regression ? "!" : "~");
        });
    t.notes.insert(t.notes.begin(),
                   absl::StrCat("Cells: images/sec of this run / base; ! marks a regression "
                                "(below ",
                                limit, ", told from noise by the repetitions), ~ a ratio "
                                "below it that the repetitions cannot tell from noise."));
    tables.push_back(std::move(t));
  }
  return tables;
}

}  // namespace

Comparison Compare(const Results& current, const Results& base, double threshold) {
  Comparison out;
  const RecordMap base_records = RecordsByKey(base);
  for (const PlatformResults& p : current.platforms) {
    const PlatformResults* b = BaseFor(p, current, base);
    if (b == nullptr) {
      NoBase(p, base, out);
      continue;
    }
    if (b->name != p.name) {
      out.warnings.push_back(absl::StrCat("comparing platform '", p.name, "' with base platform '",
                                          b->name, "': a different platform"));
    }
    if (std::string differences = SettingDifferences(p, *b); !differences.empty()) {
      out.warnings.push_back(absl::StrCat("comparing platform '", p.name, "' with base '", b->name,
                                          "' measured with other settings: ", differences));
    }
    Section section{"Comparison with base", {}, {}};
    section.tables.push_back(RegressionTable(p, *b, base_records, threshold, out));
    for (Table& t : RatioTables(p, *b, threshold)) section.tables.push_back(std::move(t));
    out.sections.push_back(std::move(section));
  }
  return out;
}

}  // namespace cnnbench::report
