// CRC-32C against published test vectors (RFC 3720 appendix B.4), the table
// and instruction implementations against each other, and TensorFlow's mask.
#include "input/crc32c.h"

#include <string>

#include "core/random.h"
#include "gtest/gtest.h"

namespace cnnbench::input {
namespace {

std::string Bytes(size_t n, int (*byte)(size_t)) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(byte(i));
  return s;
}

TEST(Crc32cTest, PublishedVectors) {
  EXPECT_EQ(Crc32c(Bytes(32, [](size_t) { return 0x00; })), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(Bytes(32, [](size_t) { return 0xFF; })), 0x62A8AB43u);
  EXPECT_EQ(Crc32c(Bytes(32, [](size_t i) { return static_cast<int>(i); })), 0x46DD794Eu);
  EXPECT_EQ(Crc32c(Bytes(32, [](size_t i) { return static_cast<int>(31 - i); })), 0x113FDB5Cu);
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32c(""), 0u);
}

TEST(Crc32cTest, VectorsHoldForBothImplementations) {
  const std::string ascending = Bytes(32, [](size_t i) { return static_cast<int>(i); });
  EXPECT_EQ(internal::Crc32cExtendTables(0, ascending.data(), ascending.size()), 0x46DD794Eu);
  EXPECT_EQ(internal::Crc32cExtendTables(0, "123456789", 9), 0xE3069283u);
  if (!internal::HaveCrc32cInstruction()) GTEST_SKIP() << "no SSE4.2 crc32 instruction here";
  EXPECT_EQ(internal::Crc32cExtendHardware(0, ascending.data(), ascending.size()), 0x46DD794Eu);
  EXPECT_EQ(internal::Crc32cExtendHardware(0, "123456789", 9), 0xE3069283u);
}

TEST(Crc32cTest, ImplementationsAgreeOnEveryLengthAndAlignment) {
  Rng rng(7);
  std::string data(600, '\0');
  for (char& c : data) c = static_cast<char>(rng.Next() & 0xff);
  for (size_t offset = 0; offset < 8; ++offset) {
    for (size_t n = 0; offset + n <= data.size(); n += (n < 40 ? 1 : 37)) {
      const uint32_t tables = internal::Crc32cExtendTables(0, data.data() + offset, n);
      EXPECT_EQ(Crc32cExtend(0, data.data() + offset, n), tables) << offset << " " << n;
      if (internal::HaveCrc32cInstruction()) {
        EXPECT_EQ(internal::Crc32cExtendHardware(0, data.data() + offset, n), tables)
            << offset << " " << n;
      }
    }
  }
}

TEST(Crc32cTest, ExtendEqualsOneCallOverTheWhole) {
  const std::string data = "The quick brown fox jumps over the lazy dog, twice over.";
  const uint32_t whole = Crc32c(data);
  for (size_t split = 0; split <= data.size(); ++split) {
    const uint32_t first = Crc32cExtend(0, data.data(), split);
    EXPECT_EQ(Crc32cExtend(first, data.data() + split, data.size() - split), whole) << split;
    EXPECT_EQ(internal::Crc32cExtendTables(internal::Crc32cExtendTables(0, data.data(), split),
                                           data.data() + split, data.size() - split),
              whole)
        << split;
  }
}

TEST(Crc32cTest, MaskIsTensorFlowsAndRoundTrips) {
  // ((crc >> 15) | (crc << 17)) + 0xa282ead8, worked by hand.
  EXPECT_EQ(MaskCrc32c(0), 0xa282ead8u);
  EXPECT_EQ(MaskCrc32c(0x80000000u), 0x00010000u + 0xa282ead8u);
  EXPECT_EQ(MaskCrc32c(0x00000001u), 0x00020000u + 0xa282ead8u);
  EXPECT_EQ(MaskCrc32c(0xE3069283u), ((0xE3069283u >> 15) | (0xE3069283u << 17)) + 0xa282ead8u);
  Rng rng(3);
  for (int i = 0; i < 10000; ++i) {
    const uint32_t crc = static_cast<uint32_t>(rng.Next());
    EXPECT_EQ(UnmaskCrc32c(MaskCrc32c(crc)), crc);
    EXPECT_EQ(MaskCrc32c(UnmaskCrc32c(crc)), crc);
  }
  EXPECT_NE(MaskCrc32c(0xE3069283u), 0xE3069283u);
}

}  // namespace
}  // namespace cnnbench::input
