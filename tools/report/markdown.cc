// Markdown output (formats.h).
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "tools/report/formats.h"

namespace cnnbench::report {
namespace {

std::string Row(const std::vector<std::string>& cells) {
  std::vector<std::string> escaped;
  for (const std::string& c : cells) escaped.push_back(absl::StrReplaceAll(c, {{"|", "\\|"}}));
  return absl::StrCat("| ", absl::StrJoin(escaped, " | "), " |\n");
}

}  // namespace

std::string RenderMarkdown(const Report& report) {
  std::string out = absl::StrCat("# ", report.title, "\n");
  for (const PlatformReport& platform : report.platforms) {
    absl::StrAppend(&out, "\n## ", platform.platform, "\n");
    for (const Section& section : platform.sections) {
      absl::StrAppend(&out, "\n### ", section.title, "\n");
      for (const Table& table : section.tables) {
        // A section's lone namesake table needs no second heading.
        if (table.title != section.title) absl::StrAppend(&out, "\n#### ", table.title, "\n");
        absl::StrAppend(&out, "\n", Row(table.header));
        absl::StrAppend(&out, Row(std::vector<std::string>(table.header.size(), "---")));
        for (const auto& row : table.rows) absl::StrAppend(&out, Row(row));
        for (const std::string& note : table.notes) absl::StrAppend(&out, "\n", note, "\n");
      }
    }
  }
  return out;
}

}  // namespace cnnbench::report
