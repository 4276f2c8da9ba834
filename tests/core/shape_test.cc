#include "core/shape.h"

#include "core/device.h"
#include "gtest/gtest.h"

namespace cnnbench {
namespace {

TEST(ShapeTest, ElementsAndStrides) {
  Shape s{32, 64, 56, 56};
  EXPECT_EQ(s.rank(), 4);
  EXPECT_EQ(s.num_elements(), 32 * 64 * 56 * 56);
  EXPECT_EQ(s.Strides(), (std::vector<int64_t>{64 * 56 * 56, 56 * 56, 56, 1}));
  EXPECT_EQ(Shape{}.num_elements(), 1);
  EXPECT_EQ((Shape{3, 0, 2}).num_elements(), 0);
}

TEST(ShapeTest, StringRoundTrip) {
  for (Shape s : {Shape{}, Shape{7}, Shape{1, 2, 3, 4}, Shape{2048, 1001}}) {
    auto parsed = Shape::Parse(s.ToString());
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, s);
  }
  EXPECT_EQ((Shape{2, 3}).ToString(), "[2,3]");
}

TEST(ShapeTest, ParseErrorsSayWhat) {
  for (const char* bad : {"2,3", "[2,x]", "[2,-1]", "[2,,3]"}) {
    auto parsed = Shape::Parse(bad);
    EXPECT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.status().message().find(bad), absl::string_view::npos)
        << parsed.status().message();
  }
}

TEST(LayoutTest, NamesRoundTrip) {
  for (Layout l : {Layout::kNCHW, Layout::kNHWC, Layout::kNC, Layout::kOIHW, Layout::kBlocked})
    EXPECT_EQ(*ParseLayout(LayoutName(l)), l);
  EXPECT_FALSE(ParseLayout("chwn").ok());
}

TEST(DeviceTest, ParseAndPrint) {
  EXPECT_EQ(Device::Parse("cpu")->ToString(), "cpu");
  EXPECT_EQ(*Device::Parse("cuda:3"), Device::Cuda(3));
  EXPECT_EQ(Device::Cuda(1).ToString(), "cuda:1");
  EXPECT_FALSE(Device::Parse("cuda:-1").ok());
  EXPECT_FALSE(Device::Parse("tpu").ok());
}

TEST(BufferTest, HostBuffersAre64ByteAligned) {
  for (size_t bytes : {1, 63, 64, 100, 4096}) {
    auto buffer = Buffer::Allocate(Device::Cpu(), bytes);
    ASSERT_TRUE(buffer.ok());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer->data()) % 64, 0u) << bytes;
    EXPECT_EQ(buffer->size(), bytes);
  }
}

TEST(BufferTest, HugeHostAllocationIsOom) {
  auto buffer = Buffer::Allocate(Device::Cpu(), size_t{1} << 60);
  ASSERT_FALSE(buffer.ok());
  EXPECT_EQ(buffer.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(buffer.status().message().find("OOM"), absl::string_view::npos);
}

TEST(BufferTest, MissingGpuIsAClearError) {
  auto buffer = Buffer::Allocate(Device::Cuda(CudaDeviceCount()), 16);
  ASSERT_FALSE(buffer.ok());
  EXPECT_NE(buffer.status().message().find("cuda:"), absl::string_view::npos)
      << buffer.status().message();
}

}  // namespace
}  // namespace cnnbench
