// Noise made visible: each cell's spread over its repetitions (for the
// "Spread over repetitions" tables) and the footnote mark on cells whose
// coefficient of variation is above the report's threshold.
#ifndef CNNBENCH_TOOLS_REPORT_SPREAD_H_
#define CNNBENCH_TOOLS_REPORT_SPREAD_H_

#include <string>

#include "tools/report/results.h"
#include "tools/report/table.h"

namespace cnnbench::report {

// 0.0034 -> "0.34%", 0.051 -> "5.1%", 0.05 -> "5%", 0.12 -> "12%"; below 0.005%: "0%".
std::string FormatCv(double cv);

// A spread table's cell: "0.34% (3)" (cv, then the number of repetitions),
// "- (1)" for a single repetition, "? (3)" when a file gave a mean without
// its stddev, "-" when the case failed, was not finite or was not run.
std::string SpreadCell(const Measurement* m, const std::string& counter);

// What a spread table's cells are: the note under the first spread table.
std::string SpreadNote();

// "[n]" when the counter's cv is above `max_cv` (the footnote points at the
// spread tables), else "".
std::string NoiseMark(const Measurement& m, const std::string& counter, double max_cv,
                      Footnotes& notes, const std::string& where);

// The value's cell: the formatted mean and its noise mark, or N/A with a
// footnote when a repetition's value was NaN or Infinity.
std::string ValueCell(const Measurement& m, const std::string& counter, double scale, double max_cv,
                      Footnotes& notes, const std::string& where);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_SPREAD_H_
