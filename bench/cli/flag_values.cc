#include "bench/cli/flag_values.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "bench/cli/flag_read.h"
#include "models/zoo.h"

namespace cnnbench::bench {

absl::StatusOr<int64_t> ParseByteCount(absl::string_view text) {
  if (std::string spaces = SpacesAround(text); !spaces.empty())
    return absl::InvalidArgumentError(spaces);
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
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) {
        return absl::ascii_isdigit(static_cast<unsigned char>(c));
      }))
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is not a byte count (digits, optionally K, M or G)"));
  // Digits only: the one error left is too many of them.
  const absl::StatusOr<int64_t> value = ParseWholeNumber<int64_t>(digits);
  const int64_t most = std::numeric_limits<int64_t>::max() / scale;
  if (!value.ok() || *value > most)
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is too large (at most ", most,
                     scale > 1 ? text.substr(text.size() - 1) : absl::string_view(), ")"));
  return *value * scale;
}

absl::Status CanonicalizeModelNames(absl::string_view flag, std::vector<std::string>* models) {
  std::vector<std::string> canonical;
  for (const std::string& model : *models) {
    const absl::StatusOr<ModelInfo> found = FindModel(model);
    if (!found.ok())
      return absl::InvalidArgumentError(absl::StrCat(flag, ": ", found.status().message()));
    // One model under two names is refused, as every list flag refuses a repeat.
    const auto earlier = std::find(canonical.begin(), canonical.end(), found->name);
    if (earlier != canonical.end())
      return absl::InvalidArgumentError(absl::StrCat(
          flag, ": '", (*models)[earlier - canonical.begin()], "' and '", model,
          "' are the same model (", found->name, "): give it once"));
    canonical.push_back(found->name);
  }
  *models = std::move(canonical);
  return absl::OkStatus();
}

}  // namespace cnnbench::bench
