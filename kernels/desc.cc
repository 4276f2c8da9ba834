// Descriptors of the layer operations: validation, TensorFlow window
// arithmetic, and the canonical one-line strings (print and strict parse).
#include "kernels/desc.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <type_traits>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cnnbench {
namespace {

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
      return Error(absl::StrCat("field '", key, "' needs a real number at offset ", start,
                                Rest()));
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

#define SCAN_ASSIGN(lhs, expr)          \
  do {                                  \
    auto scan_value_ = (expr);          \
    if (!scan_value_.ok()) return scan_value_.status(); \
    lhs = *scan_value_;                 \
  } while (0)

#define SCAN_CHECK(expr)                \
  do {                                  \
    absl::Status scan_status_ = (expr); \
    if (!scan_status_.ok()) return scan_status_; \
  } while (0)

absl::Status ParseDims(Scanner& s, Dims4& d) {
  SCAN_ASSIGN(d.n, s.Int("mb"));
  SCAN_ASSIGN(d.c, s.Int("ic"));
  SCAN_ASSIGN(d.h, s.Int("ih"));
  SCAN_ASSIGN(d.w, s.Int("iw"));
  return absl::OkStatus();
}

// Reads "ih..oh..kh..sh..(ph..|pt..pb..)[dh..]" for `axis` 'h' or 'w'.
absl::Status ParseWindow(Scanner& s, char axis, WindowDim& d) {
  const std::string a(1, axis);
  SCAN_ASSIGN(d.in, s.Int("i" + a));
  SCAN_ASSIGN(d.out, s.Int("o" + a));
  SCAN_ASSIGN(d.kernel, s.Int("k" + a));
  SCAN_ASSIGN(d.stride, s.Int("s" + a));
  const std::string before = axis == 'h' ? "pt" : "pl";
  const std::string after = axis == 'h' ? "pb" : "pr";
  if (s.AtKey(before)) {
    SCAN_ASSIGN(d.pad_before, s.Int(before));
    SCAN_ASSIGN(d.pad_after, s.Int(after));
  } else {
    SCAN_ASSIGN(d.pad_before, s.Int("p" + a));
    d.pad_after = d.pad_before;
  }
  d.dilation = 1;
  if (s.AtKey("d" + a)) SCAN_ASSIGN(d.dilation, s.Int("d" + a));
  return absl::OkStatus();
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

constexpr double kInf = std::numeric_limits<double>::infinity();

// The common tail of every Parse: the descriptor must validate, and errors
// name the string being parsed.
template <typename Desc>
absl::StatusOr<Desc> Finish(Scanner& s, Desc desc) {
  SCAN_CHECK(s.End());
  absl::Status status = desc.Validate();
  if (!status.ok()) return s.Error(status.message());
  return desc;
}

absl::string_view PoolAlgorithmName(PoolAlgorithm algorithm) {
  switch (algorithm) {
    case PoolAlgorithm::kMax: return "max";
    case PoolAlgorithm::kAvg: return "avg";
    case PoolAlgorithm::kAvgExcludePad: return "avgx";
  }
  return "max";
}

}  // namespace

// ---------------------------------------------------------------- windows

bool WindowDim::operator==(const WindowDim& o) const {
  return in == o.in && out == o.out && kernel == o.kernel && stride == o.stride &&
         pad_before == o.pad_before && pad_after == o.pad_after && dilation == o.dilation;
}

absl::StatusOr<WindowDim> MakeWindowDim(int64_t in, int64_t kernel, int64_t stride,
                                        Padding padding, int64_t dilation, int64_t pad_before,
                                        int64_t pad_after) {
  if (in < 1 || kernel < 1 || stride < 1 || dilation < 1)
    return absl::InvalidArgumentError(absl::StrCat(
        "window sizes must be positive: input ", in, ", kernel ", kernel, ", stride ", stride,
        ", dilation ", dilation));
  WindowDim d;
  d.in = in;
  d.kernel = kernel;
  d.stride = stride;
  d.dilation = dilation;
  const int64_t span = (kernel - 1) * dilation + 1;  // the dilated kernel's extent
  switch (padding) {
    case Padding::kSame: {
      d.out = (in + stride - 1) / stride;
      int64_t total = std::max<int64_t>((d.out - 1) * stride + span - in, 0);
      d.pad_before = total / 2;  // TensorFlow puts the odd element after
      d.pad_after = total - d.pad_before;
      return d;
    }
    case Padding::kValid:
      if (span > in)
        return absl::InvalidArgumentError(absl::StrCat(
            "window does not fit: kernel ", kernel, " (extent ", span, " with dilation ",
            dilation, ") is larger than input ", in, " with VALID padding"));
      d.out = (in - span) / stride + 1;  // == ceil((in - span + 1) / stride)
      return d;
    case Padding::kExplicit:
      if (pad_before < 0 || pad_after < 0)
        return absl::InvalidArgumentError(absl::StrCat(
            "padding must be non-negative, got ", pad_before, " and ", pad_after));
      if (in + pad_before + pad_after < span)
        return absl::InvalidArgumentError(absl::StrCat(
            "window does not fit: kernel extent ", span, " is larger than padded input ", in,
            "+", pad_before, "+", pad_after));
      d.pad_before = pad_before;
      d.pad_after = pad_after;
      d.out = (in + pad_before + pad_after - span) / stride + 1;
      return d;
  }
  return absl::InvalidArgumentError("unknown padding");
}

// ---------------------------------------------------------------- conv

double ConvDesc::ForwardFlops() const {
  return 2.0 * n * k * h.out * w.out * (c / groups) * h.kernel * w.kernel;
}

absl::Status ConvDesc::Validate() const {
  SCAN_CHECK(CheckPositive("mb", n));
  SCAN_CHECK(CheckPositive("ic", c));
  SCAN_CHECK(CheckPositive("oc", k));
  SCAN_CHECK(CheckPositive("g", groups));
  if (c % groups != 0 || k % groups != 0)
    return absl::InvalidArgumentError(absl::StrCat("groups ", groups,
                                                   " must divide both ic ", c, " and oc ", k));
  SCAN_CHECK(CheckWindow(h, 'h'));
  SCAN_CHECK(CheckWindow(w, 'w'));
  return absl::OkStatus();
}

std::string ConvDesc::ToString() const {
  std::string out = absl::StrCat("conv:mb", n);
  if (groups != 1) absl::StrAppend(&out, "_g", groups);
  absl::StrAppend(&out, "_ic", c, "oc", k, "_", WindowToString(h, 'h'), "_",
                  WindowToString(w, 'w'));
  if (bias) absl::StrAppend(&out, "_bias");
  return out;
}

absl::StatusOr<ConvDesc> ConvDesc::Parse(absl::string_view text) {
  Scanner s(text);
  ConvDesc d;
  SCAN_CHECK(s.Expect("conv:"));
  SCAN_ASSIGN(d.n, s.Int("mb"));
  SCAN_CHECK(s.Expect("_"));
  d.groups = 1;
  if (s.AtKey("g")) {
    SCAN_ASSIGN(d.groups, s.Int("g"));
    SCAN_CHECK(s.Expect("_"));
  }
  SCAN_ASSIGN(d.c, s.Int("ic"));
  SCAN_ASSIGN(d.k, s.Int("oc"));
  SCAN_CHECK(s.Expect("_"));
  SCAN_CHECK(ParseWindow(s, 'h', d.h));
  SCAN_CHECK(s.Expect("_"));
  SCAN_CHECK(ParseWindow(s, 'w', d.w));
  d.bias = s.TryConsume("_bias");
  return Finish(s, d);
}

bool ConvDesc::operator==(const ConvDesc& o) const {
  return n == o.n && c == o.c && k == o.k && groups == o.groups && h == o.h && w == o.w &&
         bias == o.bias;
}

// ---------------------------------------------------------------- pool

absl::Status PoolDesc::Validate() const {
  SCAN_CHECK(CheckPositive("mb", n));
  SCAN_CHECK(CheckPositive("ic", c));
  SCAN_CHECK(CheckWindow(h, 'h'));
  SCAN_CHECK(CheckWindow(w, 'w'));
  for (const WindowDim* d : {&h, &w}) {
    const char axis = d == &h ? 'h' : 'w';
    if (d->dilation != 1)
      return absl::InvalidArgumentError(
          absl::StrCat("pooling has no dilation (d", std::string(1, axis), d->dilation, ")"));
    // A window lying wholly in the padding has no input to take a max or an
    // average of.
    if (d->pad_before >= d->kernel || d->pad_after >= d->kernel)
      return absl::InvalidArgumentError(absl::StrCat(
          "axis ", std::string(1, axis), ": padding ", d->pad_before, "/", d->pad_after,
          " must be smaller than the kernel ", d->kernel));
  }
  return absl::OkStatus();
}

std::string PoolDesc::ToString() const {
  return absl::StrCat("pool:", PoolAlgorithmName(algorithm), "_mb", n, "ic", c, "_",
                      WindowToString(h, 'h'), "_", WindowToString(w, 'w'));
}

absl::StatusOr<PoolDesc> PoolDesc::Parse(absl::string_view text) {
  Scanner s(text);
  PoolDesc d;
  SCAN_CHECK(s.Expect("pool:"));
  // "avgx" before "avg": the longer name wins.
  if (s.TryConsume("max_")) {
    d.algorithm = PoolAlgorithm::kMax;
  } else if (s.TryConsume("avgx_")) {
    d.algorithm = PoolAlgorithm::kAvgExcludePad;
  } else if (s.TryConsume("avg_")) {
    d.algorithm = PoolAlgorithm::kAvg;
  } else {
    return s.Error("unknown pooling algorithm (known: max, avg, avgx)");
  }
  SCAN_ASSIGN(d.n, s.Int("mb"));
  SCAN_ASSIGN(d.c, s.Int("ic"));
  SCAN_CHECK(s.Expect("_"));
  SCAN_CHECK(ParseWindow(s, 'h', d.h));
  SCAN_CHECK(s.Expect("_"));
  SCAN_CHECK(ParseWindow(s, 'w', d.w));
  return Finish(s, d);
}

bool PoolDesc::operator==(const PoolDesc& o) const {
  return algorithm == o.algorithm && n == o.n && c == o.c && h == o.h && w == o.w;
}

// ---------------------------------------------------------------- gemm

absl::Status GemmDesc::Validate() const {
  SCAN_CHECK(CheckPositive("m", m));
  SCAN_CHECK(CheckPositive("n", n));
  SCAN_CHECK(CheckPositive("k", k));
  return absl::OkStatus();
}

std::string GemmDesc::ToString() const {
  return absl::StrCat("gemm:m", m, "n", n, "k", k, transpose_a ? "_ta" : "",
                      transpose_b ? "_tb" : "");
}

absl::StatusOr<GemmDesc> GemmDesc::Parse(absl::string_view text) {
  Scanner s(text);
  GemmDesc d;
  SCAN_CHECK(s.Expect("gemm:"));
  SCAN_ASSIGN(d.m, s.Int("m"));
  SCAN_ASSIGN(d.n, s.Int("n"));
  SCAN_ASSIGN(d.k, s.Int("k"));
  d.transpose_a = s.TryConsume("_ta");
  d.transpose_b = s.TryConsume("_tb");
  return Finish(s, d);
}

bool GemmDesc::operator==(const GemmDesc& o) const {
  return m == o.m && n == o.n && k == o.k && transpose_a == o.transpose_a &&
         transpose_b == o.transpose_b;
}

// ---------------------------------------------------------------- fc

absl::Status FcDesc::Validate() const {
  SCAN_CHECK(CheckPositive("mb", n));
  SCAN_CHECK(CheckPositive("ic", ic));
  SCAN_CHECK(CheckPositive("oc", oc));
  return absl::OkStatus();
}

std::string FcDesc::ToString() const {
  return absl::StrCat("fc:mb", n, "ic", ic, "oc", oc, bias ? "" : "_nobias");
}

absl::StatusOr<FcDesc> FcDesc::Parse(absl::string_view text) {
  Scanner s(text);
  FcDesc d;
  SCAN_CHECK(s.Expect("fc:"));
  SCAN_ASSIGN(d.n, s.Int("mb"));
  SCAN_ASSIGN(d.ic, s.Int("ic"));
  SCAN_ASSIGN(d.oc, s.Int("oc"));
  d.bias = !s.TryConsume("_nobias");
  return Finish(s, d);
}

bool FcDesc::operator==(const FcDesc& o) const {
  return n == o.n && ic == o.ic && oc == o.oc && bias == o.bias;
}

// ---------------------------------------------------------------- bn

absl::Status BatchNormDesc::Validate() const {
  SCAN_CHECK(CheckDims(dims));
  SCAN_CHECK(CheckReal("eps", epsilon, 0, kInf, /*low_open=*/true, /*high_open=*/true));
  SCAN_CHECK(CheckReal("mom", momentum, 0, 1, false, false));
  return absl::OkStatus();
}

std::string BatchNormDesc::ToString() const {
  return absl::StrCat("bn:", DimsToString(dims), "_eps", FormatReal(epsilon), "mom",
                      FormatReal(momentum), scale ? "" : "_noscale", relu ? "_relu" : "");
}

absl::StatusOr<BatchNormDesc> BatchNormDesc::Parse(absl::string_view text) {
  Scanner s(text);
  BatchNormDesc d;
  SCAN_CHECK(s.Expect("bn:"));
  SCAN_CHECK(ParseDims(s, d.dims));
  SCAN_CHECK(s.Expect("_"));
  SCAN_ASSIGN(d.epsilon, s.Real("eps"));
  SCAN_ASSIGN(d.momentum, s.Real("mom"));
  d.scale = !s.TryConsume("_noscale");
  d.relu = s.TryConsume("_relu");
  return Finish(s, d);
}

bool BatchNormDesc::operator==(const BatchNormDesc& o) const {
  return dims == o.dims && epsilon == o.epsilon && momentum == o.momentum && scale == o.scale &&
         relu == o.relu;
}

// ---------------------------------------------------------------- relu

absl::Status ReluDesc::Validate() const { return CheckDims(dims); }

std::string ReluDesc::ToString() const { return absl::StrCat("relu:", DimsToString(dims)); }

absl::StatusOr<ReluDesc> ReluDesc::Parse(absl::string_view text) {
  Scanner s(text);
  ReluDesc d;
  SCAN_CHECK(s.Expect("relu:"));
  SCAN_CHECK(ParseDims(s, d.dims));
  return Finish(s, d);
}

// ---------------------------------------------------------------- lrn

absl::Status LrnDesc::Validate() const {
  SCAN_CHECK(CheckDims(dims));
  if (depth_radius < 0)
    return absl::InvalidArgumentError(
        absl::StrCat("field 'r' must be non-negative, got ", depth_radius));
  // bias > 0 keeps the denominator away from 0^-beta on zero inputs.
  SCAN_CHECK(CheckReal("k", bias, 0, kInf, true, true));
  SCAN_CHECK(CheckReal("a", alpha, 0, kInf, false, true));
  SCAN_CHECK(CheckReal("b", beta, 0, kInf, false, true));
  return absl::OkStatus();
}

std::string LrnDesc::ToString() const {
  return absl::StrCat("lrn:", DimsToString(dims), "_r", depth_radius, "k", FormatReal(bias), "a",
                      FormatReal(alpha), "b", FormatReal(beta));
}

absl::StatusOr<LrnDesc> LrnDesc::Parse(absl::string_view text) {
  Scanner s(text);
  LrnDesc d;
  SCAN_CHECK(s.Expect("lrn:"));
  SCAN_CHECK(ParseDims(s, d.dims));
  SCAN_CHECK(s.Expect("_"));
  SCAN_ASSIGN(d.depth_radius, s.Int("r"));
  SCAN_ASSIGN(d.bias, s.Real("k"));
  SCAN_ASSIGN(d.alpha, s.Real("a"));
  SCAN_ASSIGN(d.beta, s.Real("b"));
  return Finish(s, d);
}

bool LrnDesc::operator==(const LrnDesc& o) const {
  return dims == o.dims && depth_radius == o.depth_radius && bias == o.bias &&
         alpha == o.alpha && beta == o.beta;
}

// ---------------------------------------------------------------- dropout

absl::Status DropoutDesc::Validate() const {
  SCAN_CHECK(CheckDims(dims));
  SCAN_CHECK(CheckReal("p", rate, 0, 1, false, true));  // rate 1 would scale by 1/0
  return absl::OkStatus();
}

std::string DropoutDesc::ToString() const {
  return absl::StrCat("dropout:", DimsToString(dims), "_p", FormatReal(rate));
}

absl::StatusOr<DropoutDesc> DropoutDesc::Parse(absl::string_view text) {
  Scanner s(text);
  DropoutDesc d;
  SCAN_CHECK(s.Expect("dropout:"));
  SCAN_CHECK(ParseDims(s, d.dims));
  SCAN_CHECK(s.Expect("_"));
  SCAN_ASSIGN(d.rate, s.Real("p"));
  return Finish(s, d);
}

bool DropoutDesc::operator==(const DropoutDesc& o) const {
  return dims == o.dims && rate == o.rate;
}

// ---------------------------------------------------------------- concat

Dims4 ConcatDesc::output() const {
  int64_t total = 0;
  for (int64_t c : channels) total += c;
  return {n, total, h, w};
}

absl::Status ConcatDesc::Validate() const {
  SCAN_CHECK(CheckPositive("mb", n));
  SCAN_CHECK(CheckPositive("ih", h));
  SCAN_CHECK(CheckPositive("iw", w));
  if (channels.empty()) return absl::InvalidArgumentError("concat needs at least one input");
  for (size_t i = 0; i < channels.size(); ++i)
    if (channels[i] < 1)
      return absl::InvalidArgumentError(
          absl::StrCat("field 'ic' of input ", i, " must be positive, got ", channels[i]));
  return absl::OkStatus();
}

std::string ConcatDesc::ToString() const {
  return absl::StrCat("concat:mb", n, "ih", h, "iw", w, "_ic", absl::StrJoin(channels, ":"));
}

absl::StatusOr<ConcatDesc> ConcatDesc::Parse(absl::string_view text) {
  Scanner s(text);
  ConcatDesc d;
  SCAN_CHECK(s.Expect("concat:"));
  SCAN_ASSIGN(d.n, s.Int("mb"));
  SCAN_ASSIGN(d.h, s.Int("ih"));
  SCAN_ASSIGN(d.w, s.Int("iw"));
  SCAN_CHECK(s.Expect("_"));
  if (s.AtEnd() || !s.AtKey("ic")) return s.Error("concat needs at least one input ('_ic<c>')");
  int64_t c;
  SCAN_ASSIGN(c, s.Int("ic"));
  d.channels.push_back(c);
  while (s.TryConsume(":")) {
    SCAN_ASSIGN(c, s.Number("ic"));
    d.channels.push_back(c);
  }
  return Finish(s, d);
}

bool ConcatDesc::operator==(const ConcatDesc& o) const {
  return n == o.n && h == o.h && w == o.w && channels == o.channels;
}

// ---------------------------------------------------------------- add

absl::Status AddDesc::Validate() const { return CheckDims(dims); }

std::string AddDesc::ToString() const {
  return absl::StrCat("add:", DimsToString(dims), relu ? "_relu" : "");
}

absl::StatusOr<AddDesc> AddDesc::Parse(absl::string_view text) {
  Scanner s(text);
  AddDesc d;
  SCAN_CHECK(s.Expect("add:"));
  SCAN_CHECK(ParseDims(s, d.dims));
  d.relu = s.TryConsume("_relu");
  return Finish(s, d);
}

// ---------------------------------------------------------------- softmax_xent

absl::Status SoftmaxXentDesc::Validate() const {
  SCAN_CHECK(CheckPositive("mb", n));
  SCAN_CHECK(CheckPositive("ic", classes));
  return absl::OkStatus();
}

std::string SoftmaxXentDesc::ToString() const {
  return absl::StrCat("softmax_xent:mb", n, "ic", classes);
}

absl::StatusOr<SoftmaxXentDesc> SoftmaxXentDesc::Parse(absl::string_view text) {
  Scanner s(text);
  SoftmaxXentDesc d;
  SCAN_CHECK(s.Expect("softmax_xent:"));
  SCAN_ASSIGN(d.n, s.Int("mb"));
  SCAN_ASSIGN(d.classes, s.Int("ic"));
  return Finish(s, d);
}

// ---------------------------------------------------------------- sgd

absl::Status SgdDesc::Validate() const {
  SCAN_CHECK(CheckPositive("n", count));
  SCAN_CHECK(CheckReal("lr", learning_rate, 0, kInf, false, true));
  SCAN_CHECK(CheckReal("m", momentum, 0, kInf, false, true));
  SCAN_CHECK(CheckReal("wd", weight_decay, 0, kInf, false, true));
  return absl::OkStatus();
}

std::string SgdDesc::ToString() const {
  return absl::StrCat("sgd:n", count, "_lr", FormatReal(learning_rate), "m",
                      FormatReal(momentum), "wd", FormatReal(weight_decay));
}

absl::StatusOr<SgdDesc> SgdDesc::Parse(absl::string_view text) {
  Scanner s(text);
  SgdDesc d;
  SCAN_CHECK(s.Expect("sgd:"));
  SCAN_ASSIGN(d.count, s.Int("n"));
  SCAN_CHECK(s.Expect("_"));
  SCAN_ASSIGN(d.learning_rate, s.Real("lr"));
  SCAN_ASSIGN(d.momentum, s.Real("m"));
  SCAN_ASSIGN(d.weight_decay, s.Real("wd"));
  return Finish(s, d);
}

bool SgdDesc::operator==(const SgdDesc& o) const {
  return count == o.count && learning_rate == o.learning_rate && momentum == o.momentum &&
         weight_decay == o.weight_decay;
}

#undef SCAN_ASSIGN
#undef SCAN_CHECK

}  // namespace cnnbench
