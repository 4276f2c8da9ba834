#include "tools/report/peak_tables.h"

#include <algorithm>
#include <limits>
#include <set>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/report/format_number.h"
#include "tools/report/messages.h"
#include "tools/report/model_names.h"
#include "tools/report/spread.h"
#include "tools/report/train_query.h"
#include "tools/report/train_tables.h"

namespace cnnbench::report {
namespace {

bool HasValue(const Measurement& m) { return m.ok() && m.Mean("flops").has_value(); }

// The peak table's layout: thread-count rows, precision columns (table order).
struct PeakLayout {
  std::set<int> threads;
  std::vector<std::string> precisions;
};

PeakLayout PeakLayoutOf(const PlatformResults& p) {
  PeakLayout layout;
  for (const auto& [c, m] : p.peak) {
    if (c.device != "cpu") continue;  // the GPU's: GpuPeakTable
    layout.threads.insert(c.threads);
    AddDistinct(c.precision, layout.precisions);
  }
  std::sort(layout.precisions.begin(), layout.precisions.end(),
            [](const std::string& a, const std::string& b) {
              return std::make_pair(PrecisionRank(a), a) < std::make_pair(PrecisionRank(b), b);
            });
  return layout;
}

const Measurement* FindPeak(const PlatformResults& p, const std::string& precision, int threads) {
  auto it = p.peak.find(CaseName::Peak(precision, threads));
  return it == p.peak.end() ? nullptr : &it->second;
}

std::string ThreadsLabel(int threads) {
  return absl::StrCat(threads, threads == 1 ? " thread" : " threads");
}

// The CPU train cases in table order: model, precision, data, batch, placement.
std::vector<const std::pair<const CaseName, Measurement>*> CpuTrainCases(const PlatformResults& p) {
  std::vector<const std::pair<const CaseName, Measurement>*> cases;
  for (const auto& entry : p.train)
    if (entry.first.gpus == 0) cases.push_back(&entry);
  std::stable_sort(cases.begin(), cases.end(), [](const auto* a, const auto* b) {
    const CaseName &x = a->first, &y = b->first;
    if (x.model != y.model) return ModelBefore(x.model, y.model);
    return std::make_tuple(PrecisionRank(x.precision), x.precision, x.data != "synthetic", x.batch,
                           Placement::Of(x)) < std::make_tuple(PrecisionRank(y.precision),
                                                               y.precision, y.data != "synthetic",
                                                               y.batch, Placement::Of(y));
  });
  return cases;
}

std::set<std::string> Dates(const Measurement& m) {
  return std::set<std::string>(m.dates.begin(), m.dates.end());
}

}  // namespace

const std::pair<const CaseName, Measurement>* ReferencePeak(const PlatformResults& p,
                                                            const std::string& precision) {
  const std::pair<const CaseName, Measurement>* best = nullptr;
  for (const auto& entry : p.peak) {
    if (entry.first.precision != precision || entry.first.device != "cpu") continue;
    if (best == nullptr || std::make_pair(HasValue(entry.second), entry.first.threads) >
                               std::make_pair(HasValue(best->second), best->first.threads))
      best = &entry;
  }
  return best;
}

std::optional<Table> PeakTable(const PlatformResults& p, double max_cv) {
  const PeakLayout layout = PeakLayoutOf(p);
  if (layout.threads.empty()) return std::nullopt;
  double max_flops = 0;
  for (const auto& [c, m] : p.peak)
    if (c.device == "cpu") max_flops = std::max(max_flops, m.Mean("flops").value_or(0));
  // As the kernel tables: GFLOP/s where nothing reaches one TFLOP/s.
  const bool giga = max_flops < 1e12;
  Table t;
  t.title = absl::StrCat("peak on cpu, ", giga ? "GFLOP/s" : "TFLOP/s");
  t.header = {"Threads"};
  t.header.insert(t.header.end(), layout.precisions.begin(), layout.precisions.end());
  Footnotes notes;
  for (int threads : layout.threads) {
    std::vector<std::string> row = {absl::StrCat(threads)};
    for (const std::string& precision : layout.precisions) {
      const Measurement* m = FindPeak(p, precision, threads);
      const std::string where = absl::StrCat(precision, ", ", ThreadsLabel(threads));
      if (m == nullptr) {
        row.push_back(absl::StrCat("N/A", notes.Mark("not run", where)));
      } else if (!m->ok()) {
        row.push_back(absl::StrCat("N/A", notes.Mark(FailureNote(m->FirstError()), where)));
      } else {
        row.push_back(ValueCell(*m, "flops", giga ? 1e9 : 1e12, max_cv, notes, where));
      }
    }
    t.rows.push_back(std::move(row));
  }
  t.notes = notes.Notes();
  t.notes.push_back(
      "The CPU's arithmetic peak: every thread of the team runs a register-only loop of "
      "independent fused multiply-adds on the widest vector path the CPU has (fp32: 2 FLOPs per "
      "lane; bf16: VDPBF16PS, 2 FLOPs per multiplied pair). The ceiling the training steps are "
      "read against.");
  return t;
}

std::optional<Table> PeakSpreadTable(const PlatformResults& p) {
  const PeakLayout layout = PeakLayoutOf(p);
  if (layout.threads.empty()) return std::nullopt;
  Table t;
  t.title = "Spread: peak on cpu";
  t.header = {"Threads"};
  t.header.insert(t.header.end(), layout.precisions.begin(), layout.precisions.end());
  for (int threads : layout.threads) {
    std::vector<std::string> row = {absl::StrCat(threads)};
    for (const std::string& precision : layout.precisions)
      row.push_back(SpreadCell(FindPeak(p, precision, threads), "flops"));
    t.rows.push_back(std::move(row));
  }
  return t;
}

namespace {

// The cells of a step read against the CPU's peak of its precision: the
// peak and the step's share of it (or why there is none), and whether the
// step was read against one and, then, whether both come from one run.
struct PeakCells {
  bool compared = false;
  bool same_dates = false;
};
PeakCells AppendPeakCells(const PlatformResults& p, const CaseName& c, const Measurement& m,
                          std::optional<double> step, const std::string& where, Footnotes& notes,
                          std::vector<std::string>& row) {
  const auto* peak = ReferencePeak(p, c.precision);
  if (peak == nullptr) {
    const bool has_loop = c.precision == "fp32" || c.precision == "bf16";
    row.push_back(absl::StrCat(
        "none",
        notes.Mark(has_loop
                       ? absl::StrCat("no peak/", c.precision, "/cpu case on this platform")
                       : absl::StrCat("the peak family has no ", c.precision, " loop (fp32, bf16)"),
                   where)));
    row.push_back("-");
    return {};
  }
  if (!HasValue(peak->second)) {
    row.push_back(absl::StrCat(
        "none", notes.Mark(absl::StrCat(peak->first.ToString(), ": ",
                                        peak->second.ok() ? "no flops value"
                                                          : FailureNote(peak->second.FirstError())),
                           where)));
    row.push_back("-");
    return {};
  }
  const double peak_flops = *peak->second.Mean("flops");
  row.push_back(FormatThroughput(peak_flops / 1e9));
  row.push_back(step && peak_flops > 0 ? FormatPercent(*step / peak_flops) : "-");
  return {true, !m.dates.empty() && Dates(m) == Dates(peak->second)};
}

}  // namespace

std::optional<Table> TrainVsPeakTable(const PlatformResults& p, double max_cv) {
  // Named in the title: the fp32 peak, or the bf16 one of a bf16-only run.
  const auto* named = ReferencePeak(p, "fp32");
  if (named == nullptr) named = ReferencePeak(p, "bf16");
  const auto cases = CpuTrainCases(p);
  if (named == nullptr || cases.empty()) return std::nullopt;

  // "same run" where every step and the peak it is read against came from
  // the same run (the same dates); else the platform's files mixed runs.
  int compared = 0;
  bool dates_agree = true;
  Table t;
  t.header = {"Model",      "Precision",    "Data",         "Batch",
              "Images/sec", "Step GFLOP/s", "Peak GFLOP/s", "% of peak"};
  Footnotes notes;
  for (const auto* entry : cases) {
    const auto& [c, m] = *entry;
    const Placement at = Placement::Of(c);
    const std::string where =
        absl::StrCat(CellPlace(c.model, at), ", ", c.precision, ", ", c.data, ", batch ", c.batch);
    std::vector<std::string> row = {ModelDisplayName(c.model), c.precision, c.data,
                                    at.replicas > 1
                                        ? absl::StrCat(c.batch, " x ", at.replicas, " replicas")
                                        : absl::StrCat(c.batch),
                                    ThroughputCell(&m, notes, where, max_cv)};
    if (!m.ok()) {
      row.insert(row.end(), {"-", "-", "-"});
      t.rows.push_back(std::move(row));
      continue;
    }
    std::optional<double> step = m.Mean("flops");
    if (!step && m.NotFiniteText("flops").empty()) {
      row.push_back(absl::StrCat(
          "-", notes.Mark("no flops counter (a run from before the suite counted a step's FLOPs)",
                          where)));
    } else {
      // No noise mark: the rate's spread is the images/sec cell's, marked there.
      row.push_back(
          ValueCell(m, "flops", 1e9, std::numeric_limits<double>::infinity(), notes, where));
    }
    const PeakCells read = AppendPeakCells(p, c, m, step, where, notes, row);
    compared += read.compared;
    dates_agree = dates_agree && (!read.compared || read.same_dates);
    t.rows.push_back(std::move(row));
  }
  const bool same_run = compared > 0 && dates_agree;
  t.title = absl::StrCat("Training step vs the CPU's peak (", named->first.ToString(),
                         same_run ? ", same run" : ", same platform", ")");
  t.notes = notes.Notes();
  t.notes.push_back(
      "Step GFLOP/s: 3 x the model's forward FLOPs per image (conv and fc multiply-adds; "
      "forward, backward-data and backward-weights) x images/sec. % of peak: step GFLOP/s / "
      "the peak of the step's precision on the CPU (peak/fp32/cpu for fp32 steps, peak/bf16/cpu "
      "for bf16 ones; the case with the most threads). The FLOPs are direct convolution's: "
      "a step whose convolutions run Winograd (cpu_conv_algorithm timed or winograd; the "
      "case's label counts its Winograd passes) does fewer multiplications for the same result "
      "and can exceed 100%.");
  if (compared > 0 && !dates_agree)
    t.notes.push_back(
        "The peak and some steps come from different runs of this platform (their dates "
        "differ): read the fraction with care.");
  return t;
}

const std::pair<const CaseName, Measurement>* GpuReferencePeak(const PlatformResults& p,
                                                               const std::string& precision) {
  for (const auto& entry : p.peak)
    if (entry.first.device != "cpu" && entry.first.precision == precision) return &entry;
  return nullptr;
}

std::optional<Table> GpuPeakTable(const PlatformResults& p, double max_cv) {
  std::vector<const std::pair<const CaseName, Measurement>*> gpu;
  for (const auto& entry : p.peak)
    if (entry.first.device != "cpu") gpu.push_back(&entry);
  if (gpu.empty()) return std::nullopt;
  std::stable_sort(gpu.begin(), gpu.end(), [](const auto* a, const auto* b) {
    return std::make_tuple(a->first.device, PrecisionRank(a->first.precision)) <
           std::make_tuple(b->first.device, PrecisionRank(b->first.precision));
  });
  Table t;
  t.title = "peak on the GPU, TFLOP/s";
  t.header = {"Device", "Precision", "Measured by", "TFLOP/s"};
  Footnotes notes;
  for (const auto* entry : gpu) {
    const auto& [c, m] = *entry;
    const std::string where = absl::StrCat(c.precision, " on ", c.device);
    std::vector<std::string> row = {
        c.device, c.precision, c.shape == "fma" ? "fma loop" : absl::StrCat("cuBLASLt ", c.shape)};
    if (m.oom()) {
      row.push_back("OOM");
    } else if (!m.ok()) {
      row.push_back(absl::StrCat("N/A", notes.Mark(FailureNote(m.FirstError()), where)));
    } else {
      row.push_back(ValueCell(m, "flops", 1e12, max_cv, notes, where));
    }
    t.rows.push_back(std::move(row));
  }
  t.notes = notes.Notes();
  t.notes.push_back(
      "The GPU's arithmetic ceilings: fp32 a register-only loop of independent fused "
      "multiply-adds on a full wave of threads (2 FLOPs each); tf32, fp16, bf16 and fp8 the "
      "tensor cores' dense rate, a square cuBLASLt matmul (2 n^3 FLOPs), the fastest of the "
      "heuristic's candidates.");
  return t;
}

std::optional<Table> GpuTrainVsPeakTable(const PlatformResults& p, double max_cv) {
  std::vector<const std::pair<const CaseName, Measurement>*> cases;
  for (const auto& entry : p.train)
    if (entry.first.gpus > 0) cases.push_back(&entry);
  bool any_peak = false;
  for (const auto& entry : p.peak) any_peak = any_peak || entry.first.device != "cpu";
  if (cases.empty() || !any_peak) return std::nullopt;
  std::stable_sort(cases.begin(), cases.end(), [](const auto* a, const auto* b) {
    const CaseName &x = a->first, &y = b->first;
    if (x.model != y.model) return ModelBefore(x.model, y.model);
    return std::make_tuple(PrecisionRank(x.precision), x.data != "synthetic", x.batch, x.gpus) <
           std::make_tuple(PrecisionRank(y.precision), y.data != "synthetic", y.batch, y.gpus);
  });
  Table t;
  t.title = "Training step vs the GPU's peak (model FLOP utilisation)";
  t.header = {"Model",    "Precision",  "Data",         "Batch/GPU",
              "GPUs",     "Images/sec", "Step TFLOP/s", "Peak TFLOP/s (x GPUs)",
              "% of peak"};
  Footnotes notes;
  for (const auto* entry : cases) {
    const auto& [c, m] = *entry;
    const std::string where =
        absl::StrCat(ModelDisplayName(c.model), ", ", c.precision, ", ", c.gpus, " GPU(s)");
    std::vector<std::string> row = {
        ModelDisplayName(c.model), c.precision,          c.data,
        absl::StrCat(c.batch),     absl::StrCat(c.gpus), ThroughputCell(&m, notes, where, max_cv)};
    const std::optional<double> step = m.ok() ? m.Mean("flops") : std::nullopt;
    row.push_back(step ? FormatThroughput(*step / 1e12) : "-");
    const auto* peak = GpuReferencePeak(p, c.precision);
    if (peak == nullptr || !HasValue(peak->second)) {
      row.push_back(absl::StrCat(
          "none", notes.Mark(peak == nullptr
                                 ? absl::StrCat("no peak/", c.precision, "/cuda case in this run")
                                 : absl::StrCat(peak->first.ToString(), ": ",
                                                FailureNote(peak->second.FirstError())),
                             where)));
      row.push_back("-");
    } else {
      const double total = *peak->second.Mean("flops") * c.gpus;
      row.push_back(FormatThroughput(total / 1e12));
      row.push_back(step && total > 0 ? FormatPercent(*step / total) : "-");
    }
    t.rows.push_back(std::move(row));
  }
  t.notes = notes.Notes();
  t.notes.push_back(
      "Step TFLOP/s: 3 x the model's forward FLOPs per image x images/sec, all GPUs together. "
      "% of peak: that over the GPUs' peak of the step's precision measured in this platform's "
      "run (peak/<precision>/cuda: fp32's FMA loop, the tensor-core GEMM for the others), times "
      "the GPU count: the model FLOP utilisation people quote.");
  return t;
}

}  // namespace cnnbench::report
