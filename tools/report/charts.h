// Renders charts to SVG with gnuplot (gnuplot-nox, installed by ./bazelw).
#ifndef CNNBENCH_TOOLS_REPORT_CHARTS_H_
#define CNNBENCH_TOOLS_REPORT_CHARTS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/report/table.h"

namespace cnnbench::report {

// The chart as an <svg> element ready to inline in HTML: no XML prolog, and
// every id (and every reference to one) prefixed with `id_prefix`.
// Fails when gnuplot is missing or fails; the message has its stderr.
absl::StatusOr<std::string> RenderChartSvg(const Chart& chart, const std::string& id_prefix);

// The gnuplot script and data file RenderChartSvg uses (exposed for tests).
std::string GnuplotScript(const Chart& chart, absl::string_view data_path,
                          absl::string_view svg_path);
std::string GnuplotData(const Chart& chart);

// Strips the XML prolog and prefixes ids (exposed for tests).
std::string InlineSvg(absl::string_view svg, const std::string& id_prefix,
                      const std::string& title);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_CHARTS_H_
