// CSV output (formats.h).
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "tools/report/formats.h"

namespace cnnbench::report {
namespace {

std::string Field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  return absl::StrCat("\"", absl::StrReplaceAll(s, {{"\"", "\"\""}}), "\"");
}

std::string Line(const std::vector<std::string>& cells) {
  std::vector<std::string> fields;
  for (const std::string& c : cells) fields.push_back(Field(c));
  return absl::StrCat(absl::StrJoin(fields, ","), "\n");
}

}  // namespace

std::string RenderCsv(const Report& report) {
  std::string out;
  for (const PlatformReport& platform : report.platforms) {
    for (const Section& section : platform.sections) {
      for (const Table& table : section.tables) {
        // "platform: section: table", not repeating a section title the table's title has.
        std::string title = absl::StartsWith(table.title, section.title)
                                ? table.title
                                : absl::StrCat(section.title, ": ", table.title);
        absl::StrAppend(&out, Line({absl::StrCat(platform.platform, ": ", title)}));
        absl::StrAppend(&out, Line(table.header));
        for (const auto& row : table.rows) absl::StrAppend(&out, Line(row));
        for (const std::string& note : table.notes) absl::StrAppend(&out, Line({note}));
        absl::StrAppend(&out, "\n");
      }
    }
  }
  return out;
}

}  // namespace cnnbench::report
