// Renders a Report as Markdown (the default), CSV or a self-contained HTML
// page; JSON lines come from records.h.
#ifndef CNNBENCH_TOOLS_REPORT_FORMATS_H_
#define CNNBENCH_TOOLS_REPORT_FORMATS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/report/table.h"

namespace cnnbench::report {

// Headings per platform and section, pipe tables, notes under each table.
std::string RenderMarkdown(const Report& report);

// Per table: a title line ("platform: section: title"), the header, the
// rows, one line per note, then an empty line. RFC 4180 quoting, "\n" line ends.
std::string RenderCsv(const Report& report);

// Turns a chart into an inline <svg> element whose ids all start with
// `id_prefix` (several charts share one page).
using ChartRenderer =
    std::function<absl::StatusOr<std::string>(const Chart& chart, const std::string& id_prefix)>;

// One page with inline CSS, every table and every chart (as inline SVG from
// `render_chart`); no external resources. A chart that fails to render adds
// a warning and a line saying so in its place.
std::string RenderHtml(const Report& report, const ChartRenderer& render_chart,
                       std::vector<std::string>* warnings);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_FORMATS_H_
