// The dashboard's test data (dashboard_fixture.h): made, not measured, from
// a fixed seed, so every page it writes is the same each time.
#include "tests/tools/history/dashboard_fixture.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cnnbench::history::fixture {
namespace {

constexpr int kRuns = 60;
constexpr int kWindow = 20;

// A small deterministic generator of noise in [-1, 1].
class Noise {
 public:
  explicit Noise(uint64_t seed) : state_(seed * 6364136223846793005ULL + 1442695040888963407ULL) {}
  double Next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state_ >> 11) / static_cast<double>(1ULL << 53) * 2 - 1;
  }

 private:
  uint64_t state_;
};

// Run i's date: one run a day from 2026-10-01.
std::string RunDate(int i) {
  int month = 10, day = 1 + i;
  for (int days : {31, 30, 31}) {
    if (day <= days) break;
    day -= days;
    ++month;
  }
  return absl::StrFormat("2026-%02d-%02dT02:00:00+00:00", month, day);
}

std::string RunCommit(int i) {
  std::string commit = absl::StrFormat("%07x", (static_cast<uint32_t>(i + 1) * 2654435761u) >> 4);
  return i == 52 ? commit + "+dirty" : commit;
}

// The rolling band over the previous kWindow good runs' best repetitions:
// their mean +- 5 standard deviations; NaN before 5 runs.
void AddBand(std::vector<DashPoint>& points) {
  for (size_t i = 0; i < points.size(); ++i) {
    std::vector<double> window;
    for (size_t k = i; k-- > 0 && window.size() < kWindow;) {
      if (points[k].status == "ok") window.push_back(points[k].best);
    }
    DashPoint& p = points[i];
    if (window.size() < 5) {
      p.band_center = p.band_low = p.band_high = NAN;
      continue;
    }
    double mean = 0, squares = 0;
    for (double v : window) mean += v / window.size();
    for (double v : window) squares += (v - mean) * (v - mean);
    const double sd = std::sqrt(squares / (window.size() - 1));
    p.band_center = mean;
    p.band_low = mean - 5 * sd;
    p.band_high = mean + 5 * sd;
  }
}

struct SeriesSpec {
  int64_t id = 0;
  int64_t machine = 0;
  std::string case_name, family, model, precision;
  double level = 100;                                           // images/s before any change
  std::function<double(int)> factor = [](int) { return 1.0; };  // the level's change at run i
  std::function<std::string(int)> status = [](int) { return std::string("ok"); };
};

DashSeries MakeSeries(const SeriesSpec& spec) {
  DashSeries s;
  s.id = spec.id;
  s.machine_id = spec.machine;
  s.case_name = spec.case_name;
  s.family = spec.family;
  s.model = spec.model;
  s.precision = spec.precision;
  const bool kernel = spec.family != "train";
  s.counter = kernel ? "gflops" : "images_per_second";
  s.unit = kernel ? "GFLOP/s" : "images/s";
  s.settings = "steps=20, warmup=5, batch=32, repetitions=5, threads=80";
  Noise noise(static_cast<uint64_t>(spec.id));
  const int64_t first_run = spec.machine == 1 ? 1 : 101;
  for (int i = 0; i < kRuns; ++i) {
    DashPoint p{.run_id = first_run + i, .date = RunDate(i), .commit = RunCommit(i)};
    p.repetitions = 5;
    p.status = spec.status(i);
    const double level = spec.level * spec.factor(i) * (1 + 0.006 * noise.Next());
    if (p.status != "ok") {
      p.value = p.best = p.min = p.max = NAN;
      p.repetitions = 0;
    } else {
      p.value = level;
      p.min = level * (1 - 0.008 - 0.004 * std::fabs(noise.Next()));
      p.max = level * (1 + 0.004 + 0.004 * std::fabs(noise.Next()));
      p.best = p.max;
    }
    s.points.push_back(p);
  }
  AddBand(s.points);
  std::vector<double> first;
  for (int i = 0; i < kWindow; ++i) first.push_back(s.points[i].value);
  std::sort(first.begin(), first.end());
  s.baseline = (first[kWindow / 2 - 1] + first[kWindow / 2]) / 2;
  return s;
}

DashChange ChangeAt(const DashSeries& s, int64_t id, int after, double ratio) {
  const DashPoint &a = s.points[after - 1], &b = s.points[after];
  DashChange c;
  c.id = id;
  c.series_id = s.id;
  c.before_run = a.run_id;
  c.after_run = b.run_id;
  c.before_date = a.date;
  c.after_date = b.date;
  c.before_commit = a.commit;
  c.after_commit = b.commit;
  c.ratio = ratio;
  c.low = ratio - 0.012;
  c.high = ratio + 0.012;
  c.regression = ratio < 1;
  c.method = "z-score (window 100, |z| > 5) + step";
  return c;
}

std::vector<DashMachine> Machines() {
  return {
      DashMachine{.id = 1,
                  .platform = "cpu-box (Xeon Platinum 8380, 2 x 40 cores)",
                  .identity = {{"cpu_model", "Intel(R) Xeon(R) Platinum 8380 CPU @ 2.30GHz"},
                               {"num_cpus", "160"},
                               {"memory_gb", "512"}},
                  .runs = kRuns,
                  .last_date = RunDate(kRuns - 1)},
      DashMachine{.id = 2,
                  .platform = absl::StrCat("gpu-box ", kHostileSql),
                  .identity = {{"gpu_model", "NVIDIA A100-SXM4-80GB"},
                               {"gpu_count", "8"},
                               {"rack", kHostileTag}},
                  .runs = kRuns,
                  .last_date = RunDate(kRuns - 1)},
  };
}

// cpu-box: resnet50 fp32 regresses 10% with oneDNN 3.2 and fails once
// (OOM); vgg16 fp32 improved, annotated; one kernel case.
void CpuBox(std::vector<DashSeries>& out) {
  int64_t id = 1;
  for (const char* model : {"resnet50", "vgg16", "inception3"}) {
    for (const char* precision : {"fp32", "bf16"}) {
      const double level = (std::string(model) == "vgg16" ? 38 : 95) *
                           (std::string(precision) == "bf16" ? 2.1 : 1.0);
      out.push_back(MakeSeries(
          {.id = id,
           .machine = 1,
           .case_name = absl::StrCat("train/", model, "/", precision, "/synthetic/batch:32/gpus:0"),
           .family = "train",
           .model = model,
           .precision = precision,
           .level = level}));
      ++id;
    }
  }
  DashSeries& regressed = out[0];  // resnet50 fp32, kRegressedSeries
  regressed =
      MakeSeries({.id = kRegressedSeries,
                  .machine = 1,
                  .case_name = regressed.case_name,
                  .family = "train",
                  .model = "resnet50",
                  .precision = "fp32",
                  .level = 95,
                  .factor = [](int i) { return i >= kRegressionAt ? 0.9 : 1.0; },
                  .status = [](int i) { return std::string(i == kFailedAt ? "OOM" : "ok"); }});
  DashChange change = ChangeAt(regressed, 1, kRegressionAt, 0.9);
  change.cause = "oneDNN 2.6.3 -> 3.2 between these runs";
  change.environment_diff = {{"onednn_version", "2.6.3 -> 3.2"}};
  regressed.changes.push_back(change);
  regressed.annotations.push_back({.run_id = regressed.points[20].run_id,
                                   .date = regressed.points[20].date,
                                   .text = "moved to rack B; no change expected"});

  DashSeries& improved = out[2];  // vgg16 fp32
  improved = MakeSeries({.id = 3,
                         .machine = 1,
                         .case_name = improved.case_name,
                         .family = "train",
                         .model = "vgg16",
                         .precision = "fp32",
                         .level = 38,
                         .factor = [](int i) { return i >= 30 ? 1.15 : 1.0; }});
  DashChange better = ChangeAt(improved, 2, 30, 1.15);
  better.open = false;
  better.cause = "the code changed between these runs";
  improved.changes.push_back(better);
  improved.annotations.push_back({.run_id = improved.points[30].run_id,
                                  .date = improved.points[30].date,
                                  .text = "the fused conv + bias + relu kernels landed"});

  out.push_back(MakeSeries({.id = 7,
                            .machine = 1,
                            .case_name = "conv/mb32_ic64oc64_ih56oh56kh3sh1ph1/fp32",
                            .family = "conv",
                            .model = "",
                            .precision = "fp32",
                            .level = 2100}));
}

// gpu-box (a hostile platform): vgg16 fp16's last run failed; inception3
// fp16 improved with a hostile environment value; a hostile case name.
void GpuBox(std::vector<DashSeries>& out) {
  int64_t id = 8;
  for (const char* model : {"resnet50", "vgg16", "inception3"}) {
    for (const char* precision : {"fp32", "fp16"}) {
      const std::string m = model, p = precision;
      SeriesSpec spec{.id = id,
                      .machine = 2,
                      .case_name = absl::StrCat("train/", m, "/", p, "/synthetic/batch:64/gpus:1"),
                      .family = "train",
                      .model = m,
                      .precision = p,
                      .level = (m == "vgg16" ? 420 : 1250) * (p == "fp16" ? 2.6 : 1.0)};
      if (m == "vgg16" && p == "fp16") {
        spec.status = [](int i) {
          return std::string(i == kRuns - 1 ? "error: cudnn: CUDNN_STATUS_EXECUTION_FAILED" : "ok");
        };
      }
      if (m == "inception3" && p == "fp16") {
        spec.factor = [](int i) { return i >= 35 ? 1.12 : 1.0; };
      }
      out.push_back(MakeSeries(spec));
      ++id;
    }
  }
  DashSeries& improved = out.back();  // inception3 fp16
  DashChange change = ChangeAt(improved, 3, 35, 1.12);
  change.cause = absl::StrCat("cuda_driver 535.104 -> 550.54, nccl_version 2.18 -> ", kHostileTag);
  change.environment_diff = {{"cuda_driver", "535.104 -> 550.54"},
                             {"nccl_version", absl::StrCat("2.18 -> ", kHostileTag)}};
  improved.changes.push_back(change);

  DashSeries hostile =
      MakeSeries({.id = 14,
                  .machine = 2,
                  .case_name = absl::StrCat("train/", kHostileSql, "/fp32/", kHostileTag),
                  .family = "train",
                  .model = kHostileSql,
                  .precision = "fp32",
                  .level = 500});
  hostile.settings = absl::StrCat("data_dir=", kHostileTag, ", batch=", kHostileSql);
  // U+2028 ends a line in older JavaScript: the data file must escape it.
  hostile.annotations.push_back({.run_id = hostile.points[10].run_id,
                                 .date = hostile.points[10].date,
                                 .text = absl::StrCat(kHostileTag, "\xE2\x80\xA8", kHostileSql)});
  out.push_back(hostile);
}

}  // namespace

DashboardData DashboardFixture() {
  DashboardData data;
  data.store = "results/cnnbench.db";
  data.generated = "2026-12-04T10:00:00+00:00";
  data.machines = Machines();
  CpuBox(data.series);
  GpuBox(data.series);
  return data;
}

}  // namespace cnnbench::history::fixture
