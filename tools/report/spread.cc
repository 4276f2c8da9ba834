#include "tools/report/spread.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/report/format_number.h"

namespace cnnbench::report {

std::string FormatCv(double cv) {
  const double percent = 100 * cv;
  if (percent < 0.005) return "0%";
  const int decimals = percent >= 9.95 ? 0 : (percent >= 0.995 ? 1 : 2);
  std::string text = absl::StrFormat("%.*f", decimals, percent);
  // Two significant figures at most, without trailing zeros: 5%, 0.5%, 1.2%.
  if (decimals > 0) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  return absl::StrCat(text, "%");
}

std::string SpreadCell(const Measurement* m, const std::string& counter) {
  if (m == nullptr || !m->ok() || !m->Mean(counter)) return "-";
  const int n = m->count.at(counter);
  if (n < 2) return absl::StrCat("- (", n, ")");
  std::optional<double> cv = m->Cv(counter);
  return absl::StrCat(cv ? FormatCv(*cv) : "?", " (", n, ")");
}

std::string SpreadNote() {
  return "Each table here mirrors the one its title names: a cell is that cell's coefficient "
         "of variation over the repetitions (standard deviation / mean; all-reduce: of the "
         "time), then the number of repetitions. - (1): one repetition, no spread; ?: a run "
         "gave its mean without a standard deviation; -: failed or not run.";
}

std::string NoiseMark(const Measurement& m, const std::string& counter, double max_cv,
                      Footnotes& notes, const std::string& where) {
  std::optional<double> cv = m.Cv(counter);
  if (!cv || !(*cv > max_cv)) return "";
  return notes.Mark(absl::StrCat("cv over repetitions above ", FormatCv(max_cv),
                                 " (--max_cv; see Spread over repetitions)"),
                    absl::StrCat(where, ": ", FormatCv(*cv)));
}

std::string ValueCell(const Measurement& m, const std::string& counter, double scale, double max_cv,
                      Footnotes& notes, const std::string& where) {
  if (std::string bad = m.NotFiniteText(counter); !bad.empty()) {
    return absl::StrCat("N/A", notes.Mark(absl::StrCat("not finite: ", bad), where));
  }
  std::optional<double> value = m.Mean(counter);
  if (!value) return "-";
  return absl::StrCat(FormatThroughput(*value / scale),
                      NoiseMark(m, counter, max_cv, notes, where));
}

}  // namespace cnnbench::report
