// Peers side by side: runs of one platform by several frameworks (this
// suite, PyTorch, TensorFlow, ONNX Runtime, OpenVINO: each file's
// `framework` context key) are reported apart, and compared here in one
// table per kind (training, inference), precision, data kind and batch
// size: rows = model and placement, a column per framework, and each
// framework's ratio to a baseline framework; inference adds a table of the
// p50 and p99 batch latencies.
#ifndef CNNBENCH_TOOLS_REPORT_FRAMEWORK_TABLES_H_
#define CNNBENCH_TOOLS_REPORT_FRAMEWORK_TABLES_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tools/report/results.h"
#include "tools/report/table.h"

namespace cnnbench::report {

// Whether `name` names `framework`: the whole value ("pytorch 2.15.0") or
// its first word, the framework without its version ("pytorch").
bool FrameworkMatches(absl::string_view name, absl::string_view framework);

// The distinct frameworks of the results, in first-seen order.
std::vector<std::string> Frameworks(const Results& results);

// The framework --baseline_framework=`name` selects among the results'
// ones; an error naming the flag when none matches or when the name fits
// several (two versions of one framework).
absl::StatusOr<std::string> ResolveBaselineFramework(const Results& results,
                                                     const std::string& name);

// The "Frameworks side by side" section of each platform run by several
// frameworks, keyed by the index in results.platforms of the report it
// belongs to: the baseline framework's run of that platform, else its first.
// Ratios are each framework / `baseline`; none where the platform has no
// run of the baseline.
std::map<size_t, Section> FrameworkSections(const Results& results, const std::string& baseline,
                                            double max_cv);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_FRAMEWORK_TABLES_H_
