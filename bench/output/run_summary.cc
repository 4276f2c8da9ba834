#include "bench/output/run_summary.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
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
  return absl::StrCat(dir, "/", name.empty() ? "run" : name, "-", stamp, ".json");
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
  return absl::StrCat("\n", headline, "\nresults: ", json_path,
                      "\nthe full report: ./bazelw run //tools:report -- ", json_path,
                      " > report.md\n");
}

}  // namespace cnnbench::bench
