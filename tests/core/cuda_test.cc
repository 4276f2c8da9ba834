// CUDA code is compiled and linked in every build that has a toolkit; it runs
// only where a GPU is present.
#include <vector>

#include "core/device.h"
#include "core/platform.h"
#include "gtest/gtest.h"

#ifdef CNNBENCH_HAVE_CUDA
#include "tests/core/vector_add.h"
#endif

namespace cnnbench {
namespace {

TEST(CudaBuildTest, LibraryVersionsReadableWhenBuiltIn) {
  if (!CudaBuiltIn()) GTEST_SKIP() << "this build has no CUDA";
  PlatformInfo info = CollectPlatformInfo();
  // These come from the libraries themselves and need no GPU or driver.
  EXPECT_NE(info.cuda_toolkit_version, "none");
  EXPECT_NE(info.cuda_runtime_version, "none");
  EXPECT_NE(info.cudnn_version, "none");
  EXPECT_NE(info.cublas_version, "none");
  EXPECT_NE(info.nccl_version, "none");
}

TEST(CudaBuildTest, NoCudaMeansNoDevices) {
  if (CudaBuiltIn()) GTEST_SKIP() << "this build has CUDA";
  EXPECT_EQ(CudaDeviceCount(), 0);
}

#ifdef CNNBENCH_HAVE_CUDA
TEST(CudaKernelTest, VectorAddOnDevice) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no GPU";
  const int n = 1000;
  std::vector<float> a(n), b(n), c(n);
  for (int i = 0; i < n; ++i) a[i] = i, b[i] = 2 * i;
  const Device gpu = Device::Cuda(0);
  auto da = Buffer::Allocate(gpu, n * 4), db = Buffer::Allocate(gpu, n * 4),
       dc = Buffer::Allocate(gpu, n * 4);
  ASSERT_TRUE(da.ok() && db.ok() && dc.ok());
  ASSERT_TRUE(CopyBytes(da->data(), gpu, a.data(), Device::Cpu(), n * 4).ok());
  ASSERT_TRUE(CopyBytes(db->data(), gpu, b.data(), Device::Cpu(), n * 4).ok());
  ASSERT_TRUE(testing::VectorAdd(static_cast<float*>(da->data()), static_cast<float*>(db->data()),
                                 static_cast<float*>(dc->data()), n)
                  .ok());
  ASSERT_TRUE(CopyBytes(c.data(), Device::Cpu(), dc->data(), gpu, n * 4).ok());
  for (int i = 0; i < n; ++i) EXPECT_EQ(c[i], 3.0f * i) << i;
}
#endif

}  // namespace
}  // namespace cnnbench
