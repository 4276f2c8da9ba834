// Streams, events and asynchronous copies/fills: on the CPU they run at once
// in call order; on a GPU a second stream sees the first's work only after
// waiting on its event (skipped without a GPU).
#include <cstring>
#include <vector>

#include "core/device.h"
#include "gtest/gtest.h"

namespace cnnbench {
namespace {

TEST(StreamTest, CpuCopyAndFillRunInOrder) {
  auto stream = Stream::Create(Device::Cpu());
  ASSERT_TRUE(stream.ok());
  std::vector<unsigned char> a(1000, 0), b(1000, 0);
  ASSERT_TRUE(MemsetAsync(a.data(), 7, a.size(), *stream).ok());
  ASSERT_TRUE(CopyAsync(b.data(), a.data(), 500, *stream).ok());
  ASSERT_TRUE(stream->Synchronize().ok());
  for (size_t i = 0; i < b.size(); ++i) ASSERT_EQ(b[i], i < 500 ? 7 : 0) << i;
}

TEST(StreamTest, SynchronousMemsetFillsExactlyTheRange) {
  std::vector<unsigned char> a(64, 1);
  ASSERT_TRUE(Memset(a.data() + 8, Device::Cpu(), 0xff, 16).ok());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], i >= 8 && i < 24 ? 0xff : 1) << i;
}

TEST(StreamTest, CpuWaitOnACpuEventIsOrderedAlready) {
  auto stream = Stream::Create(Device::Cpu());
  auto event = Event::Create(Device::Cpu());
  ASSERT_TRUE(stream.ok() && event.ok());
  ASSERT_TRUE(event->Record(*stream).ok());
  EXPECT_TRUE(stream->Wait(*event).ok());
}

TEST(StreamTest, WaitingOnAnotherDevicesEventIsAnError) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no GPU: needs a cuda event";
  auto stream = Stream::Create(Device::Cpu());
  auto event = Event::Create(Device::Cuda(0));
  ASSERT_TRUE(stream.ok() && event.ok());
  absl::Status status = stream->Wait(*event);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
}

TEST(StreamTest, GpuSecondStreamSeesFirstStreamsWorkAfterWait) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no GPU";
  const Device gpu = Device::Cuda(0);
  const size_t bytes = size_t{64} << 20;  // long enough that a missing wait would show
  auto a = Stream::Create(gpu), b = Stream::Create(gpu);
  auto done = Event::Create(gpu);
  auto src = Buffer::Allocate(gpu, bytes), dst = Buffer::Allocate(gpu, bytes);
  auto host = Buffer::AllocatePinnedHost(bytes);
  ASSERT_TRUE(a.ok() && b.ok() && done.ok() && src.ok() && dst.ok() && host.ok());
  ASSERT_TRUE(Memset(dst->data(), gpu, 0, bytes).ok());
  ASSERT_TRUE(MemsetAsync(src->data(), 0x5a, bytes, *a).ok());
  ASSERT_TRUE(CopyAsync(dst->data(), src->data(), bytes, *a).ok());
  ASSERT_TRUE(done->Record(*a).ok());
  ASSERT_TRUE(b->Wait(*done).ok());
  ASSERT_TRUE(CopyAsync(host->data(), dst->data(), bytes, *b).ok());
  ASSERT_TRUE(b->Synchronize().ok());
  const unsigned char* h = static_cast<const unsigned char*>(host->data());
  for (size_t i = 0; i < bytes; i += 4093) ASSERT_EQ(h[i], 0x5a) << i;
  EXPECT_EQ(h[bytes - 1], 0x5a);
}

}  // namespace
}  // namespace cnnbench
