#include <chrono>
#include <thread>

#include "core/device.h"
#include "gtest/gtest.h"

namespace cnnbench {
namespace {

// No timing windows here: only bounds the system guarantees. A sleep lasts
// at least its duration on the steady clock, so a timer around it cannot
// read less; a timer around device work that has to happen reads more than
// zero. Upper bounds depend on the machine's load and are never asserted.

TEST(TimerTest, CpuTimerAroundASleepReadsAtLeastTheSleep) {
  auto stream = Stream::Create(Device::Cpu());
  ASSERT_TRUE(stream.ok());
  auto timer = Timer::Create(*stream);
  ASSERT_TRUE(timer.ok()) << timer.status();
  const auto sleep = std::chrono::milliseconds(20);
  ASSERT_TRUE(timer->Start().ok());
  std::this_thread::sleep_for(sleep);
  ASSERT_TRUE(timer->Stop().ok());
  auto seconds = timer->ElapsedSeconds();
  ASSERT_TRUE(seconds.ok()) << seconds.status();
  EXPECT_GE(*seconds, std::chrono::duration<double>(sleep).count());
}

TEST(TimerTest, CpuElapsedIsFixedByStartAndStop) {
  // What Start and Stop recorded, not the time of reading: reading it again
  // later gives the same value, and a new Start/Stop pair replaces it.
  auto stream = Stream::Create(Device::Cpu());
  auto timer = Timer::Create(*stream);
  ASSERT_TRUE(timer.ok()) << timer.status();
  const auto sleep = std::chrono::milliseconds(5);
  ASSERT_TRUE(timer->Start().ok());
  std::this_thread::sleep_for(sleep);
  ASSERT_TRUE(timer->Stop().ok());
  auto first = timer->ElapsedSeconds();
  ASSERT_TRUE(first.ok()) << first.status();
  std::this_thread::sleep_for(sleep);
  auto again = timer->ElapsedSeconds();
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*first, *again);

  ASSERT_TRUE(timer->Start().ok());
  std::this_thread::sleep_for(4 * sleep);
  ASSERT_TRUE(timer->Stop().ok());
  auto second = timer->ElapsedSeconds();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_GE(*second, std::chrono::duration<double>(4 * sleep).count());
}

// A timer read out of order is an error, not a number.
TEST(TimerTest, StopBeforeStartIsAnError) {
  auto stream = Stream::Create(Device::Cpu());
  auto timer = Timer::Create(*stream);
  ASSERT_TRUE(timer.ok()) << timer.status();
  EXPECT_FALSE(timer->Stop().ok());
}

TEST(TimerTest, ElapsedBeforeStopIsAnError) {
  auto stream = Stream::Create(Device::Cpu());
  auto timer = Timer::Create(*stream);
  ASSERT_TRUE(timer.ok()) << timer.status();
  EXPECT_FALSE(timer->ElapsedSeconds().ok());
  ASSERT_TRUE(timer->Start().ok());
  EXPECT_FALSE(timer->ElapsedSeconds().ok());
}

TEST(TimerTest, GpuTimerMeasuresTheWorkEnqueuedBetweenItsEvents) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no GPU";
  const Device gpu = Device::Cuda(0);
  auto stream = Stream::Create(gpu);
  ASSERT_TRUE(stream.ok()) << stream.status();
  auto timer = Timer::Create(*stream);
  ASSERT_TRUE(timer.ok()) << timer.status();
  const size_t bytes = size_t{256} << 20;
  auto buffer = Buffer::Allocate(gpu, bytes);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  ASSERT_TRUE(timer->Start().ok());
  ASSERT_TRUE(MemsetAsync(buffer->data(), 0x5a, bytes, *stream).ok());  // 256 MiB of work
  ASSERT_TRUE(timer->Stop().ok());
  auto seconds = timer->ElapsedSeconds();
  ASSERT_TRUE(seconds.ok()) << seconds.status();
  EXPECT_GT(*seconds, 0.0);
  // ElapsedSeconds waited for the stop event, so the work before it is done.
  unsigned char last = 0;
  ASSERT_TRUE(
      CopyBytes(&last, Device::Cpu(), static_cast<char*>(buffer->data()) + bytes - 1, gpu, 1).ok());
  EXPECT_EQ(last, 0x5a);
}

TEST(StreamTest, EventOnWrongDeviceIsAnError) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no GPU";
  auto cpu = Stream::Create(Device::Cpu());
  auto event = Event::Create(Device::Cuda(0));
  ASSERT_TRUE(event.ok());
  EXPECT_FALSE(event->Record(*cpu).ok());
}

TEST(StreamTest, NoGpuGivesClearError) {
  if (CudaDeviceCount() > 0) GTEST_SKIP() << "a GPU is present";
  auto stream = Stream::Create(Device::Cuda(0));
  ASSERT_FALSE(stream.ok());
  EXPECT_NE(stream.status().message().find("cuda:0"), absl::string_view::npos);
}

}  // namespace
}  // namespace cnnbench
