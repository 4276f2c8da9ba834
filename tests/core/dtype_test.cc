#include "core/dtype.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "gtest/gtest.h"

namespace cnnbench {
namespace {

TEST(DTypeTest, SizesAndNamesRoundTrip) {
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI32, DType::kI64,
                  DType::kU8}) {
    auto parsed = ParseDType(DTypeName(d));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, d);
  }
  EXPECT_EQ(SizeOf(DType::kF32), 4u);
  EXPECT_EQ(SizeOf(DType::kF16), 2u);
  EXPECT_EQ(SizeOf(DType::kBF16), 2u);
  EXPECT_EQ(SizeOf(DType::kU8), 1u);
  auto bad = ParseDType("fp33");
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("fp33"), absl::string_view::npos);
}

TEST(DTypeTest, PrecisionParse) {
  EXPECT_EQ(*ParsePrecision("tf32"), Precision::kTf32);
  EXPECT_EQ(ActivationType(Precision::kBf16), DType::kBF16);
  EXPECT_EQ(ActivationType(Precision::kTf32), DType::kF32);
  EXPECT_FALSE(ParsePrecision("int8").ok());
  EXPECT_NE(ParsePrecision("int8").status().message().find("fp32, tf32, fp16, bf16"),
            absl::string_view::npos);
  // The table is the one list: every entry round-trips, and names are unique.
  for (const PrecisionInfo& p : kPrecisions) {
    EXPECT_EQ(*ParsePrecision(p.name), p.precision);
    EXPECT_EQ(PrecisionName(p.precision), p.name);
    EXPECT_EQ(ActivationType(p.precision), p.activations);
  }
}

TEST(HalfTest, ExactValuesRoundTrip) {
  // Every finite half converts to float and back to the same bits.
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    Half h{static_cast<uint16_t>(bits)};
    const uint32_t exp = (bits >> 10) & 0x1f;
    if (exp == 31) continue;
    EXPECT_EQ(FloatToHalf(HalfToFloat(h)).bits, h.bits) << bits;
  }
}

TEST(HalfTest, KnownEncodings) {
  EXPECT_EQ(FloatToHalf(1.0f).bits, 0x3c00);
  EXPECT_EQ(FloatToHalf(-2.0f).bits, 0xc000);
  EXPECT_EQ(FloatToHalf(65504.0f).bits, 0x7bff);
  EXPECT_EQ(FloatToHalf(0.0f).bits, 0x0000);
  EXPECT_EQ(FloatToHalf(-0.0f).bits, 0x8000);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -24)).bits, 0x0001);  // smallest subnormal
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -14)).bits, 0x0400);  // smallest normal
  EXPECT_EQ(FloatToHalf(1e6f).bits, 0x7c00);                   // overflow to +Inf
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::infinity()).bits, 0x7c00);
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(std::nanf("")))));
  EXPECT_FLOAT_EQ(HalfToFloat(Half{0x3555}), 0.333251953125f);
}

TEST(HalfTest, RoundsToNearestEven) {
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties go to the even mantissa (1).
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)).bits, 0x3c00);
  // 1 + 3*2^-11 lies halfway between 1+2^-10 (odd) and 1+2^-9 (even): rounds up.
  EXPECT_EQ(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)).bits, 0x3c02);
  // Just above halfway rounds up.
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)).bits, 0x3c01);
  // 65520 is halfway between 65504 (odd mantissa) and 65536: rounds to Inf.
  EXPECT_EQ(FloatToHalf(65520.0f).bits, 0x7c00);
  EXPECT_EQ(FloatToHalf(65519.0f).bits, 0x7bff);
  // Subnormal halfway: 1.5 * 2^-24 ties to 2 * 2^-24.
  EXPECT_EQ(FloatToHalf(1.5f * std::ldexp(1.0f, -24)).bits, 0x0002);
  EXPECT_EQ(FloatToHalf(0.5f * std::ldexp(1.0f, -24)).bits, 0x0000);
}

TEST(HalfTest, ErrorBoundedByHalfUlp) {
  for (float x = -70000.0f; x < 70000.0f; x += 12.345f) {
    const float y = HalfToFloat(FloatToHalf(x));
    if (std::fabs(x) >= 65520.0f) {
      EXPECT_TRUE(std::isinf(y)) << x;
      continue;
    }
    const int e = std::ilogb(std::fabs(x) < std::ldexp(1.0f, -14) ? std::ldexp(1.0f, -14) : x);
    const float half_ulp = std::ldexp(1.0f, e - 11);
    EXPECT_LE(std::fabs(y - x), half_ulp) << x;
  }
}

TEST(BFloat16Test, RoundTripAndRounding) {
  for (uint32_t bits = 0; bits < 0x10000; bits += 7) {
    BFloat16 b{static_cast<uint16_t>(bits)};
    const float f = BFloat16ToFloat(b);
    if (std::isnan(f)) continue;
    EXPECT_EQ(FloatToBFloat16(f).bits, b.bits) << bits;
  }
  EXPECT_EQ(FloatToBFloat16(1.0f).bits, 0x3f80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1).
  EXPECT_EQ(FloatToBFloat16(1.0f + std::ldexp(1.0f, -8)).bits, 0x3f80);
  // 1 + 3*2^-8 is halfway between 1+2^-7 (odd) and 1+2^-6: rounds up to even.
  EXPECT_EQ(FloatToBFloat16(1.0f + 3 * std::ldexp(1.0f, -8)).bits, 0x3f82);
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(std::nanf("")))));
  EXPECT_TRUE(std::isinf(BFloat16ToFloat(FloatToBFloat16(3.4e38f))));  // rounds past max
}

// An element stored then loaded is the value as the type holds it: exact
// for small integers in every type, rounded for fp16/bf16, wrapped for uint8.
TEST(ElementTest, StoreThenLoadInEveryType) {
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI32,
                      DType::kI64, DType::kU8}) {
    uint64_t words[4] = {};
    for (size_t i = 0; i < 3; ++i) ASSERT_TRUE(StoreElement(dtype, words, i, 7.0 * i - 1));
    EXPECT_EQ(LoadElement(dtype, words, 1), 6.0) << DTypeName(dtype);
    EXPECT_EQ(LoadElement(dtype, words, 2), 13.0) << DTypeName(dtype);
    // Element 0 (-1) as each type holds it; the neighbours untouched by a store.
    EXPECT_EQ(LoadElement(dtype, words, 0), dtype == DType::kU8 ? 255.0 : -1.0) << DTypeName(dtype);
  }
  uint16_t bits[1];
  ASSERT_TRUE(StoreElement(DType::kBF16, bits, 0, 257.0));  // bf16 holds 256 or 258
  EXPECT_EQ(LoadElement(DType::kBF16, bits, 0), 256.0);
  EXPECT_FALSE(StoreElement(static_cast<DType>(99), bits, 0, 1.0));
}

}  // namespace
}  // namespace cnnbench
