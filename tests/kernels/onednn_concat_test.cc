// oneDNN channel concatenation against the reference: plain inputs, blocked
// inputs on block boundaries, and blocked inputs whose slices are not (the
// output then goes channels-last); and the backward that sums several
// output gradients slice by slice; integer data, exact.
#include <string>
#include <vector>

#include "dnnl.hpp"
#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "tests/kernels/gradient_check.h"
#include "tests/kernels/onednn_test_util.h"

namespace cnnbench {
namespace {

using onednn_test::CompareOptions;
using onednn_test::CompareWithReference;
using onednn_test::OneDnn;

void ExpectMatch(const std::string& text, const CompareOptions& options = {}) {
  ASSERT_NE(OneDnn(), nullptr);
  absl::StatusOr<OpDesc> desc = ParseOpDesc(text);
  ASSERT_TRUE(desc.ok()) << desc.status();
  absl::Status status = CompareWithReference(*desc, options);
  EXPECT_TRUE(status.ok()) << status;
}

TEST(OneDnnConcatTest, Plain) { ExpectMatch("concat:mb2ih3iw5_ic3:1:4"); }

// The channel pad: plain, and from a blocked producer (reordered to plain).
TEST(OneDnnChannelPadTest, MatchesTheReference) {
  ExpectMatch("chpad:mb2ic3ih4iw5_b2a1");
  ExpectMatch("chpad:mb3ic16ih8iw8_b8a8");
  CompareOptions o;
  o.onednn_inputs = {onednn_test::ConvOutputSpec(2, 16, 4)};
  ExpectMatch("chpad:mb2ic16ih4iw4_b8a8", o);
}

TEST(OneDnnConcatTest, BlockedOnBlockBoundaries) {
  ASSERT_NE(OneDnn(), nullptr);
  CompareOptions o;
  o.onednn_inputs = {onednn_test::ConvOutputSpec(2, 16, 4), onednn_test::ConvOutputSpec(2, 8, 4),
                     onednn_test::ConvOutputSpec(2, 24, 4)};
  ExpectMatch("concat:mb2ih4iw4_ic16:8:24", o);
}

TEST(OneDnnConcatTest, BlockedOffBlockBoundaries) {
  ASSERT_NE(OneDnn(), nullptr);
  CompareOptions o;
  o.onednn_inputs = {onednn_test::ConvOutputSpec(2, 3, 4), onednn_test::ConvOutputSpec(2, 13, 4)};
  ExpectMatch("concat:mb2ih4iw4_ic3:13", o);
  // DenseNet's shape: a 28-channel blocked tensor (its last block part
  // padding) and 12 more channels. oneDNN would give plain NCHW, which
  // sends the batch norm after it to its slow ncsp kernel: the output is
  // channels-last instead, and still exact.
  o.onednn_inputs = {onednn_test::ConvOutputSpec(2, 28, 4), onednn_test::ConvOutputSpec(2, 12, 4)};
  if (o.onednn_inputs[0].is_plain()) GTEST_SKIP() << "no blocked layout on this CPU";
  ExpectMatch("concat:mb2ih4iw4_ic28:12", o);
  absl::StatusOr<OpDesc> desc = ParseOpDesc("concat:mb2ih4iw4_ic28:12");
  ASSERT_TRUE(desc.ok()) << desc.status();
  auto kernel = OneDnn()->Create(*desc, DType::kF32, o.onednn_inputs);
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  const TensorSpec& out = (*kernel)->signature().output;
  ASSERT_EQ(out.layout, Layout::kBlocked) << out.DebugString();
  // The oneDNN backend's private layout is its memory descriptor.
  const auto* native = static_cast<const dnnl::memory::desc*>(out.native.get());
  ASSERT_NE(native, nullptr);
  EXPECT_TRUE(*native == dnnl::memory::desc({2, 40, 4, 4}, dnnl::memory::data_type::f32,
                                            dnnl::memory::format_tag::nhwc))
      << out.DebugString();
}

TEST(OneDnnConcatTest, MixedLayouts) {
  ASSERT_NE(OneDnn(), nullptr);
  CompareOptions o;
  o.onednn_inputs = {onednn_test::ConvOutputSpec(2, 8, 3),
                     TensorSpec::Plain(DType::kF32, Shape{2, 5, 3, 3})};
  ExpectMatch("concat:mb2ih3iw3_ic8:5", o);
}

// Where the output feeds several layers, the executor hands their gradients
// as dy_parts: each dx_i must be slice i of their sum (five parts: two
// groups of the summing loop), exactly as the reference's backward of the
// summed dy. `expect_sums`: whether this layout takes the parts.
void ExpectPartsSummed(const std::string& text, const std::vector<TensorSpec>& inputs,
                       bool expect_sums) {
  ASSERT_NE(OneDnn(), nullptr);
  absl::StatusOr<OpDesc> desc = ParseOpDesc(text);
  ASSERT_TRUE(desc.ok()) << desc.status();
  auto dnn = kernel_test::CreateKernelUnderTest(*OneDnn(), *desc, DType::kF32, inputs);
  ASSERT_TRUE(dnn.ok()) << dnn.status();
  auto ref = kernel_test::CreateKernelUnderTest(*onednn_test::Reference(), *desc, DType::kF32, {});
  ASSERT_TRUE(ref.ok()) << ref.status();
  const KernelSignature& ds = dnn->kernel->signature();
  const KernelSignature& rs = ref->kernel->signature();
  ASSERT_EQ(ds.sums_output_gradient, expect_sums) << text;
  if (!expect_sums) return;
  constexpr int kParts = 5;
  std::vector<std::vector<float>> parts(kParts,
                                        std::vector<float>(ds.output.bytes / sizeof(float)));
  std::vector<double> sum(rs.output.shape.num_elements(), 0.0);
  KernelArgs args = dnn->buffers.Args();
  args.dy = nullptr;
  for (int p = 0; p < kParts; ++p) {
    const std::vector<double> values = onednn_test::IntegerValues(rs.output.shape, 10 + p, -3, 3);
    ASSERT_TRUE(onednn_test::WritePlain(ds.output, parts[p].data(), values).ok());
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += values[i];
    args.dy_parts.push_back(parts[p].data());
  }
  ASSERT_TRUE(kernel_test::FromDoubles(rs.output, ref->buffers.dy.data(), sum).ok());
  ASSERT_TRUE(ref->kernel->BackwardData(ref->buffers.Args()).ok());
  for (const Buffer& b : dnn->buffers.dx) onednn_test::Poison(b);
  ASSERT_TRUE(dnn->kernel->BackwardData(args).ok());
  for (size_t i = 0; i < rs.inputs.size(); ++i) {
    auto got = onednn_test::ReadPlain(ds.inputs[i], args.dx[i]);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, kernel_test::ToDoubles(rs.inputs[i], ref->buffers.dx[i].data()))
        << text << " dx" << i;
  }
}

TEST(OneDnnConcatTest, SumsSeveralOutputGradientsSliceBySlice) {
  ASSERT_NE(OneDnn(), nullptr);
  ExpectPartsSummed("concat:mb2ih3iw5_ic3:1:4", {}, true);  // plain
  ExpectPartsSummed("concat:mb2ih4iw4_ic16:16:32",
                    {onednn_test::ConvOutputSpec(2, 16, 4), onednn_test::ConvOutputSpec(2, 16, 4),
                     onednn_test::ConvOutputSpec(2, 32, 4)},
                    true);
  // A blocked input beside a plain one: the slices are no single runs in
  // both layouts, so the executor sums first (and the slices are reordered).
  const TensorSpec blocked = onednn_test::ConvOutputSpec(2, 16, 3);
  if (!blocked.is_plain())
    ExpectPartsSummed("concat:mb2ih3iw3_ic16:5",
                      {blocked, TensorSpec::Plain(DType::kF32, Shape{2, 5, 3, 3})}, false);
}

}  // namespace
}  // namespace cnnbench
