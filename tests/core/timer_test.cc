#include <chrono>
#include <thread>

#include "core/device.h"
#include "gtest/gtest.h"

namespace cnnbench {
namespace {

TEST(TimerTest, CpuTimerMeasuresASleep) {
  auto stream = Stream::Create(Device::Cpu());
  ASSERT_TRUE(stream.ok());
  auto timer = Timer::Create(*stream);
  ASSERT_TRUE(timer.ok()) << timer.status();
  ASSERT_TRUE(timer->Start().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(timer->Stop().ok());
  auto seconds = timer->ElapsedSeconds();
  ASSERT_TRUE(seconds.ok());
  EXPECT_GE(*seconds, 0.019);
  EXPECT_LT(*seconds, 2.0);  // generous: the machine is shared
}

TEST(TimerTest, CpuTimerIsMonotonic) {
  auto stream = Stream::Create(Device::Cpu());
  auto timer = Timer::Create(*stream);
  ASSERT_TRUE(timer->Start().ok());
  ASSERT_TRUE(timer->Stop().ok());
  EXPECT_GE(*timer->ElapsedSeconds(), 0.0);
}

TEST(TimerTest, GpuTimerMeasuresDeviceWork) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no GPU";
  auto stream = Stream::Create(Device::Cuda(0));
  ASSERT_TRUE(stream.ok()) << stream.status();
  auto timer = Timer::Create(*stream);
  ASSERT_TRUE(timer.ok()) << timer.status();
  auto buffer = Buffer::Allocate(Device::Cuda(0), 256 << 20);
  ASSERT_TRUE(buffer.ok());
  ASSERT_TRUE(timer->Start().ok());
  ASSERT_TRUE(stream->Synchronize().ok());
  ASSERT_TRUE(timer->Stop().ok());
  auto seconds = timer->ElapsedSeconds();
  ASSERT_TRUE(seconds.ok()) << seconds.status();
  EXPECT_GE(*seconds, 0.0);
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
