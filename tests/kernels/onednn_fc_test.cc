// oneDNN fully connected layers against the reference: (N,IC) inputs with
// and without bias, a plain 4-D input flattened, and a blocked 4-D input
// from a convolution (read as the plain matrix, the edge reordered);
// integer data, exact.
#include <string>

#include "gtest/gtest.h"
#include "kernels/desc.h"
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

TEST(OneDnnFcTest, WithBias) { ExpectMatch("fc:mb4ic37oc13"); }
TEST(OneDnnFcTest, WithoutBias) { ExpectMatch("fc:mb3ic64oc10_nobias"); }
TEST(OneDnnFcTest, SingleExample) { ExpectMatch("fc:mb1ic17oc5"); }
// Narrow inputs into wide outputs (the trivial model's second layer): on
// AVX-512 machines oneDNN 2.6's brgemm backward-data kernel segfaulted here.
TEST(OneDnnFcTest, NarrowInputWideOutput) {
  for (const char* shape : {"fc:mb2ic1oc4096", "fc:mb8ic3oc2048", "fc:mb2ic32oc8192"}) {
    SCOPED_TRACE(shape);
    ExpectMatch(shape);
  }
}

TEST(OneDnnFcTest, FlattensAPlain4DInput) {
  CompareOptions o;
  o.onednn_inputs = {TensorSpec::Plain(DType::kF32, Shape{2, 5, 3, 3})};
  ExpectMatch("fc:mb2ic45oc7", o);
}

// A blocked 4-D producer: the fc reads its input as the plain (N, C*H*W)
// matrix (oneDNN's 2-D inner product kernels), and the executor reorders
// the edge.
TEST(OneDnnFcTest, ReadsABlocked4DInputAsAPlainMatrix) {
  ASSERT_NE(OneDnn(), nullptr);
  absl::StatusOr<ConvDesc> conv =
      ConvDesc::Parse("conv:mb2_ic8oc16_ih5oh3kh3sh2ph1_iw5ow3kw3sw2pw1");
  ASSERT_TRUE(conv.ok()) << conv.status();
  absl::StatusOr<std::unique_ptr<Kernel>> producer = OneDnn()->Create(*conv, DType::kF32, {});
  ASSERT_TRUE(producer.ok()) << producer.status();
  const TensorSpec produced = (*producer)->signature().output;
  absl::StatusOr<std::unique_ptr<Kernel>> fc =
      OneDnn()->Create(*FcDesc::Parse("fc:mb2ic144oc9"), DType::kF32, {produced});
  ASSERT_TRUE(fc.ok()) << fc.status();
  ASSERT_FALSE(produced.is_plain()) << produced.DebugString();
  const TensorSpec& input = (*fc)->signature().inputs[0];
  EXPECT_EQ(input.layout, Layout::kNCHW) << input.DebugString();
  EXPECT_EQ(input.shape, produced.shape);
  EXPECT_FALSE(OneDnn()->SameLayout(produced, input));
  // The weights are (OC, IC) whatever oneDNN's layout for them is.
  EXPECT_EQ((*fc)->signature().params[0].shape, (Shape{9, 144}));
  CompareOptions o;
  o.onednn_inputs = {produced};
  ExpectMatch("fc:mb2ic144oc9", o);
}

TEST(OneDnnFcTest, RejectsAnInputOfTheWrongSize) {
  ASSERT_NE(OneDnn(), nullptr);
  absl::StatusOr<std::unique_ptr<Kernel>> fc =
      OneDnn()->Create(*FcDesc::Parse("fc:mb2ic40oc9"), DType::kF32,
                       {TensorSpec::Plain(DType::kF32, Shape{2, 5, 3, 3})});
  ASSERT_FALSE(fc.ok());
  EXPECT_EQ(fc.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(fc.status().message().find("fc:mb2ic40oc9"), absl::string_view::npos) << fc.status();
}

}  // namespace
}  // namespace cnnbench
