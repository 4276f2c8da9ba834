#include "bench/cli/flag_values.h"

#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "models/zoo.h"

namespace cnnbench::bench {

absl::StatusOr<int64_t> ParseByteCount(absl::string_view text) {
  int64_t scale = 1;
  absl::string_view digits = text;
  if (!text.empty()) {
    switch (absl::ascii_toupper(static_cast<unsigned char>(text.back()))) {
      case 'K':
        scale = int64_t{1} << 10;
        break;
      case 'M':
        scale = int64_t{1} << 20;
        break;
      case 'G':
        scale = int64_t{1} << 30;
        break;
      default:
        break;
    }
    if (scale > 1) digits.remove_suffix(1);
  }
  int64_t value = 0;
  if (digits.empty() || !absl::ascii_isdigit(static_cast<unsigned char>(digits.front())) ||
      !absl::SimpleAtoi(digits, &value))
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is not a byte count (digits, optionally K, M or G)"));
  if (value > std::numeric_limits<int64_t>::max() / scale)
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is too large a byte count"));
  return value * scale;
}

absl::Status CheckModelNames(absl::string_view flag, const std::vector<std::string>& models) {
  for (const std::string& model : models) {
    const absl::StatusOr<ModelInfo> found = FindModel(model);
    if (!found.ok())
      return absl::InvalidArgumentError(absl::StrCat(flag, ": ", found.status().message()));
  }
  return absl::OkStatus();
}

}  // namespace cnnbench::bench
