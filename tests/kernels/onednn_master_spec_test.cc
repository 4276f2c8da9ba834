// The oneDNN backend keeps a blocked bf16 parameter's fp32 master in the
// same blocking (Backend::MasterSpec), and casts between the two with its
// own elementwise loop: checked against oneDNN's layout-changing reorders,
// the path before (plain fp32 values uploaded into the working copy
// directly, and the working copy downloaded to plain fp32).
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/dtype.h"
#include "core/random.h"
#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "kernels/kernel.h"
#include "tests/kernels/onednn_test_util.h"

namespace cnnbench {
namespace {

using onednn_test::OneDnn;

TEST(OneDnnMasterSpecTest, BlockedBf16WeightsKeepTheirBlockingInFp32AndCastElementwise) {
  Backend* backend = OneDnn();
  ASSERT_NE(backend, nullptr);
  absl::StatusOr<OpDesc> desc = ParseOpDesc("conv:mb4_ic20oc24_ih8oh8kh3sh1ph1_iw8ow8kw3sw1pw1");
  ASSERT_TRUE(desc.ok()) << desc.status();
  auto kernel = backend->Create(*desc, DType::kBF16, {});
  if (!kernel.ok() && kernel.status().code() == absl::StatusCode::kUnimplemented)
    GTEST_SKIP() << kernel.status().message();
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  const TensorSpec working = (*kernel)->signature().params[0];
  ASSERT_FALSE(working.is_plain()) << working.DebugString();
  const TensorSpec master = backend->MasterSpec(working);
  EXPECT_EQ(master.dtype, DType::kF32);
  EXPECT_FALSE(master.is_plain()) << master.DebugString();
  EXPECT_EQ(master.bytes, 2 * working.bytes);  // the same elements, padding included

  const TensorSpec plain = TensorSpec::Plain(DType::kF32, working.shape);
  std::vector<float> values(working.shape.num_elements());
  Rng rng(3);
  for (float& v : values) v = static_cast<float>(rng.Normal());
  std::vector<char> m(master.bytes), w(working.bytes), w_before(working.bytes);
  ASSERT_TRUE(backend->Upload(plain, values.data(), master, m.data()).ok());
  // master -> working: the elementwise cast, against oneDNN's reorder of
  // the plain values straight into the working layout.
  ASSERT_TRUE(backend->Reorder(master, m.data(), working, w.data()).ok());
  ASSERT_TRUE(backend->Upload(plain, values.data(), working, w_before.data()).ok());
  EXPECT_EQ(std::memcmp(w.data(), w_before.data(), w.size()), 0);
  // working -> master (a weight gradient's cast), then downloaded: each
  // value is its bf16 rounding.
  std::vector<char> m2(master.bytes);
  ASSERT_TRUE(backend->Reorder(working, w.data(), master, m2.data()).ok());
  std::vector<float> out(values.size());
  ASSERT_TRUE(backend->Download(master, m2.data(), plain, out.data()).ok());
  for (size_t i = 0; i < values.size(); ++i)
    ASSERT_EQ(out[i], BFloat16ToFloat(FloatToBFloat16(values[i]))) << "element " << i;
}

}  // namespace
}  // namespace cnnbench
