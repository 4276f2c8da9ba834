// The oneDNN backend's own gradient sums (kernels/onednn/masked_sum.h:
// MaskedSum, SumRun, and ParallelSum where it applies) and ReLU6's clip
// against a scalar statement of what they compute, in fp32 and bf16, over
// lengths that leave vector tails, 1 to 9 parts (more than one group of
// four), plain and masked by ReLU (y > 0) and ReLU6 (0 < y < 6: 0 and 6
// themselves masked), with NaN, infinities, signed zeros, subnormals,
// rounding ties, 6 and its bf16 neighbours among the values. The bf16
// rounding is stated here another way (the two neighbours compared in
// double), so a wrong branch-free rounding in the vectorised loops fails.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "gtest/gtest.h"
#include "kernels/activation.h"
#include "kernels/onednn/loop_util.h"
#include "kernels/onednn/masked_sum.h"

namespace cnnbench {
namespace onednn {
namespace {

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  return b;
}
float FromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof(f));
  return f;
}
float Widen(uint16_t h) { return FromBits(static_cast<uint32_t>(h) << 16); }

// Round to nearest bf16, ties to even, by comparing the two neighbours.
uint16_t Narrow(float f) {
  if (std::isnan(f)) return static_cast<uint16_t>((Bits(f) >> 16) | 0x40);
  const uint32_t down = Bits(f) & 0xffff0000u;  // toward zero
  if (down == Bits(f)) return static_cast<uint16_t>(down >> 16);
  const uint32_t up = down + 0x10000u;  // away from zero (to infinity at the top)
  const double below = std::fabs(static_cast<double>(f) - FromBits(down));
  const double above = std::isinf(FromBits(up))
                           ? std::fabs(static_cast<double>(f)) * 2  // past the largest: see below
                           : std::fabs(static_cast<double>(FromBits(up)) - f);
  if (std::isinf(FromBits(up))) {
    // Halfway between the largest bf16 and 2^128 rounds to infinity.
    const double largest = FromBits(down), half_ulp = std::ldexp(1.0, 127 - 8);
    return static_cast<uint16_t>(
        (std::fabs(static_cast<double>(f)) - std::fabs(largest) >= half_ulp ? up : down) >> 16);
  }
  if (below < above) return static_cast<uint16_t>(down >> 16);
  if (above < below) return static_cast<uint16_t>(up >> 16);
  return static_cast<uint16_t>(((down >> 16) & 1) ? up >> 16 : down >> 16);
}

// Values with every special case, cycling with the index and the part.
float Value(int64_t i, int part) {
  static const float kSpecial[] = {0.0f,
                                   -0.0f,
                                   1.0f,
                                   -2.5f,
                                   std::numeric_limits<float>::infinity(),
                                   -std::numeric_limits<float>::infinity(),
                                   std::numeric_limits<float>::quiet_NaN(),
                                   1e-40f,                 // subnormal
                                   FromBits(0x3f808000u),  // a tie between two bf16 (even below)
                                   FromBits(0x3f818000u),  // a tie (even above)
                                   FromBits(0x7f7f8000u),  // a tie at the top of the range
                                   3.0e38f,
                                   6.0f,
                                   FromBits(0x40bf0000u),   // 5.96875: the bf16 below 6
                                   FromBits(0x40c10000u),   // 6.03125: the bf16 above 6
                                   FromBits(0x40bfffffu)};  // the fp32 below 6
  const int64_t k = (i * 7 + part * 3) % 40;
  if (k < 16) return kSpecial[k];
  return static_cast<float>((i * 13 + part * 29) % 97 - 48) * 0.37f;
}

// mask: kNone (a plain sum), kRelu or kRelu6.
struct Case {
  int parts;
  int64_t count;
  ActivationKind mask;
  bool masked() const { return mask != ActivationKind::kNone; }
};
const char* MaskName(ActivationKind mask) {
  return mask == ActivationKind::kNone ? "plain" : mask == ActivationKind::kRelu ? "relu" : "relu6";
}
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.parts << " parts of " << c.count << ", " << MaskName(c.mask);
}

// Whether dy passes at y: ReLU where y > 0, ReLU6 where 0 < y < 6 (NaN: no).
bool Passes(ActivationKind mask, float y) {
  if (mask == ActivationKind::kRelu6) return y > 0.0f && y < 6.0f;
  return mask != ActivationKind::kRelu || y > 0.0f;
}

// Parts are summed in order in fp32, four at a time; after the first group
// the running result (rounded to the element type) is a part again.
template <typename T, typename Load, typename Store>
std::vector<T> Expected(const std::vector<std::vector<T>>& parts, const std::vector<T>& y,
                        ActivationKind mask, int64_t count, Load load, Store store) {
  std::vector<T> out(count);
  for (int64_t i = 0; i < count; ++i) {
    size_t next = 0;
    T running{};
    bool first = true;
    while (next < parts.size()) {
      float sum = first ? load(parts[next++][i]) : load(running);
      for (int n = 1; n < 4 && next < parts.size(); ++n) sum = sum + load(parts[next++][i]);
      running = store(sum);
      first = false;
      if (!Passes(mask, load(y[i]))) running = T{};
    }
    out[i] = running;
  }
  return out;
}

class MaskedSumTest : public ::testing::TestWithParam<Case> {};

TEST_P(MaskedSumTest, Fp32MatchesTheScalarStatement) {
  const Case c = GetParam();
  std::vector<std::vector<float>> parts(c.parts, std::vector<float>(c.count));
  std::vector<float> y(c.count);
  for (int p = 0; p < c.parts; ++p)
    for (int64_t i = 0; i < c.count; ++i) parts[p][i] = Value(i, p);
  for (int64_t i = 0; i < c.count; ++i) y[i] = Value(i, 17);
  std::vector<const void*> pointers;
  for (auto& p : parts) pointers.push_back(p.data());
  std::vector<float> dx(c.count, 123.0f);
  if (c.masked())
    MaskedSum(DType::kF32, c.mask, y.data(), pointers.data(), c.parts, dx.data(), c.count);
  else
    SumRun(DType::kF32, pointers.data(), c.parts, 0, dx.data(), c.count);
  std::vector<float> parallel(c.count, 123.0f);
  if (!c.masked() && c.parts <= 4)  // the backend's AddN: one group on the team
    ParallelSum(DType::kF32, pointers.data(), c.parts, parallel.data(), c.count);
  const std::vector<float> want = Expected<float>(
      parts, y, c.mask, c.count, [](float v) { return v; }, [](float v) { return v; });
  for (int64_t i = 0; i < c.count; ++i) {
    ASSERT_EQ(Bits(dx[i]) == Bits(want[i]) || (std::isnan(dx[i]) && std::isnan(want[i])), true)
        << "element " << i << ": " << dx[i] << " want " << want[i];
    if (!c.masked() && c.parts <= 4) {
      ASSERT_EQ(
          Bits(parallel[i]) == Bits(want[i]) || (std::isnan(parallel[i]) && std::isnan(want[i])),
          true)
          << "ParallelSum, element " << i << ": " << parallel[i] << " want " << want[i];
    }
  }
}

TEST_P(MaskedSumTest, Bf16MatchesTheScalarStatement) {
  const Case c = GetParam();
  std::vector<std::vector<uint16_t>> parts(c.parts, std::vector<uint16_t>(c.count));
  std::vector<uint16_t> y(c.count);
  // The parts are bf16 values (the specials' ties survive as rounded values).
  for (int p = 0; p < c.parts; ++p)
    for (int64_t i = 0; i < c.count; ++i) parts[p][i] = Narrow(Value(i, p));
  for (int64_t i = 0; i < c.count; ++i) y[i] = Narrow(Value(i, 17));
  std::vector<const void*> pointers;
  for (auto& p : parts) pointers.push_back(p.data());
  std::vector<uint16_t> dx(c.count, 0x1234);
  if (c.masked())
    MaskedSum(DType::kBF16, c.mask, y.data(), pointers.data(), c.parts, dx.data(), c.count);
  else
    SumRun(DType::kBF16, pointers.data(), c.parts, 0, dx.data(), c.count);
  std::vector<uint16_t> parallel(c.count, 0x1234);
  if (!c.masked() && c.parts <= 4)
    ParallelSum(DType::kBF16, pointers.data(), c.parts, parallel.data(), c.count);
  const std::vector<uint16_t> want = Expected<uint16_t>(parts, y, c.mask, c.count, Widen, Narrow);
  for (int64_t i = 0; i < c.count; ++i) {
    ASSERT_EQ(dx[i], want[i]) << "element " << i << ": " << Widen(dx[i]) << " want "
                              << Widen(want[i]);
    if (!c.masked() && c.parts <= 4) {
      ASSERT_EQ(parallel[i], want[i]) << "ParallelSum, element " << i;
    }
  }
}

// The sums' rounding itself, on values the sums rarely produce.
TEST(Bf16Rounding, FloatToBf16MatchesTheNeighbourComparison) {
  for (uint32_t hi = 0; hi < 0x10000u; hi += 7) {
    for (uint32_t lo : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
      const float f = FromBits(hi << 16 | lo);
      const uint16_t got = FloatToBf16(f), want = Narrow(f);
      if (std::isnan(f)) {
        ASSERT_TRUE(std::isnan(Widen(got))) << std::hex << (hi << 16 | lo);
      } else {
        ASSERT_EQ(got, want) << std::hex << (hi << 16 | lo);
      }
      ASSERT_EQ(Bits(Bf16ToFloat(static_cast<uint16_t>(hi))), hi << 16);
    }
  }
}

// The casts between a working copy and its master (same layout): every
// special value, lengths that leave vector tails and split over the team.
TEST(Bf16Conversion, BothDirectionsMatchTheStatement) {
  for (int64_t count : {1, 15, 16, 33, 1000, 4099}) {
    std::vector<float> f(count), back(count, 123.0f);
    std::vector<uint16_t> h(count, 0x1234);
    for (int64_t i = 0; i < count; ++i) f[i] = Value(i, 5);
    ConvertF32ToBf16(f.data(), h.data(), count);
    for (int64_t i = 0; i < count; ++i) {
      if (std::isnan(f[i])) {
        ASSERT_TRUE(std::isnan(Widen(h[i]))) << i;
      } else {
        ASSERT_EQ(h[i], Narrow(f[i])) << "element " << i << " of " << count << ": " << f[i];
      }
    }
    ConvertBf16ToF32(h.data(), back.data(), count);
    for (int64_t i = 0; i < count; ++i)
      ASSERT_EQ(Bits(back[i]), static_cast<uint32_t>(h[i]) << 16) << "element " << i;
  }
}

// ReLU6's clip in place against its statement: 0 at or below 0 and for NaN,
// 6 at or above 6, the value between; bf16 exactly (no rounding).
TEST(ClipRelu6, Fp32AndBf16MatchTheStatement) {
  auto clip = [](float v) { return v > 0.0f ? (v < 6.0f ? v : 6.0f) : 0.0f; };
  int zeros = 0, sixes = 0, inside = 0;
  for (int64_t count : {1, 15, 16, 33, 1000, 4099}) {
    std::vector<float> f(count);
    std::vector<uint16_t> h(count);
    for (int64_t i = 0; i < count; ++i) {
      f[i] = Value(i, 11);
      h[i] = Narrow(f[i]);
    }
    const std::vector<float> f0 = f;
    const std::vector<uint16_t> h0 = h;
    ClipRelu6InPlace(DType::kF32, f.data(), count);
    ClipRelu6InPlace(DType::kBF16, h.data(), count);
    for (int64_t i = 0; i < count; ++i) {
      ASSERT_EQ(Bits(f[i]), Bits(clip(f0[i]))) << "element " << i << ": " << f0[i];
      ASSERT_EQ(h[i], Narrow(clip(Widen(h0[i])))) << "bf16 element " << i << ": " << Widen(h0[i]);
      zeros += f0[i] == 0.0f;
      sixes += f0[i] == 6.0f;
      inside += f0[i] > 5.9f && f0[i] < 6.0f;
    }
  }
  // The values cover the clips themselves and the inside next to 6.
  EXPECT_GT(zeros, 0);
  EXPECT_GT(sixes, 0);
  EXPECT_GT(inside, 0);
}

// The masks at exactly 0, -0 and 6 and at 6's neighbours, one element
// each: ReLU passes 6 and its neighbours and masks 0; ReLU6 passes only
// the values strictly inside (0, 6).
TEST(MaskedSumEdges, ReluAndRelu6AtTheClips) {
  const float ys[] = {0.0f, -0.0f, 6.0f, 5.96875f, 6.03125f, 1e-40f, -1e-40f, 3.0f};
  const bool relu[] = {false, false, true, true, true, true, false, true};
  const bool relu6[] = {false, false, false, true, false, true, false, true};
  for (int e = 0; e < 8; ++e) {
    for (ActivationKind kind : {ActivationKind::kRelu, ActivationKind::kRelu6}) {
      const bool want = (kind == ActivationKind::kRelu ? relu : relu6)[e];
      std::vector<float> y(19, ys[e]), dy(19, 2.5f), dx(19, -1.0f);
      const void* parts[1] = {dy.data()};
      MaskedSum(DType::kF32, kind, y.data(), parts, 1, dx.data(), 19);
      std::vector<uint16_t> hy(19, Narrow(ys[e])), hdy(19, Narrow(2.5f)), hdx(19, 0x1234);
      const void* hparts[1] = {hdy.data()};
      MaskedSum(DType::kBF16, kind, hy.data(), hparts, 1, hdx.data(), 19);
      for (int i = 0; i < 19; ++i) {  // 16 in a vector, 3 in the tail
        ASSERT_EQ(dx[i], want ? 2.5f : 0.0f) << MaskName(kind) << " at y " << ys[e];
        ASSERT_EQ(Widen(hdx[i]), want ? 2.5f : 0.0f) << MaskName(kind) << " bf16 at " << ys[e];
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Sums, MaskedSumTest,
    ::testing::Values(Case{1, 1, ActivationKind::kRelu}, Case{1, 37, ActivationKind::kNone},
                      Case{1, 37, ActivationKind::kRelu6}, Case{2, 16, ActivationKind::kRelu},
                      Case{2, 1000, ActivationKind::kNone}, Case{2, 1000, ActivationKind::kRelu6},
                      Case{3, 5000, ActivationKind::kNone}, Case{3, 33, ActivationKind::kRelu},
                      Case{3, 33, ActivationKind::kRelu6}, Case{4, 4099, ActivationKind::kRelu},
                      Case{4, 4099, ActivationKind::kRelu6}, Case{4, 63, ActivationKind::kNone},
                      Case{5, 129, ActivationKind::kRelu}, Case{5, 129, ActivationKind::kRelu6},
                      Case{7, 250, ActivationKind::kNone}, Case{9, 1027, ActivationKind::kRelu},
                      Case{9, 1027, ActivationKind::kRelu6}),
    [](const ::testing::TestParamInfo<Case>& info) {
      return std::to_string(info.param.parts) + "parts_" + std::to_string(info.param.count) + "_" +
             MaskName(info.param.mask);
    });

}  // namespace
}  // namespace onednn
}  // namespace cnnbench
