#include "kernels/desc_text.h"

#include <cstdio>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace cnnbench::desc_text {

// Shortest decimal form that strtod reads back as exactly `value`, so the
// strings stay short (0.001, 1e-05) and still round-trip.
std::string FormatReal(double value) {
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  return buf;
}

std::string DimsToString(const Dims4& d) {
  return absl::StrCat("mb", d.n, "ic", d.c, "ih", d.h, "iw", d.w);
}

// One spatial dimension: "ih56oh28kh3sh2ph1[dh2]" with axis 'h', or
// "pt0pb1" in place of "ph1" when the pads differ (axis 'w': pl/pr).
std::string WindowToString(const WindowDim& d, char axis) {
  const char* before = axis == 'h' ? "pt" : "pl";
  const char* after = axis == 'h' ? "pb" : "pr";
  std::string out = absl::StrCat("i", std::string(1, axis), d.in, "o", std::string(1, axis),
                                 d.out, "k", std::string(1, axis), d.kernel, "s",
                                 std::string(1, axis), d.stride);
  if (d.pad_before == d.pad_after) {
    absl::StrAppend(&out, "p", std::string(1, axis), d.pad_before);
  } else {
    absl::StrAppend(&out, before, d.pad_before, after, d.pad_after);
  }
  if (d.dilation != 1) absl::StrAppend(&out, "d", std::string(1, axis), d.dilation);
  return out;
}

absl::Status InvalidDesc(absl::string_view text, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("bad descriptor '", text, "': ", what));
}


absl::Status ParseDims(Scanner& s, Dims4& d) {
  ASSIGN_OR_RETURN_AS_IS(d.n, s.Int("mb"));
  ASSIGN_OR_RETURN_AS_IS(d.c, s.Int("ic"));
  ASSIGN_OR_RETURN_AS_IS(d.h, s.Int("ih"));
  ASSIGN_OR_RETURN_AS_IS(d.w, s.Int("iw"));
  return absl::OkStatus();
}

// Reads "ih..oh..kh..sh..(ph..|pt..pb..)[dh..]" for `axis` 'h' or 'w'.
absl::Status ParseWindow(Scanner& s, char axis, WindowDim& d) {
  const std::string a(1, axis);
  ASSIGN_OR_RETURN_AS_IS(d.in, s.Int("i" + a));
  ASSIGN_OR_RETURN_AS_IS(d.out, s.Int("o" + a));
  ASSIGN_OR_RETURN_AS_IS(d.kernel, s.Int("k" + a));
  ASSIGN_OR_RETURN_AS_IS(d.stride, s.Int("s" + a));
  const std::string before = axis == 'h' ? "pt" : "pl";
  const std::string after = axis == 'h' ? "pb" : "pr";
  if (s.AtKey(before)) {
    ASSIGN_OR_RETURN_AS_IS(d.pad_before, s.Int(before));
    ASSIGN_OR_RETURN_AS_IS(d.pad_after, s.Int(after));
  } else {
    ASSIGN_OR_RETURN_AS_IS(d.pad_before, s.Int("p" + a));
    d.pad_after = d.pad_before;
  }
  d.dilation = 1;
  if (s.AtKey("d" + a)) {
    ASSIGN_OR_RETURN_AS_IS(d.dilation, s.Int("d" + a));
  }
  return absl::OkStatus();
}

absl::Status ParseWindows(Scanner& s, WindowDim& h, WindowDim& w) {
  RETURN_IF_ERROR_AS_IS(s.Expect("_"));
  RETURN_IF_ERROR_AS_IS(ParseWindow(s, 'h', h));
  RETURN_IF_ERROR_AS_IS(s.Expect("_"));
  return ParseWindow(s, 'w', w);
}

// Checks that a window's stored output size is what its other fields give.
absl::Status CheckWindow(const WindowDim& d, char axis) {
  absl::StatusOr<WindowDim> expected = MakeWindowDim(d.in, d.kernel, d.stride, Padding::kExplicit,
                                                     d.dilation, d.pad_before, d.pad_after);
  if (!expected.ok())
    return absl::InvalidArgumentError(
        absl::StrCat("axis ", std::string(1, axis), ": ", expected.status().message()));
  if (expected->out != d.out)
    return absl::InvalidArgumentError(absl::StrCat(
        "field 'o", std::string(1, axis), "' is ", d.out, " but the window gives ",
        expected->out, " (", WindowToString(*expected, axis), ")"));
  return absl::OkStatus();
}

absl::Status CheckDims(const Dims4& d) {
  if (d.n < 1 || d.c < 1 || d.h < 1 || d.w < 1)
    return absl::InvalidArgumentError(
        absl::StrCat("sizes must be positive (", DimsToString(d), ")"));
  return absl::OkStatus();
}

absl::Status CheckPositive(absl::string_view field, int64_t value) {
  if (value < 1)
    return absl::InvalidArgumentError(
        absl::StrCat("field '", field, "' must be positive, got ", value));
  return absl::OkStatus();
}

absl::Status CheckReal(absl::string_view field, double value, double low, double high,
                       bool low_open, bool high_open) {
  bool ok = std::isfinite(value) && (low_open ? value > low : value >= low) &&
            (high_open ? value < high : value <= high);
  if (!ok)
    return absl::InvalidArgumentError(absl::StrCat(
        "field '", field, "' is ", FormatReal(value), ", outside ", low_open ? "(" : "[",
        FormatReal(low), ", ", std::isinf(high) ? "inf" : FormatReal(high),
        high_open ? ")" : "]"));
  return absl::OkStatus();
}


absl::string_view PoolAlgorithmName(PoolAlgorithm algorithm) {
  switch (algorithm) {
    case PoolAlgorithm::kMax: return "max";
    case PoolAlgorithm::kAvg: return "avg";
    case PoolAlgorithm::kAvgExcludePad: return "avgx";
  }
  return "max";
}

}  // namespace cnnbench::desc_text
