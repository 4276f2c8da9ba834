// The text form of the descriptors, shared by kernels/desc.cc's parsers and
// printers: a strict cursor over a descriptor string, the printers of its
// common fields, and the field checks whose errors name the field. Internal
// to //kernels:desc.
#ifndef CNNBENCH_KERNELS_DESC_TEXT_H_
#define CNNBENCH_KERNELS_DESC_TEXT_H_

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/status.h"
#include "kernels/desc.h"

namespace cnnbench::desc_text {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

absl::Status InvalidDesc(absl::string_view text, absl::string_view what);

// A cursor over a descriptor string. Every failure names the whole string,
// the offending field and where it was expected, so a mistyped shape-file
// line is easy to find.
class Scanner {
 public:
  explicit Scanner(absl::string_view text) : text_(text) {}

  absl::string_view text() const { return text_; }
  bool AtEnd() const { return pos_ == text_.size(); }

  absl::Status Error(absl::string_view what) const { return InvalidDesc(text_, what); }

  // Consumes `literal` or fails naming it.
  absl::Status Expect(absl::string_view literal) {
    if (!TryConsume(literal))
      return Error(absl::StrCat("expected '", literal, "' at offset ", pos_, Rest()));
    return absl::OkStatus();
  }

  // Whether `literal` is next.
  bool LookingAt(absl::string_view literal) const {
    return text_.substr(pos_, literal.size()) == literal;
  }

  // Consumes `literal` when it is next.
  bool TryConsume(absl::string_view literal) {
    if (text_.substr(pos_, literal.size()) != literal) return false;
    pos_ += literal.size();
    return true;
  }

  // True when `key` followed by a digit is next (an optional integer field).
  bool AtKey(absl::string_view key) const {
    size_t end = pos_ + key.size();
    return text_.substr(pos_, key.size()) == key && end < text_.size() &&
           absl::ascii_isdigit(static_cast<unsigned char>(text_[end]));
  }

  // `key` then a non-negative decimal integer.
  absl::StatusOr<int64_t> Int(absl::string_view key) {
    if (!TryConsume(key))
      return Error(absl::StrCat("expected field '", key, "' at offset ", pos_, Rest()));
    return Number(key);
  }

  // A non-negative decimal integer, the value of `field`.
  absl::StatusOr<int64_t> Number(absl::string_view field) {
    size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && absl::ascii_isdigit(static_cast<unsigned char>(text_[pos_]))) {
      int digit = text_[pos_] - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10)
        return Error(absl::StrCat("field '", field, "' is out of range"));
      value = value * 10 + digit;
      ++pos_;
    }
    if (pos_ == start)
      return Error(absl::StrCat("field '", field, "' needs an integer at offset ", start, Rest()));
    return value;
  }

  // `key` then a finite non-negative decimal real (digits, '.', exponent).
  absl::StatusOr<double> Real(absl::string_view key) {
    if (!TryConsume(key))
      return Error(absl::StrCat("expected field '", key, "' at offset ", pos_, Rest()));
    size_t start = pos_;
    bool digits = false;
    while (pos_ < text_.size() &&
           (absl::ascii_isdigit(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.')) {
      digits |= text_[pos_] != '.';
      ++pos_;
    }
    // An exponent only when digits follow, so a following key is never eaten.
    if (digits && pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      size_t p = pos_ + 1;
      if (p < text_.size() && (text_[p] == '+' || text_[p] == '-')) ++p;
      if (p < text_.size() && absl::ascii_isdigit(static_cast<unsigned char>(text_[p]))) {
        while (p < text_.size() && absl::ascii_isdigit(static_cast<unsigned char>(text_[p]))) ++p;
        pos_ = p;
      }
    }
    std::string number(text_.substr(start, pos_ - start));
    char* end = nullptr;
    errno = 0;
    double value = digits ? std::strtod(number.c_str(), &end) : 0.0;
    if (!digits || end != number.c_str() + number.size() || errno == ERANGE ||
        !std::isfinite(value))
      return Error(absl::StrCat("field '", key, "' needs a real number at offset ", start, Rest()));
    return value;
  }

  absl::Status End() {
    if (!AtEnd()) return Error(absl::StrCat("unexpected text at offset ", pos_, Rest()));
    return absl::OkStatus();
  }

 private:
  std::string Rest() const {
    if (AtEnd()) return " (end of string)";
    return absl::StrCat(" ('", text_.substr(pos_, 12), "')");
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

// Shortest decimal form that strtod reads back as exactly `value`, so the
// strings stay short (0.001, 1e-05) and still round-trip.
std::string FormatReal(double value);

std::string DimsToString(const Dims4& d);

// One spatial dimension: "ih56oh28kh3sh2ph1[dh2]" with axis 'h', or
// "pt0pb1" in place of "ph1" when the pads differ (axis 'w': pl/pr).
std::string WindowToString(const WindowDim& d, char axis);

absl::Status ParseDims(Scanner& s, Dims4& d);

// Reads "ih..oh..kh..sh..(ph..|pt..pb..)[dh..]" for `axis` 'h' or 'w'.
absl::Status ParseWindow(Scanner& s, char axis, WindowDim& d);

// "_<h window>_<w window>": both spatial windows, each after a '_'.
absl::Status ParseWindows(Scanner& s, WindowDim& h, WindowDim& w);

// Checks that a window's stored output size is what its other fields give.
absl::Status CheckWindow(const WindowDim& d, char axis);

absl::Status CheckDims(const Dims4& d);

absl::Status CheckPositive(absl::string_view field, int64_t value);

absl::Status CheckReal(absl::string_view field, double value, double low, double high,
                       bool low_open, bool high_open);

absl::string_view PoolAlgorithmName(PoolAlgorithm algorithm);

// The common tail of every Parse: the descriptor must validate, and errors
// name the string being parsed.
template <typename Desc>
absl::StatusOr<Desc> Finish(Scanner& s, Desc desc) {
  RETURN_IF_ERROR_AS_IS(s.End());
  absl::Status status = desc.Validate();
  if (!status.ok()) return s.Error(status.message());
  return desc;
}

// An optional activation suffix (ActivationSuffix): the longest that is
// next, kNone when none is.
inline ActivationKind ParseActivationSuffix(Scanner& s) {
  ActivationKind found = ActivationKind::kNone;
  size_t longest = 0;
  for (int k = 0; k < static_cast<int>(ActivationKind::kCount); ++k) {
    const auto kind = static_cast<ActivationKind>(k);
    const absl::string_view suffix = ActivationSuffix(kind);
    if (suffix.size() > longest && s.LookingAt(suffix)) {
      found = kind;
      longest = suffix.size();
    }
  }
  if (found != ActivationKind::kNone) s.TryConsume(ActivationSuffix(found));
  return found;
}

}  // namespace cnnbench::desc_text

#endif  // CNNBENCH_KERNELS_DESC_TEXT_H_
