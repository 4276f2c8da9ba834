// HTML output (formats.h): one self-contained page.
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "tools/report/formats.h"

namespace cnnbench::report {
namespace {

constexpr char kStyle[] = R"css(
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
h1 { font-size: 1.8em; } h2 { margin-top: 2em; border-bottom: 2px solid #ccc; }
h3 { margin-top: 1.5em; }
table { border-collapse: collapse; margin: 0.5em 0 0.3em; }
h4 { margin: 1.2em 0 0.3em; font-size: 1em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; }
th { background: #f2f2f2; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
p.note { font-size: 0.9em; color: #555; margin: 0.2em 0; }
figure { display: inline-block; margin: 0.5em 1em 0.5em 0; }
figcaption { font-size: 0.9em; color: #555; }
nav a { margin-right: 1em; }
)css";

std::string Escape(const std::string& s) {
  return absl::StrReplaceAll(
      s, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}, {"'", "&#39;"}});
}

// Numbers and their stand-ins (OOM, N/A, new, -, and the spread tables'
// "- (1)" and "? (3)") align right.
bool IsNumeric(const std::string& cell) {
  if (cell.empty()) return true;  // a blank sweep cell does not make a column text
  return absl::ascii_isdigit(cell[0]) || cell[0] == '-' || cell[0] == '?' ||
         absl::StartsWith(cell, "N/A") || absl::StartsWith(cell, "OOM") ||
         absl::StartsWith(cell, "new");
}

// A column of numbers aligns right; a column with any text aligns left.
std::vector<bool> NumericColumns(const Table& table) {
  std::vector<bool> numeric(table.header.size(), !table.rows.empty());
  for (const auto& row : table.rows) {
    for (size_t i = 0; i < row.size() && i < numeric.size(); ++i) {
      numeric[i] = numeric[i] && IsNumeric(row[i]);
    }
  }
  return numeric;
}

void AppendTable(const Table& table, const std::string& section_title, const std::string& id,
                 std::string& out) {
  // A section's namesake table needs no title of its own (as in Markdown).
  if (table.title != section_title) {
    absl::StrAppend(&out, "<h4 id=\"", id, "-title\">", Escape(table.title), "</h4>\n");
  }
  absl::StrAppend(&out, "<table id=\"", id, "\">\n<thead><tr>");
  for (const std::string& h : table.header) absl::StrAppend(&out, "<th>", Escape(h), "</th>");
  absl::StrAppend(&out, "</tr></thead>\n<tbody>\n");
  const std::vector<bool> numeric = NumericColumns(table);
  for (const auto& row : table.rows) {
    absl::StrAppend(&out, "<tr>");
    for (size_t i = 0; i < row.size(); ++i) {
      absl::StrAppend(&out, i < numeric.size() && numeric[i] ? "<td class=\"n\">" : "<td>",
                      Escape(row[i]), "</td>");
    }
    absl::StrAppend(&out, "</tr>\n");
  }
  absl::StrAppend(&out, "</tbody>\n</table>\n");
  for (const std::string& note : table.notes) {
    absl::StrAppend(&out, "<p class=\"note\">", Escape(note), "</p>\n");
  }
}

}  // namespace

std::string RenderHtml(const Report& report, const ChartRenderer& render_chart,
                       std::vector<std::string>* warnings) {
  int tables = 0, charts = 0;
  std::string body;
  absl::StrAppend(&body, "<h1>", Escape(report.title), "</h1>\n<nav>");
  for (size_t p = 0; p < report.platforms.size(); ++p) {
    absl::StrAppend(&body, "<a href=\"#platform-", p, "\">", Escape(report.platforms[p].platform),
                    "</a>");
  }
  absl::StrAppend(&body, "</nav>\n");
  for (size_t p = 0; p < report.platforms.size(); ++p) {
    const PlatformReport& platform = report.platforms[p];
    absl::StrAppend(&body, "<section id=\"platform-", p, "\">\n<h2>", Escape(platform.platform),
                    "</h2>\n");
    for (const Section& section : platform.sections) {
      absl::StrAppend(&body, "<h3>", Escape(section.title), "</h3>\n");
      for (const Table& table : section.tables) {
        AppendTable(table, section.title, absl::StrCat("table-", tables++), body);
      }
      for (const Chart& chart : section.charts) {
        const std::string id = absl::StrCat("chart-", charts++);
        absl::StatusOr<std::string> svg = render_chart(chart, absl::StrCat(id, "-"));
        absl::StrAppend(&body, "<figure id=\"", id, "\">\n");
        if (svg.ok()) {
          absl::StrAppend(&body, *svg, "\n");
        } else {
          warnings->push_back(absl::StrCat("chart '", chart.title, "': ", svg.status().message()));
          absl::StrAppend(&body, "<p class=\"note\">chart not rendered: ",
                          Escape(std::string(svg.status().message())), "</p>\n");
        }
        absl::StrAppend(&body, "<figcaption>", Escape(chart.title), "</figcaption>\n</figure>\n");
      }
    }
    absl::StrAppend(&body, "</section>\n");
  }
  // The counts let a browser check confirm that every table and chart shows.
  return absl::StrCat("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
                      "<title>", Escape(report.title), "</title>\n",
                      "<meta name=\"cnnbench-tables\" content=\"", tables, "\">\n",
                      "<meta name=\"cnnbench-charts\" content=\"", charts, "\">\n", "<style>",
                      kStyle, "</style>\n</head>\n<body>\n", body, "</body>\n</html>\n");
}

}  // namespace cnnbench::report
