// The memory a case may count on (core/device.h AvailableMemory): with
// glibc's malloc told to keep freed memory (the peers' and a long suite
// run's MALLOC_TRIM_THRESHOLD_/MALLOC_MMAP_THRESHOLD_), a freed block
// stays in this process and is not in MemAvailable; it counts as
// available (HeldFreeHeapBytes), so a later, larger case is not refused
// as out of memory while its memory sits free in the process.
#include <malloc.h>

#include <cstdlib>
#include <cstring>

#include "core/device.h"
#include "gtest/gtest.h"

namespace cnnbench {
namespace {

TEST(HeldMemoryTest, FreedHeapKeptByMallocCountsAsAvailable) {
#if !defined(__GLIBC__) || defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "not glibc's malloc (another libc, or a sanitizer's allocator)";
#else
  constexpr size_t kBlock = size_t{64} << 20;
  // From the heap, not mmap, and kept after free.
  if (mallopt(M_MMAP_THRESHOLD, 1 << 30) != 1 || mallopt(M_TRIM_THRESHOLD, 1 << 30) != 1)
    GTEST_SKIP() << "malloc ignores mallopt";
  const size_t before = HeldFreeHeapBytes();
  char* block = static_cast<char*>(std::malloc(kBlock));
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, kBlock);  // resident
  std::free(block);
  const size_t held = HeldFreeHeapBytes();
  EXPECT_GE(held, before + kBlock - (size_t{1} << 20));
  auto available = AvailableMemory(Device::Cpu());
  ASSERT_TRUE(available.ok()) << available.status();
  EXPECT_GE(*available, held);
  // Given back to the system, it no longer counts.
  malloc_trim(0);
  EXPECT_LT(HeldFreeHeapBytes(), held - kBlock / 2);
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  mallopt(M_TRIM_THRESHOLD, 128 * 1024);
#endif
}

}  // namespace
}  // namespace cnnbench
