// Writes the static dashboard (dashboard.h): the pages and data files the
// parts make (dashboard_parts.h), each into its own file.
#include "tools/history/dashboard.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "tools/history/dashboard_parts.h"

namespace cnnbench::history {
namespace {

absl::Status MakeFolder(const std::string& path) {
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (error) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot make the folder ", path, ": ", error.message()));
  }
  return absl::OkStatus();
}

absl::Status WriteText(const std::string& path, const std::string& text,
                       std::vector<std::string>* written) {
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (out) out.close();
  if (!out) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write ", path, ": ", errno ? std::strerror(errno) : "write failed"));
  }
  if (written != nullptr) written->push_back(path);
  return absl::OkStatus();
}

// The pages and data of series no longer in the store: only the files
// this writer names (series/<digits>.html, .js), nothing else a user put
// there.
void RemoveStaleSeriesFiles(const std::string& series_dir, const std::set<int64_t>& ids) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(series_dir, error)) {
    const std::string stem = entry.path().stem().string();
    const std::string ext = entry.path().extension().string();
    if ((ext != ".html" && ext != ".js") || stem.empty() ||
        stem.find_first_not_of("0123456789") != std::string::npos || stem.size() > 18)
      continue;
    if (!ids.count(std::stoll(stem))) std::filesystem::remove(entry.path(), error);
  }
}

}  // namespace

std::string HtmlEscape(const std::string& text) {
  return absl::StrReplaceAll(
      text, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}, {"'", "&#39;"}});
}

absl::Status WriteDashboard(const DashboardData& data, const std::string& dir,
                            std::vector<std::string>* written) {
  std::set<int64_t> ids;
  for (const DashSeries& s : data.series) {
    if (!ids.insert(s.id).second) {
      return absl::InvalidArgumentError(absl::StrCat("two series have the id ", s.id));
    }
  }
  const std::string series_dir = absl::StrCat(dir, "/series");
  absl::Status status = MakeFolder(series_dir);
  if (!status.ok()) return status;
  namespace parts = dashboard;
  const std::pair<std::string, std::string> site[] = {
      {"index.html", parts::OverviewPage(data)},
      {"machines.html", parts::MachinesPage(data)},
      {"overview.js", parts::ScriptAssignment("CNNBENCH_OVERVIEW", parts::OverviewJson(data))},
      {"dashboard.js", parts::kScript},
      {"dashboard.css", parts::kStyle},
  };
  for (const auto& [name, text] : site) {
    status = WriteText(absl::StrCat(dir, "/", name), text, written);
    if (!status.ok()) return status;
  }
  for (const DashSeries& s : data.series) {
    const std::string base = absl::StrCat(series_dir, "/", s.id);
    status = WriteText(absl::StrCat(base, ".html"), parts::SeriesPage(data, s), written);
    if (!status.ok()) return status;
    const nlohmann::json json = parts::SeriesJson(s, parts::FindMachine(data, s.machine_id));
    status = WriteText(absl::StrCat(base, ".js"), parts::ScriptAssignment("CNNBENCH_SERIES", json),
                       written);
    if (!status.ok()) return status;
  }
  RemoveStaleSeriesFiles(series_dir, ids);
  return absl::OkStatus();
}

}  // namespace cnnbench::history
