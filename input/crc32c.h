// CRC-32C (Castagnoli), the checksum of TFRecord files, and TensorFlow's
// masking of it (a CRC stored next to the data it covers is masked so that
// CRCs of CRCs do not look like valid ones).
#ifndef CNNBENCH_INPUT_CRC32C_H_
#define CNNBENCH_INPUT_CRC32C_H_

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace cnnbench::input {

// Extends `crc` (the CRC-32C of earlier bytes; 0 for none) over `data`.
// Uses the SSE4.2 crc32 instruction when the CPU has it, tables otherwise.
uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t size);

inline uint32_t Crc32c(absl::string_view data) { return Crc32cExtend(0, data.data(), data.size()); }

// TensorFlow's mask: rotate right by 15 bits, add a constant.
constexpr uint32_t kCrc32cMaskDelta = 0xa282ead8u;
inline uint32_t MaskCrc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kCrc32cMaskDelta; }
inline uint32_t UnmaskCrc32c(uint32_t masked) {
  const uint32_t rotated = masked - kCrc32cMaskDelta;
  return (rotated >> 17) | (rotated << 15);
}

namespace internal {
// The two implementations behind Crc32cExtend, exposed so tests can check
// that they agree. The hardware one must only be called when
// HaveCrc32cInstruction() is true.
uint32_t Crc32cExtendTables(uint32_t crc, const void* data, size_t size);
uint32_t Crc32cExtendHardware(uint32_t crc, const void* data, size_t size);
bool HaveCrc32cInstruction();
}  // namespace internal

}  // namespace cnnbench::input

#endif  // CNNBENCH_INPUT_CRC32C_H_
