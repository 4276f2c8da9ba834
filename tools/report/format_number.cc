#include "tools/report/format_number.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "absl/strings/str_format.h"

namespace cnnbench::report {

std::string FormatThroughput(double value) {
  if (!std::isfinite(value)) return "N/A";
  if (value == 0) return "0";
  const double magnitude = std::fabs(value);
  int integer_digits = static_cast<int>(std::floor(std::log10(magnitude))) + 1;
  int decimals = std::max(0, 3 - integer_digits);
  std::string text = absl::StrFormat("%.*f", decimals, value);
  // Rounding can carry into a new digit (99.96 -> "100.0"); drop a decimal then.
  if (decimals > 0 &&
      std::fabs(std::strtod(text.c_str(), nullptr)) >= std::pow(10.0, integer_digits)) {
    text = absl::StrFormat("%.*f", decimals - 1, value);
  }
  return text;
}

std::string FormatRatio(double ratio) { return absl::StrFormat("%.2f", ratio); }

std::string FormatPercent(double fraction) { return absl::StrFormat("%.1f%%", 100.0 * fraction); }

std::string FormatMicroseconds(double us) {
  if (us >= 10000) return absl::StrFormat("%.0f", us);
  if (us >= 100) return absl::StrFormat("%.1f", us);
  return absl::StrFormat("%.2f", us);
}

}  // namespace cnnbench::report
