#include "tools/report/charts.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"

extern char** environ;

namespace cnnbench::report {
namespace {

// A string literal for gnuplot's double-quoted strings.
std::string Quote(absl::string_view s) {
  return absl::StrCat("\"", absl::StrReplaceAll(s, {{"\\", "\\\\"}, {"\"", "\\\""}}), "\"");
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A private scratch directory, removed with its files when it goes out of scope.
class ScratchDir {
 public:
  ScratchDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        absl::StrCat(tmp != nullptr && *tmp ? tmp : "/tmp", "/cnnbench_chart_XXXXXX");
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (mkdtemp(buffer.data()) != nullptr) path_ = buffer.data();
  }
  ~ScratchDir() {
    for (const std::string& f : files_) unlink(f.c_str());
    if (!path_.empty()) rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) {
    files_.push_back(absl::StrCat(path_, "/", name));
    return files_.back();
  }

 private:
  std::string path_;
  std::vector<std::string> files_;
};

// Runs `gnuplot script` with stdout and stderr into `log`.
absl::Status RunGnuplot(const std::string& script, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::string program = "gnuplot";
  std::vector<char*> argv = {program.data(), const_cast<char*>(script.c_str()), nullptr};
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, "gnuplot", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return absl::FailedPreconditionError("cannot run gnuplot (install gnuplot-nox; ./bazelw does)");
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) {
    return absl::InternalError("gnuplot did not exit normally");
  }
  if (WEXITSTATUS(status) == 127) {
    return absl::FailedPreconditionError("cannot run gnuplot (install gnuplot-nox; ./bazelw does)");
  }
  if (WEXITSTATUS(status) != 0) {
    return absl::InternalError(
        absl::StrCat("gnuplot failed: ", absl::StripAsciiWhitespace(ReadFile(log))));
  }
  return absl::OkStatus();
}

}  // namespace

std::string GnuplotData(const Chart& chart) {
  std::vector<std::string> header = {chart.x_label.empty() ? "x" : chart.x_label};
  header.insert(header.end(), chart.series.begin(), chart.series.end());
  std::string out = absl::StrCat(absl::StrJoin(header, "\t"), "\n");
  for (size_t i = 0; i < chart.x.size(); ++i) {
    std::vector<std::string> row = {chart.x[i]};
    for (const auto& series : chart.values) {
      row.push_back(i < series.size() && series[i] ? absl::StrCat(*series[i]) : "?");
    }
    absl::StrAppend(&out, absl::StrJoin(row, "\t"), "\n");
  }
  return out;
}

std::string GnuplotScript(const Chart& chart, absl::string_view data_path,
                          absl::string_view svg_path) {
  // noenhanced: names like resnet50_v1.5 must not turn into subscripts.
  std::string s = absl::StrCat(
      "set terminal svg size 560,360 noenhanced font \"sans,11\" background rgb \"white\"\n",
      "set output ", Quote(svg_path), "\n", "set datafile separator \"\\t\"\n",
      "set datafile missing \"?\"\n", "set ylabel ", Quote(chart.y_label), "\n",
      "set yrange [0:*]\n", "set offsets 0, 0, graph 0.15, 0\n",  // headroom for the key
      "set grid ytics\n", "set key top left\n");
  const std::string data = Quote(data_path);
  if (chart.kind == Chart::Kind::kLines) {
    // Log scale on x, with a margin so the first and last points are not on the frame.
    absl::StrAppend(&s, "set xlabel ", Quote(chart.x_label), "\n", "set logscale x 2\n",
                    "set xrange [", chart.x.front(), "/1.3:", chart.x.back(), "*1.3]\n",
                    "set xtics (", absl::StrJoin(chart.x, ", "), ")\n");
    std::vector<std::string> plots;
    for (size_t i = 0; i < chart.series.size(); ++i) {
      const bool guide = chart.series[i] == chart.reference_series;
      plots.push_back(absl::StrCat(
          i == 0 ? data : "\"\"", " using 1:", i + 2,
          guide ? " with lines dt 2 lw 1 lc rgb \"#777777\"" : " with linespoints lw 2 pt 7",
          " title columnheader(", i + 2, ")"));
    }
    absl::StrAppend(&s, "plot ", absl::StrJoin(plots, ", "), "\n");
  } else {
    // Categories sit at 0..n-1; trim the histogram's default empty margins.
    absl::StrAppend(&s, "set xlabel ", Quote(chart.x_label), "\n",
                    "set xrange [-0.6:", chart.x.size(), " - 0.4]\n", "set style data histograms\n",
                    "set style histogram clustered gap 1\n",
                    "set style fill solid 0.85 border -1\n", "set boxwidth 0.9\n",
                    "plot for [i=2:", chart.series.size() + 1, "] ", data,
                    " using i:xtic(1) title columnheader(i)\n");
  }
  return s;
}

std::string InlineSvg(absl::string_view svg, const std::string& id_prefix,
                      const std::string& title) {
  size_t start = svg.find("<svg");
  std::string out(start == absl::string_view::npos ? svg : svg.substr(start));
  std::set<std::string> ids;
  for (char quote : {'\'', '"'}) {
    const std::string open = absl::StrCat("id=", std::string(1, quote));
    for (size_t at = out.find(open); at != std::string::npos; at = out.find(open, at + 1)) {
      size_t begin = at + open.size();
      size_t end = out.find(quote, begin);
      if (end != std::string::npos) ids.insert(out.substr(begin, end - begin));
    }
  }
  // Each id with its closing delimiter, so gpPt1 does not match gpPt10.
  std::vector<std::pair<std::string, std::string>> rewrites;
  for (const std::string& id : ids) {
    const std::string renamed = id_prefix + id;
    for (const char* end : {"'", "\"", ")"}) {
      rewrites.emplace_back(absl::StrCat("#", id, end), absl::StrCat("#", renamed, end));
    }
    rewrites.emplace_back(absl::StrCat("id='", id, "'"), absl::StrCat("id='", renamed, "'"));
    rewrites.emplace_back(absl::StrCat("id=\"", id, "\""), absl::StrCat("id=\"", renamed, "\""));
  }
  out = absl::StrReplaceAll(out, rewrites);
  std::string escaped = absl::StrReplaceAll(title, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}});
  out = absl::StrReplaceAll(
      out, {{"<title>Gnuplot</title>", absl::StrCat("<title>", escaped, "</title>")}});
  return std::string(absl::StripTrailingAsciiWhitespace(out));
}

absl::StatusOr<std::string> RenderChartSvg(const Chart& chart, const std::string& id_prefix) {
  ScratchDir dir;
  if (dir.path().empty()) return absl::InternalError("cannot create a temporary directory");
  const std::string data = dir.File("data.tsv"), script = dir.File("chart.gp");
  const std::string svg = dir.File("chart.svg"), log = dir.File("gnuplot.log");
  std::ofstream(data) << GnuplotData(chart);
  std::ofstream(script) << GnuplotScript(chart, data, svg);
  absl::Status status = RunGnuplot(script, log);
  if (!status.ok()) return status;
  std::string text = ReadFile(svg);
  if (text.find("<svg") == std::string::npos) return absl::InternalError("gnuplot wrote no SVG");
  return InlineSvg(text, id_prefix, chart.title);
}

}  // namespace cnnbench::report
