// Element types, training precisions, and fp16/bf16 conversions on the host.
#ifndef CNNBENCH_CORE_DTYPE_H_
#define CNNBENCH_CORE_DTYPE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace cnnbench {

enum class DType { kF32, kF16, kBF16, kF64, kI32, kI64, kU8 };

size_t SizeOf(DType dtype);
absl::string_view DTypeName(DType dtype);  // "fp32", "fp16", "bf16", "fp64", "int32", ...
absl::StatusOr<DType> ParseDType(absl::string_view name);
bool IsFloating(DType dtype);

// A training precision (DESIGN: fp32, tf32 math mode on GPUs, mixed fp16 and
// bf16 with fp32 master weights).
enum class Precision { kFp32, kTf32, kFp16, kBf16 };

// The one list of precisions, in the order tables and flags list them;
// bench, names and the report all read it (and PrecisionName/ParsePrecision).
struct PrecisionInfo {
  Precision precision;
  absl::string_view name;  // "fp32", "tf32", "fp16", "bf16"
  DType activations;       // the type activations are stored and computed in
};
inline constexpr PrecisionInfo kPrecisions[] = {
    {Precision::kFp32, "fp32", DType::kF32},
    {Precision::kTf32, "tf32", DType::kF32},
    {Precision::kFp16, "fp16", DType::kF16},
    {Precision::kBf16, "bf16", DType::kBF16},
};
// "fp32, tf32, fp16, bf16": for messages.
std::string PrecisionNamesList();

absl::string_view PrecisionName(Precision precision);
absl::StatusOr<Precision> ParsePrecision(absl::string_view name);
// The type activations are stored and computed in.
DType ActivationType(Precision precision);

// IEEE binary16 and bfloat16 as raw bits; conversions round to nearest even
// and keep NaN/Inf.
struct Half {
  uint16_t bits = 0;
};
struct BFloat16 {
  uint16_t bits = 0;
};

Half FloatToHalf(float value);
float HalfToFloat(Half value);
BFloat16 FloatToBFloat16(float value);
float BFloat16ToFloat(BFloat16 value);

// Element i of a buffer of `dtype` as a double (0 for a type it cannot
// hold), and back: false, nothing written, for a type with no storage here.
// The collectives' checks (the suite's cases and their tests) read and
// write their values through these.
double LoadElement(DType dtype, const void* data, size_t i);
bool StoreElement(DType dtype, void* data, size_t i, double value);

}  // namespace cnnbench

#endif  // CNNBENCH_CORE_DTYPE_H_
