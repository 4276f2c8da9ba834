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
#include "kernels/desc_text.h"

namespace cnnbench {

using desc_text::CheckDims;
using desc_text::CheckPositive;
using desc_text::CheckReal;
using desc_text::CheckWindow;
using desc_text::DimsToString;
using desc_text::Finish;
using desc_text::FormatReal;
using desc_text::kInf;
using desc_text::ParseDims;
using desc_text::ParseWindows;
using desc_text::PoolAlgorithmName;
using desc_text::Scanner;
using desc_text::WindowToString;

// ---------------------------------------------------------------- windows

bool WindowDim::operator==(const WindowDim& o) const {
  return in == o.in && out == o.out && kernel == o.kernel && stride == o.stride &&
         pad_before == o.pad_before && pad_after == o.pad_after && dilation == o.dilation;
}

absl::StatusOr<WindowDim> MakeWindowDim(int64_t in, int64_t kernel, int64_t stride, Padding padding,
                                        int64_t dilation, int64_t pad_before, int64_t pad_after) {
  if (in < 1 || kernel < 1 || stride < 1 || dilation < 1)
    return absl::InvalidArgumentError(absl::StrCat("window sizes must be positive: input ", in,
                                                   ", kernel ", kernel, ", stride ", stride,
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
            "window does not fit: kernel ", kernel, " (extent ", span, " with dilation ", dilation,
            ") is larger than input ", in, " with VALID padding"));
      d.out = (in - span) / stride + 1;  // == ceil((in - span + 1) / stride)
      return d;
    case Padding::kExplicit:
      if (pad_before < 0 || pad_after < 0)
        return absl::InvalidArgumentError(
            absl::StrCat("padding must be non-negative, got ", pad_before, " and ", pad_after));
      if (in + pad_before + pad_after < span)
        return absl::InvalidArgumentError(absl::StrCat("window does not fit: kernel extent ", span,
                                                       " is larger than padded input ", in, "+",
                                                       pad_before, "+", pad_after));
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
  RETURN_IF_ERROR_AS_IS(CheckPositive("mb", n));
  RETURN_IF_ERROR_AS_IS(CheckPositive("ic", c));
  RETURN_IF_ERROR_AS_IS(CheckPositive("oc", k));
  RETURN_IF_ERROR_AS_IS(CheckPositive("g", groups));
  if (c % groups != 0 || k % groups != 0)
    return absl::InvalidArgumentError(
        absl::StrCat("groups ", groups, " must divide both ic ", c, " and oc ", k));
  RETURN_IF_ERROR_AS_IS(CheckWindow(h, 'h'));
  RETURN_IF_ERROR_AS_IS(CheckWindow(w, 'w'));
  return absl::OkStatus();
}

std::string ConvDesc::ToString() const {
  std::string out = absl::StrCat("conv:mb", n);
  if (groups != 1) absl::StrAppend(&out, "_g", groups);
  absl::StrAppend(&out, "_ic", c, "oc", k, "_", WindowToString(h, 'h'), "_",
                  WindowToString(w, 'w'));
  if (bias) absl::StrAppend(&out, "_bias");
  if (residual) absl::StrAppend(&out, "_add");
  absl::StrAppend(&out, ActivationSuffix(activation));
  return out;
}

absl::StatusOr<ConvDesc> ConvDesc::Parse(absl::string_view text) {
  Scanner s(text);
  ConvDesc d;
  RETURN_IF_ERROR_AS_IS(s.Expect("conv:"));
  ASSIGN_OR_RETURN_AS_IS(d.n, s.Int("mb"));
  RETURN_IF_ERROR_AS_IS(s.Expect("_"));
  d.groups = 1;
  if (s.AtKey("g")) {
    ASSIGN_OR_RETURN_AS_IS(d.groups, s.Int("g"));
    RETURN_IF_ERROR_AS_IS(s.Expect("_"));
  }
  ASSIGN_OR_RETURN_AS_IS(d.c, s.Int("ic"));
  ASSIGN_OR_RETURN_AS_IS(d.k, s.Int("oc"));
  RETURN_IF_ERROR_AS_IS(ParseWindows(s, d.h, d.w));
  d.bias = s.TryConsume("_bias");
  d.residual = s.TryConsume("_add");
  d.activation = ParseActivationSuffix(s);
  return Finish(s, d);
}

bool ConvDesc::operator==(const ConvDesc& o) const {
  return n == o.n && c == o.c && k == o.k && groups == o.groups && h == o.h && w == o.w &&
         bias == o.bias && residual == o.residual && activation == o.activation;
}

// ---------------------------------------------------------------- pool

absl::Status PoolDesc::Validate() const {
  RETURN_IF_ERROR_AS_IS(CheckPositive("mb", n));
  RETURN_IF_ERROR_AS_IS(CheckPositive("ic", c));
  RETURN_IF_ERROR_AS_IS(CheckWindow(h, 'h'));
  RETURN_IF_ERROR_AS_IS(CheckWindow(w, 'w'));
  for (const WindowDim* d : {&h, &w}) {
    const char axis = d == &h ? 'h' : 'w';
    if (d->dilation != 1)
      return absl::InvalidArgumentError(
          absl::StrCat("pooling has no dilation (d", std::string(1, axis), d->dilation, ")"));
    // A window lying wholly in the padding has no input to take a max or an
    // average of.
    if (d->pad_before >= d->kernel || d->pad_after >= d->kernel)
      return absl::InvalidArgumentError(
          absl::StrCat("axis ", std::string(1, axis), ": padding ", d->pad_before, "/",
                       d->pad_after, " must be smaller than the kernel ", d->kernel));
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
  RETURN_IF_ERROR_AS_IS(s.Expect("pool:"));
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
  ASSIGN_OR_RETURN_AS_IS(d.n, s.Int("mb"));
  ASSIGN_OR_RETURN_AS_IS(d.c, s.Int("ic"));
  RETURN_IF_ERROR_AS_IS(ParseWindows(s, d.h, d.w));
  return Finish(s, d);
}

bool PoolDesc::operator==(const PoolDesc& o) const {
  return algorithm == o.algorithm && n == o.n && c == o.c && h == o.h && w == o.w;
}

// ---------------------------------------------------------------- gemm

absl::Status GemmDesc::Validate() const {
  RETURN_IF_ERROR_AS_IS(CheckPositive("m", m));
  RETURN_IF_ERROR_AS_IS(CheckPositive("n", n));
  RETURN_IF_ERROR_AS_IS(CheckPositive("k", k));
  return absl::OkStatus();
}

std::string GemmDesc::ToString() const {
  return absl::StrCat("gemm:m", m, "n", n, "k", k, transpose_a ? "_ta" : "",
                      transpose_b ? "_tb" : "");
}

absl::StatusOr<GemmDesc> GemmDesc::Parse(absl::string_view text) {
  Scanner s(text);
  GemmDesc d;
  RETURN_IF_ERROR_AS_IS(s.Expect("gemm:"));
  ASSIGN_OR_RETURN_AS_IS(d.m, s.Int("m"));
  ASSIGN_OR_RETURN_AS_IS(d.n, s.Int("n"));
  ASSIGN_OR_RETURN_AS_IS(d.k, s.Int("k"));
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
  RETURN_IF_ERROR_AS_IS(CheckPositive("mb", n));
  RETURN_IF_ERROR_AS_IS(CheckPositive("ic", ic));
  RETURN_IF_ERROR_AS_IS(CheckPositive("oc", oc));
  return absl::OkStatus();
}

std::string FcDesc::ToString() const {
  return absl::StrCat("fc:mb", n, "ic", ic, "oc", oc, bias ? "" : "_nobias");
}

absl::StatusOr<FcDesc> FcDesc::Parse(absl::string_view text) {
  Scanner s(text);
  FcDesc d;
  RETURN_IF_ERROR_AS_IS(s.Expect("fc:"));
  ASSIGN_OR_RETURN_AS_IS(d.n, s.Int("mb"));
  ASSIGN_OR_RETURN_AS_IS(d.ic, s.Int("ic"));
  ASSIGN_OR_RETURN_AS_IS(d.oc, s.Int("oc"));
  d.bias = !s.TryConsume("_nobias");
  return Finish(s, d);
}

bool FcDesc::operator==(const FcDesc& o) const {
  return n == o.n && ic == o.ic && oc == o.oc && bias == o.bias;
}

// ---------------------------------------------------------------- bn

absl::Status BatchNormDesc::Validate() const {
  RETURN_IF_ERROR_AS_IS(CheckDims(dims));
  RETURN_IF_ERROR_AS_IS(CheckReal("eps", epsilon, 0, kInf, /*low_open=*/true, /*high_open=*/true));
  RETURN_IF_ERROR_AS_IS(CheckReal("mom", momentum, 0, 1, false, false));
  return absl::OkStatus();
}

std::string BatchNormDesc::ToString() const {
  return absl::StrCat("bn:", DimsToString(dims), "_eps", FormatReal(epsilon), "mom",
                      FormatReal(momentum), scale ? "" : "_noscale", ActivationSuffix(activation));
}

absl::StatusOr<BatchNormDesc> BatchNormDesc::Parse(absl::string_view text) {
  Scanner s(text);
  BatchNormDesc d;
  RETURN_IF_ERROR_AS_IS(s.Expect("bn:"));
  RETURN_IF_ERROR_AS_IS(ParseDims(s, d.dims));
  RETURN_IF_ERROR_AS_IS(s.Expect("_"));
  ASSIGN_OR_RETURN_AS_IS(d.epsilon, s.Real("eps"));
  ASSIGN_OR_RETURN_AS_IS(d.momentum, s.Real("mom"));
  d.scale = !s.TryConsume("_noscale");
  d.activation = ParseActivationSuffix(s);
  return Finish(s, d);
}

bool BatchNormDesc::operator==(const BatchNormDesc& o) const {
  return dims == o.dims && epsilon == o.epsilon && momentum == o.momentum && scale == o.scale &&
         activation == o.activation;
}

// ---------------------------------------------------------------- relu

absl::Status ReluDesc::Validate() const {
  if (kind == ActivationKind::kNone || kind == ActivationKind::kCount)
    return absl::InvalidArgumentError("the activation op needs an activation kind");
  return CheckDims(dims);
}

std::string ReluDesc::ToString() const {
  return absl::StrCat("relu:", DimsToString(dims),
                      kind == ActivationKind::kRelu ? "" : ActivationSuffix(kind));
}

absl::StatusOr<ReluDesc> ReluDesc::Parse(absl::string_view text) {
  Scanner s(text);
  ReluDesc d;
  RETURN_IF_ERROR_AS_IS(s.Expect("relu:"));
  RETURN_IF_ERROR_AS_IS(ParseDims(s, d.dims));
  // ReLU's own suffix is not its canonical form (it prints none).
  if (s.AtEnd()) return Finish(s, d);
  d.kind = ParseActivationSuffix(s);
  if (d.kind == ActivationKind::kNone || d.kind == ActivationKind::kRelu)
    return s.Error(
        "expected an activation other than ReLU ('_relu6', '_sigmoid', '_silu', '_hardsigmoid', "
        "'_hardswish', '_gelu', '_gelu_tanh') or the end");
  return Finish(s, d);
}

// ---------------------------------------------------------------- lrn

absl::Status LrnDesc::Validate() const {
  RETURN_IF_ERROR_AS_IS(CheckDims(dims));
  if (depth_radius < 0)
    return absl::InvalidArgumentError(
        absl::StrCat("field 'r' must be non-negative, got ", depth_radius));
  // bias > 0 keeps the denominator away from 0^-beta on zero inputs.
  RETURN_IF_ERROR_AS_IS(CheckReal("k", bias, 0, kInf, true, true));
  RETURN_IF_ERROR_AS_IS(CheckReal("a", alpha, 0, kInf, false, true));
  RETURN_IF_ERROR_AS_IS(CheckReal("b", beta, 0, kInf, false, true));
  return absl::OkStatus();
}

std::string LrnDesc::ToString() const {
  return absl::StrCat("lrn:", DimsToString(dims), "_r", depth_radius, "k", FormatReal(bias), "a",
                      FormatReal(alpha), "b", FormatReal(beta));
}

absl::StatusOr<LrnDesc> LrnDesc::Parse(absl::string_view text) {
  Scanner s(text);
  LrnDesc d;
  RETURN_IF_ERROR_AS_IS(s.Expect("lrn:"));
  RETURN_IF_ERROR_AS_IS(ParseDims(s, d.dims));
  RETURN_IF_ERROR_AS_IS(s.Expect("_"));
  ASSIGN_OR_RETURN_AS_IS(d.depth_radius, s.Int("r"));
  ASSIGN_OR_RETURN_AS_IS(d.bias, s.Real("k"));
  ASSIGN_OR_RETURN_AS_IS(d.alpha, s.Real("a"));
  ASSIGN_OR_RETURN_AS_IS(d.beta, s.Real("b"));
  return Finish(s, d);
}

bool LrnDesc::operator==(const LrnDesc& o) const {
  return dims == o.dims && depth_radius == o.depth_radius && bias == o.bias && alpha == o.alpha &&
         beta == o.beta;
}

// ---------------------------------------------------------------- dropout

absl::Status DropoutDesc::Validate() const {
  RETURN_IF_ERROR_AS_IS(CheckDims(dims));
  RETURN_IF_ERROR_AS_IS(CheckReal("p", rate, 0, 1, false, true));  // rate 1 would scale by 1/0
  return absl::OkStatus();
}

std::string DropoutDesc::ToString() const {
  return absl::StrCat("dropout:", DimsToString(dims), "_p", FormatReal(rate));
}

absl::StatusOr<DropoutDesc> DropoutDesc::Parse(absl::string_view text) {
  Scanner s(text);
  DropoutDesc d;
  RETURN_IF_ERROR_AS_IS(s.Expect("dropout:"));
  RETURN_IF_ERROR_AS_IS(ParseDims(s, d.dims));
  RETURN_IF_ERROR_AS_IS(s.Expect("_"));
  ASSIGN_OR_RETURN_AS_IS(d.rate, s.Real("p"));
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
  RETURN_IF_ERROR_AS_IS(CheckPositive("mb", n));
  RETURN_IF_ERROR_AS_IS(CheckPositive("ih", h));
  RETURN_IF_ERROR_AS_IS(CheckPositive("iw", w));
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
  RETURN_IF_ERROR_AS_IS(s.Expect("concat:"));
  ASSIGN_OR_RETURN_AS_IS(d.n, s.Int("mb"));
  ASSIGN_OR_RETURN_AS_IS(d.h, s.Int("ih"));
  ASSIGN_OR_RETURN_AS_IS(d.w, s.Int("iw"));
  RETURN_IF_ERROR_AS_IS(s.Expect("_"));
  if (s.AtEnd() || !s.AtKey("ic")) return s.Error("concat needs at least one input ('_ic<c>')");
  int64_t c;
  ASSIGN_OR_RETURN_AS_IS(c, s.Int("ic"));
  d.channels.push_back(c);
  while (s.TryConsume(":")) {
    ASSIGN_OR_RETURN_AS_IS(c, s.Number("ic"));
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
  return absl::StrCat("add:", DimsToString(dims), ActivationSuffix(activation));
}

absl::StatusOr<AddDesc> AddDesc::Parse(absl::string_view text) {
  Scanner s(text);
  AddDesc d;
  RETURN_IF_ERROR_AS_IS(s.Expect("add:"));
  RETURN_IF_ERROR_AS_IS(ParseDims(s, d.dims));
  d.activation = ParseActivationSuffix(s);
  return Finish(s, d);
}

// ---------------------------------------------------------------- chpad

absl::Status ChannelPadDesc::Validate() const {
  RETURN_IF_ERROR_AS_IS(CheckDims(dims));
  if (before < 0 || after < 0)
    return absl::InvalidArgumentError(
        absl::StrCat("fields 'b' and 'a' (channels before and after) must be >= 0, got ", before,
                     " and ", after));
  return absl::OkStatus();
}

std::string ChannelPadDesc::ToString() const {
  return absl::StrCat("chpad:", DimsToString(dims), "_b", before, "a", after);
}

absl::StatusOr<ChannelPadDesc> ChannelPadDesc::Parse(absl::string_view text) {
  Scanner s(text);
  ChannelPadDesc d;
  RETURN_IF_ERROR_AS_IS(s.Expect("chpad:"));
  RETURN_IF_ERROR_AS_IS(ParseDims(s, d.dims));
  RETURN_IF_ERROR_AS_IS(s.Expect("_"));
  ASSIGN_OR_RETURN_AS_IS(d.before, s.Int("b"));
  ASSIGN_OR_RETURN_AS_IS(d.after, s.Int("a"));
  return Finish(s, d);
}

// ---------------------------------------------------------------- softmax_xent

absl::Status SoftmaxXentDesc::Validate() const {
  RETURN_IF_ERROR_AS_IS(CheckPositive("mb", n));
  RETURN_IF_ERROR_AS_IS(CheckPositive("ic", classes));
  return absl::OkStatus();
}

std::string SoftmaxXentDesc::ToString() const {
  return absl::StrCat("softmax_xent:mb", n, "ic", classes);
}

absl::StatusOr<SoftmaxXentDesc> SoftmaxXentDesc::Parse(absl::string_view text) {
  Scanner s(text);
  SoftmaxXentDesc d;
  RETURN_IF_ERROR_AS_IS(s.Expect("softmax_xent:"));
  ASSIGN_OR_RETURN_AS_IS(d.n, s.Int("mb"));
  ASSIGN_OR_RETURN_AS_IS(d.classes, s.Int("ic"));
  return Finish(s, d);
}

// ---------------------------------------------------------------- sgd

absl::Status SgdDesc::Validate() const {
  RETURN_IF_ERROR_AS_IS(CheckPositive("n", count));
  RETURN_IF_ERROR_AS_IS(CheckReal("lr", learning_rate, 0, kInf, false, true));
  RETURN_IF_ERROR_AS_IS(CheckReal("m", momentum, 0, kInf, false, true));
  RETURN_IF_ERROR_AS_IS(CheckReal("wd", weight_decay, 0, kInf, false, true));
  return absl::OkStatus();
}

std::string SgdDesc::ToString() const {
  return absl::StrCat("sgd:n", count, "_lr", FormatReal(learning_rate), "m", FormatReal(momentum),
                      "wd", FormatReal(weight_decay));
}

absl::StatusOr<SgdDesc> SgdDesc::Parse(absl::string_view text) {
  Scanner s(text);
  SgdDesc d;
  RETURN_IF_ERROR_AS_IS(s.Expect("sgd:"));
  ASSIGN_OR_RETURN_AS_IS(d.count, s.Int("n"));
  RETURN_IF_ERROR_AS_IS(s.Expect("_"));
  ASSIGN_OR_RETURN_AS_IS(d.learning_rate, s.Real("lr"));
  ASSIGN_OR_RETURN_AS_IS(d.momentum, s.Real("m"));
  ASSIGN_OR_RETURN_AS_IS(d.weight_decay, s.Real("wd"));
  return Finish(s, d);
}

bool SgdDesc::operator==(const SgdDesc& o) const {
  return count == o.count && learning_rate == o.learning_rate && momentum == o.momentum &&
         weight_decay == o.weight_decay;
}

#undef SCAN_ASSIGN
#undef SCAN_CHECK

}  // namespace cnnbench
