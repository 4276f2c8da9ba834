#include "core/dtype.h"

#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cnnbench {
namespace {

struct DTypeEntry {
  DType dtype;
  absl::string_view name;
  size_t size;
  bool floating;
};

constexpr DTypeEntry kDTypes[] = {
    {DType::kF32, "fp32", 4, true},   {DType::kF16, "fp16", 2, true},
    {DType::kBF16, "bf16", 2, true},  {DType::kF64, "fp64", 8, true},
    {DType::kI32, "int32", 4, false}, {DType::kI64, "int64", 8, false},
    {DType::kU8, "uint8", 1, false},
};

const DTypeEntry& Entry(DType dtype) {
  for (const auto& e : kDTypes)
    if (e.dtype == dtype) return e;
  return kDTypes[0];  // unreachable: every enumerator is listed
}

uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace

size_t SizeOf(DType dtype) { return Entry(dtype).size; }
absl::string_view DTypeName(DType dtype) { return Entry(dtype).name; }
bool IsFloating(DType dtype) { return Entry(dtype).floating; }

absl::StatusOr<DType> ParseDType(absl::string_view name) {
  std::vector<absl::string_view> known;
  for (const auto& e : kDTypes) {
    if (e.name == name) return e.dtype;
    known.push_back(e.name);
  }
  if (name == "float32" || name == "float") return DType::kF32;
  if (name == "float16" || name == "half") return DType::kF16;
  if (name == "bfloat16") return DType::kBF16;
  if (name == "float64" || name == "double") return DType::kF64;  // nccl-tests' -d double
  return absl::InvalidArgumentError(
      absl::StrCat("unknown dtype '", name, "' (known: ", absl::StrJoin(known, ", "), ")"));
}

std::string PrecisionNamesList() {
  std::string out;
  for (const PrecisionInfo& p : kPrecisions) absl::StrAppend(&out, out.empty() ? "" : ", ", p.name);
  return out;
}

absl::string_view PrecisionName(Precision precision) {
  for (const PrecisionInfo& p : kPrecisions)
    if (p.precision == precision) return p.name;
  return "?";
}

absl::StatusOr<Precision> ParsePrecision(absl::string_view name) {
  for (const PrecisionInfo& p : kPrecisions)
    if (p.name == name) return p.precision;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown precision '", name, "' (known: ", PrecisionNamesList(), ")"));
}

DType ActivationType(Precision precision) {
  for (const PrecisionInfo& p : kPrecisions)
    if (p.precision == precision) return p.activations;
  return DType::kF32;
}

Half FloatToHalf(float value) {
  const uint32_t f = FloatBits(value);
  const uint32_t sign = (f >> 16) & 0x8000u;
  const uint32_t abs = f & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // Inf or NaN (NaN keeps a quiet payload bit)
    return Half{static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u))};
  }
  if (abs >= 0x477ff000u) {  // rounds to >= 65520: overflow to Inf
    return Half{static_cast<uint16_t>(sign | 0x7c00u)};
  }
  if (abs < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
    // Scale to units of 2^-24 and round to nearest even with the FPU.
    const float scaled = BitsFloat(abs) * 16777216.0f;  // exact: a power of two
    const float rounded = std::nearbyint(scaled);       // default mode: ties to even
    return Half{static_cast<uint16_t>(sign | static_cast<uint32_t>(rounded))};
  }
  // Normal: rebias the exponent and round the 13 dropped mantissa bits.
  uint32_t h = ((abs >> 13) - ((127 - 15) << 10));
  const uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // carries into the exponent
  return Half{static_cast<uint16_t>(sign | h)};
}

float HalfToFloat(Half value) {
  const uint32_t sign = (static_cast<uint32_t>(value.bits) & 0x8000u) << 16;
  const uint32_t exp = (value.bits >> 10) & 0x1fu;
  const uint32_t mant = value.bits & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24
    const float magnitude = static_cast<float>(mant) * (1.0f / 16777216.0f);
    return sign ? -magnitude : magnitude;
  }
  if (exp == 31) return BitsFloat(sign | 0x7f800000u | (mant << 13));
  return BitsFloat(sign | ((exp + 127 - 15) << 23) | (mant << 13));
}

BFloat16 FloatToBFloat16(float value) {
  uint32_t f = FloatBits(value);
  if ((f & 0x7fffffffu) > 0x7f800000u) {  // NaN: keep it quiet
    return BFloat16{static_cast<uint16_t>((f >> 16) | 0x40u)};
  }
  const uint32_t lsb = (f >> 16) & 1u;
  f += 0x7fffu + lsb;  // round to nearest even
  return BFloat16{static_cast<uint16_t>(f >> 16)};
}

float BFloat16ToFloat(BFloat16 value) {
  return BitsFloat(static_cast<uint32_t>(value.bits) << 16);
}

double LoadElement(DType dtype, const void* data, size_t i) {
  switch (dtype) {
    case DType::kF32:
      return static_cast<const float*>(data)[i];
    case DType::kF64:
      return static_cast<const double*>(data)[i];
    case DType::kF16:
      return HalfToFloat(static_cast<const Half*>(data)[i]);
    case DType::kBF16:
      return BFloat16ToFloat(static_cast<const BFloat16*>(data)[i]);
    case DType::kI32:
      return static_cast<const int32_t*>(data)[i];
    case DType::kI64:
      return static_cast<double>(static_cast<const int64_t*>(data)[i]);
    case DType::kU8:
      return static_cast<const uint8_t*>(data)[i];
  }
  return 0;
}

bool StoreElement(DType dtype, void* data, size_t i, double value) {
  switch (dtype) {
    case DType::kF32:
      static_cast<float*>(data)[i] = static_cast<float>(value);
      return true;
    case DType::kF64:
      static_cast<double*>(data)[i] = value;
      return true;
    case DType::kF16:
      static_cast<Half*>(data)[i] = FloatToHalf(static_cast<float>(value));
      return true;
    case DType::kBF16:
      static_cast<BFloat16*>(data)[i] = FloatToBFloat16(static_cast<float>(value));
      return true;
    case DType::kI32:
      static_cast<int32_t*>(data)[i] = static_cast<int32_t>(value);
      return true;
    case DType::kI64:
      static_cast<int64_t*>(data)[i] = static_cast<int64_t>(value);
      return true;
    case DType::kU8:
      static_cast<uint8_t*>(data)[i] = static_cast<uint8_t>(static_cast<int>(value) & 0xff);
      return true;
  }
  return false;
}

}  // namespace cnnbench
