#include "kernels/onednn/conv_choices.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace cnnbench {

absl::string_view CpuConvAlgorithmName(CpuConvAlgorithm algorithm) {
  switch (algorithm) {
    case CpuConvAlgorithm::kTimed:
      return "timed";
    case CpuConvAlgorithm::kDirect:
      return "direct";
    case CpuConvAlgorithm::kWinograd:
      return "winograd";
    case CpuConvAlgorithm::kAuto:
      return "auto";
  }
  return "?";
}

absl::StatusOr<CpuConvAlgorithm> ParseCpuConvAlgorithm(absl::string_view name) {
  for (CpuConvAlgorithm a : {CpuConvAlgorithm::kTimed, CpuConvAlgorithm::kDirect,
                             CpuConvAlgorithm::kWinograd, CpuConvAlgorithm::kAuto})
    if (name == CpuConvAlgorithmName(a)) return a;
  return absl::InvalidArgumentError(absl::StrCat("unknown CPU convolution algorithm '", name,
                                                 "' (known: timed, direct, winograd, auto)"));
}

ConvChoices& ConvChoices::Process() {
  static ConvChoices* choices = new ConvChoices();
  return *choices;
}

std::string ConvChoices::Key(absl::string_view desc, absl::string_view dtype,
                             absl::string_view pass, int threads) {
  return absl::StrCat(desc, " ", dtype, " ", pass, " threads:", threads);
}

std::optional<ConvChoice> ConvChoices::Find(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = choices_.find(key);
  if (it == choices_.end()) return std::nullopt;
  return it->second;
}

void ConvChoices::Set(const std::string& key, const ConvChoice& choice) {
  std::lock_guard<std::mutex> lock(mutex_);
  choices_.emplace(key, choice);
}

size_t ConvChoices::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return choices_.size();
}

std::string ConvChoices::Serialize() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  for (const auto& [key, c] : choices_)
    absl::StrAppend(&out, key, "\t", c.algorithm, "\t", c.seconds, "\t", c.direct_seconds, "\n");
  return out;
}

absl::Status ConvChoices::Merge(absl::string_view text) {
  std::map<std::string, ConvChoice> parsed;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    ++line_number;
    const std::vector<absl::string_view> fields = absl::StrSplit(line, '\t');
    ConvChoice c;
    if (fields.size() != 4 || (fields[1] != "direct" && fields[1] != "winograd") ||
        !absl::SimpleAtod(fields[2], &c.seconds) || !absl::SimpleAtod(fields[3], &c.direct_seconds))
      return absl::InvalidArgumentError(absl::StrCat("convolution choices, line ", line_number,
                                                     ": expected 'key<TAB>direct|winograd<TAB>"
                                                     "seconds<TAB>direct seconds', got '",
                                                     line, "'"));
    c.algorithm = std::string(fields[1]);
    parsed[std::string(fields[0])] = c;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [key, c] : parsed) choices_[key] = c;
  return absl::OkStatus();
}

}  // namespace cnnbench
