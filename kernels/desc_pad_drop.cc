// The spatial pad (spad:), drop-path (droppath:), channel multiply (chmul:)
// and layer norm (lnorm:) descriptors: validation and their canonical strings (kept beside desc.cc so neither file grows
// past the size limit).
#include "absl/strings/str_cat.h"
#include "kernels/desc.h"
#include "kernels/desc_text.h"

namespace cnnbench {

using desc_text::CheckDims;
using desc_text::CheckReal;
using desc_text::DimsToString;
using desc_text::Finish;
using desc_text::FormatReal;
using desc_text::ParseDims;
using desc_text::Scanner;

namespace {

// `key`, then an optional '-', then a decimal integer.
absl::StatusOr<int64_t> SignedInt(Scanner& s, absl::string_view key) {
  RETURN_IF_ERROR_AS_IS(s.Expect(key));
  const bool negative = s.TryConsume("-");
  absl::StatusOr<int64_t> value = s.Number(key);
  if (!value.ok()) return value.status();
  return negative ? -*value : *value;
}

}  // namespace

// ---------------------------------------------------------------- spad

absl::Status SpatialPadDesc::Validate() const {
  RETURN_IF_ERROR_AS_IS(CheckDims(dims));
  const Dims4 out = output();
  if (out.h < 1 || out.w < 1)
    return absl::InvalidArgumentError(absl::StrCat("the crop leaves no output: ", dims.h, "x",
                                                   dims.w, " padded by t", top, "b", bottom, "l",
                                                   left, "r", right, " is ", out.h, "x", out.w));
  return absl::OkStatus();
}

std::string SpatialPadDesc::ToString() const {
  return absl::StrCat("spad:", DimsToString(dims), "_t", top, "b", bottom, "l", left, "r", right);
}

absl::StatusOr<SpatialPadDesc> SpatialPadDesc::Parse(absl::string_view text) {
  Scanner s(text);
  SpatialPadDesc d;
  RETURN_IF_ERROR_AS_IS(s.Expect("spad:"));
  RETURN_IF_ERROR_AS_IS(ParseDims(s, d.dims));
  RETURN_IF_ERROR_AS_IS(s.Expect("_"));
  ASSIGN_OR_RETURN_AS_IS(d.top, SignedInt(s, "t"));
  ASSIGN_OR_RETURN_AS_IS(d.bottom, SignedInt(s, "b"));
  ASSIGN_OR_RETURN_AS_IS(d.left, SignedInt(s, "l"));
  ASSIGN_OR_RETURN_AS_IS(d.right, SignedInt(s, "r"));
  return Finish(s, d);
}

// ---------------------------------------------------------------- droppath

absl::Status DropPathDesc::Validate() const {
  RETURN_IF_ERROR_AS_IS(CheckDims(dims));
  RETURN_IF_ERROR_AS_IS(CheckReal("k", keep, 0, 1, /*low_open=*/true, /*high_open=*/false));
  if (ramp_steps < 0)
    return absl::InvalidArgumentError(
        absl::StrCat("field 'r' (ramp steps) must be >= 0, got ", ramp_steps));
  return absl::OkStatus();
}

std::string DropPathDesc::ToString() const {
  return absl::StrCat("droppath:", DimsToString(dims), "_k", FormatReal(keep), "r", ramp_steps);
}

absl::StatusOr<DropPathDesc> DropPathDesc::Parse(absl::string_view text) {
  Scanner s(text);
  DropPathDesc d;
  RETURN_IF_ERROR_AS_IS(s.Expect("droppath:"));
  RETURN_IF_ERROR_AS_IS(ParseDims(s, d.dims));
  RETURN_IF_ERROR_AS_IS(s.Expect("_"));
  ASSIGN_OR_RETURN_AS_IS(d.keep, s.Real("k"));
  ASSIGN_OR_RETURN_AS_IS(d.ramp_steps, s.Int("r"));
  return Finish(s, d);
}

// ---------------------------------------------------------------- chmul

absl::Status ChannelMulDesc::Validate() const { return CheckDims(dims); }

bool ChannelMulDesc::IsScaleShape(const Shape& shape) const {
  if (shape.rank() == 2) return shape[0] == dims.n && shape[1] == dims.c;
  return shape.rank() == 4 && shape[0] == dims.n && shape[1] == dims.c && shape[2] == 1 &&
         shape[3] == 1;
}

std::string ChannelMulDesc::ToString() const { return absl::StrCat("chmul:", DimsToString(dims)); }

absl::StatusOr<ChannelMulDesc> ChannelMulDesc::Parse(absl::string_view text) {
  Scanner s(text);
  ChannelMulDesc d;
  RETURN_IF_ERROR_AS_IS(s.Expect("chmul:"));
  RETURN_IF_ERROR_AS_IS(ParseDims(s, d.dims));
  return Finish(s, d);
}

// ---------------------------------------------------------------- lnorm

absl::Status LayerNormDesc::Validate() const {
  RETURN_IF_ERROR_AS_IS(CheckDims(dims));
  return CheckReal("eps", epsilon, 0, desc_text::kInf, /*low_open=*/true, /*high_open=*/true);
}

std::string LayerNormDesc::ToString() const {
  return absl::StrCat("lnorm:", DimsToString(dims), "_eps", FormatReal(epsilon));
}

absl::StatusOr<LayerNormDesc> LayerNormDesc::Parse(absl::string_view text) {
  Scanner s(text);
  LayerNormDesc d;
  RETURN_IF_ERROR_AS_IS(s.Expect("lnorm:"));
  RETURN_IF_ERROR_AS_IS(ParseDims(s, d.dims));
  RETURN_IF_ERROR_AS_IS(s.Expect("_"));
  ASSIGN_OR_RETURN_AS_IS(d.epsilon, s.Real("eps"));
  return Finish(s, d);
}

}  // namespace cnnbench
