#include "bench/output/run_summary.h"

#include <cstdio>

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tools/report/report.h"

namespace cnnbench::bench {
namespace {

constexpr absl::string_view kHeadlines[] = {"### Results", "### Training step vs",
                                            "### Inference"};

bool IsHeadline(absl::string_view line) {
  for (absl::string_view h : kHeadlines)
    if (absl::StartsWith(line, h)) return true;
  return false;
}

}  // namespace

absl::StatusOr<std::string> DefaultResultsPath(absl::string_view folder,
                                               absl::string_view platform, std::time_t when) {
  const std::string dir(folder);
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
      return absl::UnavailableError(
          absl::StrCat("cannot make the results folder ", dir, ": ", std::strerror(errno)));
  } else if (!S_ISDIR(st.st_mode)) {
    return absl::UnavailableError(absl::StrCat(dir, " is not a folder"));
  }
  std::string name(platform);
  for (char& c : name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '.' || c == '_' || c == '-';
    if (!plain) c = '_';
  }
  std::tm utc{};
  gmtime_r(&when, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &utc);
  return AbsolutePath(absl::StrCat(dir, "/", name.empty() ? "run" : name, "-", stamp, ".json"));
}

std::string AbsolutePath(const std::string& path) {
  if (path.empty() || path.front() == '/') return path;
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof(cwd)) == nullptr) return path;
  absl::string_view relative = path;
  while (absl::ConsumePrefix(&relative, "./")) {
  }
  const absl::string_view folder = cwd;
  return absl::StrCat(folder, folder == "/" ? "" : "/", relative);
}

std::string ClosingLines(const std::string& json_path) {
  const std::string path = AbsolutePath(json_path);
  return absl::StrCat("results: ", path, "\nthe full report: ./bazelw run //tools:report -- ", path,
                      " > report.md\n");
}

std::string HeadlineSections(absl::string_view markdown) {
  std::vector<absl::string_view> kept;
  bool keeping = false;
  for (absl::string_view line : absl::StrSplit(markdown, '\n')) {
    if (absl::StartsWith(line, "## ") || absl::StartsWith(line, "### ")) keeping = IsHeadline(line);
    if (keeping) kept.push_back(line);
  }
  while (!kept.empty() && kept.back().empty()) kept.pop_back();
  return kept.empty() ? "" : absl::StrCat(absl::StrJoin(kept, "\n"), "\n");
}

absl::StatusOr<std::string> EndOfRunSummary(const std::string& json_path) {
  report::ReportOptions options;
  options.inputs = {json_path};
  const report::ReportOutput out = report::RunReport(options, nullptr);
  if (out.text.empty())
    return absl::InternalError(absl::StrCat("the report of ", json_path, " is empty: ",
                                            absl::StrJoin(out.errors, "; ")));
  std::string headline = HeadlineSections(out.text);
  if (headline.empty())
    headline = "(no training or inference case ran: the full report has the kernel tables)\n";
  return absl::StrCat("\n", headline, "\n", ClosingLines(json_path));
}

void PrintSummary(const std::string& json_path) {
  std::fflush(stdout);
  absl::StatusOr<std::string> summary = EndOfRunSummary(json_path);
  if (summary.ok()) {
    std::printf("%s", summary->c_str());
  } else {
    std::printf("\nresults: %s (no tables: %s)\n", json_path.c_str(),
                std::string(summary.status().message()).c_str());
  }
  std::fflush(stdout);
}

}  // namespace cnnbench::bench
