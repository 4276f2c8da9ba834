// The dashboard's charts as inline SVG, drawn here so the pages show them
// without a script: the overview's sparklines and a series' run chart.
// Styling is by class (dashboard_assets.cc); every text is escaped.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/history/dashboard_parts.h"

namespace cnnbench::history::dashboard {
namespace {

bool Finite(double v) { return std::isfinite(v); }

// A coordinate.
std::string C(double v) { return absl::StrFormat("%.1f", v); }

// Points [from, n) on [left, left + width] and values lo..hi on
// [top + height, top].
struct Frame {
  double left = 0, top = 0, width = 0, height = 0;
  double lo = 0, hi = 1;
  size_t from = 0, n = 0;
  double X(size_t i) const {
    const size_t count = n - from;
    return count <= 1 ? left + width / 2 : left + width * (i - from) / (count - 1);
  }
  double Y(double v) const { return top + height * (hi - v) / (hi - lo); }
  double Bottom() const { return top + height; }
};

// The range of the values, the baseline and (when asked) the repetitions'
// spread, padded by 8% and at least `min_span` of the level wide, so noise
// of a percent does not fill the height. The band is left out: a window
// straddling a step widens it far beyond the data; it is clipped instead.
void FitRange(const DashSeries& s, bool spread, double min_span, Frame& f) {
  std::vector<double> v;
  if (Finite(s.baseline) && s.baseline > 0) v.push_back(s.baseline);
  for (size_t i = f.from; i < f.n; ++i) {
    const DashPoint& p = s.points[i];
    if (FailedRun(p)) continue;
    v.push_back(p.value);
    if (!spread) continue;
    for (double x : {p.min, p.max}) {
      if (Finite(x)) v.push_back(x);
    }
  }
  if (v.empty()) v.push_back(1);
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  const double level = std::max(std::fabs(*lo), std::fabs(*hi));
  const double span = std::max({(*hi - *lo) * 1.16, level * min_span, 1e-9});
  const double middle = (*hi + *lo) / 2;
  f.lo = middle - span / 2;
  f.hi = middle + span / 2;
}

// The value line, broken at failed runs.
std::string ValuePath(const DashSeries& s, const Frame& f) {
  std::string d;
  bool pen_down = false;
  for (size_t i = f.from; i < f.n; ++i) {
    const DashPoint& p = s.points[i];
    if (FailedRun(p)) {
      pen_down = false;
      continue;
    }
    absl::StrAppend(&d, pen_down ? " L" : " M", C(f.X(i)), ",", C(f.Y(p.value)));
    pen_down = true;
  }
  return d;
}

double NiceStep(double range, int ticks) {
  const double raw = range / ticks;
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  const double f = raw / magnitude;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * magnitude;
}

std::string PointTitle(const DashSeries& s, const DashPoint& p) {
  std::string t = absl::StrCat("run ", p.run_id, ", ", ShortDate(p.date));
  if (!p.commit.empty()) absl::StrAppend(&t, ", ", p.commit);
  if (FailedRun(p)) return absl::StrCat(t, ": ", p.status);
  absl::StrAppend(&t, ": ", FormatValue(p.value), " ", s.unit, " (best ", FormatValue(p.best), "; ",
                  p.repetitions, " repetitions ", FormatValue(p.min), " to ", FormatValue(p.max),
                  ")");
  return t;
}

std::string Grid(const DashSeries& s, const Frame& f) {
  std::string out;
  const double step = NiceStep(f.hi - f.lo, 5);
  for (double v = std::ceil(f.lo / step) * step; v <= f.hi; v += step) {
    absl::StrAppend(&out, "<path class=\"grid\" d=\"M", C(f.left), ",", C(f.Y(v)), " H",
                    C(f.left + f.width), "\"/><text class=\"tick\" x=\"", C(f.left - 6), "\" y=\"",
                    C(f.Y(v) + 4), "\" text-anchor=\"end\">", FormatValue(v), "</text>");
  }
  const size_t count = f.n - f.from;
  const size_t every = std::max<size_t>(1, (count + 7) / 8);
  for (size_t i = f.from; i < f.n; i += every) {
    absl::StrAppend(&out, "<text class=\"tick\" x=\"", C(f.X(i)), "\" y=\"", C(f.Bottom() + 16),
                    "\" text-anchor=\"middle\">", HtmlEscape(s.points[i].date.substr(0, 10)),
                    "</text>");
  }
  absl::StrAppend(&out, "<text class=\"axis\" x=\"", C(f.left + f.width / 2), "\" y=\"",
                  C(f.Bottom() + 36), "\" text-anchor=\"middle\">runs in order (", count,
                  ")</text><text class=\"axis\" transform=\"rotate(-90)\" x=\"",
                  C(-(f.top + f.height / 2)), "\" y=\"16\" text-anchor=\"middle\">",
                  HtmlEscape(s.unit), "</text>");
  return out;
}

// The rolling band: a filled area per stretch of runs that have one, and
// its centre line.
std::string BandPaths(const DashSeries& s, const Frame& f) {
  std::string out;
  size_t i = f.from;
  while (i < f.n) {
    auto has_band = [&](size_t k) {
      return Finite(s.points[k].band_low) && Finite(s.points[k].band_high);
    };
    if (!has_band(i)) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < f.n && has_band(end)) ++end;
    std::string area, centre;
    for (size_t k = i; k < end; ++k) {
      absl::StrAppend(&area, k == i ? "M" : " L", C(f.X(k)), ",", C(f.Y(s.points[k].band_high)));
      if (Finite(s.points[k].band_center)) {
        absl::StrAppend(&centre, centre.empty() ? "M" : " L", C(f.X(k)), ",",
                        C(f.Y(s.points[k].band_center)));
      }
    }
    for (size_t k = end; k-- > i;) {
      absl::StrAppend(&area, " L", C(f.X(k)), ",", C(f.Y(s.points[k].band_low)));
    }
    absl::StrAppend(&out, "<path class=\"band\" d=\"", area, " Z\"/>");
    if (!centre.empty()) absl::StrAppend(&out, "<path class=\"band-center\" d=\"", centre, "\"/>");
    i = end;
  }
  return out;
}

std::string Marks(const DashSeries& s, const Frame& f) {
  std::string out;
  for (const DashChange& c : s.changes) {
    const int before = PointIndex(s, c.before_run), after = PointIndex(s, c.after_run);
    if (before < 0 || after < 0) continue;
    const double x = (f.X(before) + f.X(after)) / 2;
    const std::string kind = c.regression ? "regression" : "improvement";
    absl::StrAppend(&out, "<g class=\"change ", kind, "\" data-change=\"", c.id, "\"><title>",
                    HtmlEscape(absl::StrCat(kind, " ", FormatPercent(c.ratio - 1), ": ", c.cause)),
                    "</title><path d=\"M", C(x), ",", C(f.top), " V", C(f.Bottom()),
                    "\"/><text x=\"", C(x + 4), "\" y=\"", C(f.top - 8), "\">",
                    FormatPercent(c.ratio - 1), "</text></g>");
  }
  for (size_t a = 0; a < s.annotations.size(); ++a) {
    const int at = PointIndex(s, s.annotations[a].run_id);
    if (at < 0) continue;
    const double x = f.X(at);
    absl::StrAppend(&out, "<g class=\"annotation\"><title>", HtmlEscape(s.annotations[a].text),
                    "</title><path d=\"M", C(x), ",", C(f.top), " V", C(f.Bottom()),
                    "\"/><text x=\"", C(x + 4), "\" y=\"", C(f.top + 12), "\">A", a + 1,
                    "</text></g>");
  }
  return out;
}

std::string Points(const DashSeries& s, const Frame& f) {
  std::string out;
  for (size_t i = f.from; i < f.n; ++i) {
    const DashPoint& p = s.points[i];
    const double x = f.X(i);
    const std::string title = absl::StrCat("<title>", HtmlEscape(PointTitle(s, p)), "</title>");
    if (FailedRun(p)) {
      const double y = f.Bottom() - 7;
      absl::StrAppend(&out, "<path class=\"failed\" data-index=\"", i, "\" d=\"M", C(x - 4), ",",
                      C(y - 4), " L", C(x + 4), ",", C(y + 4), " M", C(x - 4), ",", C(y + 4), " L",
                      C(x + 4), ",", C(y - 4), "\">", title, "</path>");
      continue;
    }
    if (Finite(p.min) && Finite(p.max) && p.max > p.min) {
      absl::StrAppend(&out, "<path class=\"spread\" d=\"M", C(x), ",", C(f.Y(p.min)), " V",
                      C(f.Y(p.max)), "\"/>");
    }
    absl::StrAppend(&out, "<circle class=\"point\" data-index=\"", i, "\" cx=\"", C(x), "\" cy=\"",
                    C(f.Y(p.value)), "\" r=\"3.5\">", title, "</circle>");
  }
  return out;
}

}  // namespace

std::string SparklineSvg(const DashSeries& s) {
  Frame f{.left = 3, .top = 3, .width = 114, .height = 22};
  f.n = s.points.size();
  f.from = f.n > kSparkRuns ? f.n - kSparkRuns : 0;
  FitRange(s, false, 0.12, f);
  std::string out = absl::StrCat(
      "<svg class=\"spark\" viewBox=\"0 0 120 28\" width=\"120\" height=\"28\" role=\"img\">",
      "<title>last ", f.n - f.from, " runs</title>");
  if (Finite(s.baseline) && s.baseline > 0) {
    absl::StrAppend(&out, "<path class=\"spark-baseline\" d=\"M0,", C(f.Y(s.baseline)),
                    " H120\"/>");
  }
  absl::StrAppend(&out, "<path class=\"spark-line\" d=\"", ValuePath(s, f), "\"/>");
  for (size_t i = f.from; i < f.n; ++i) {
    if (FailedRun(s.points[i])) {
      absl::StrAppend(&out, "<path class=\"spark-failed\" d=\"M", C(f.X(i)), ",27 V19\"/>");
    }
  }
  if (f.n > 0 && !FailedRun(s.points.back())) {
    absl::StrAppend(&out, "<circle class=\"spark-last\" cx=\"", C(f.X(f.n - 1)), "\" cy=\"",
                    C(f.Y(s.points.back().value)), "\" r=\"2\"/>");
  }
  return absl::StrCat(out, "</svg>");
}

std::string SeriesChartSvg(const DashSeries& s) {
  Frame f{.left = 72, .top = 30, .width = 864, .height = 270};
  f.n = s.points.size();
  FitRange(s, true, 0.04, f);
  std::string out = absl::StrCat(
      "<svg class=\"chart\" viewBox=\"0 0 960 360\" width=\"960\" height=\"360\" role=\"img\">",
      "<title>", HtmlEscape(s.case_name), "</title><clipPath id=\"plot-area\"><rect x=\"",
      C(f.left), "\" y=\"", C(f.top), "\" width=\"", C(f.width), "\" height=\"", C(f.height),
      "\"/></clipPath><rect class=\"plot\" x=\"", C(f.left), "\" y=\"", C(f.top), "\" width=\"",
      C(f.width), "\" height=\"", C(f.height), "\"/>", Grid(s, f),
      "<g clip-path=\"url(#plot-area)\">", BandPaths(s, f), "</g>");
  if (Finite(s.baseline) && s.baseline > 0) {
    absl::StrAppend(&out, "<path class=\"baseline\" d=\"M", C(f.left), ",", C(f.Y(s.baseline)),
                    " H", C(f.left + f.width), "\"><title>baseline ", FormatValue(s.baseline),
                    "</title></path>");
  }
  absl::StrAppend(&out, Marks(s, f), "<path class=\"value\" d=\"", ValuePath(s, f), "\"/>",
                  Points(s, f), "</svg>");
  return out;
}

}  // namespace cnnbench::history::dashboard
