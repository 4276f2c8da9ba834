// oneDNN ReLU, dropout and the residual add against the reference, in plain
// and blocked layouts; dropout draws the reference's mask.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "kernels/reference/reference_backend.h"
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

// The output spec of a oneDNN convolution producing (n, c, h, w), blocked on
// AVX2/AVX-512 machines for c a multiple of 8.
TensorSpec BlockedSpec(int64_t n, int64_t c, int64_t hw) {
  ConvDesc conv;
  conv.n = n;
  conv.c = 8;
  conv.k = c;
  conv.h = MakeWindowDim(hw, 3, 1, Padding::kSame).value();
  conv.w = conv.h;
  auto kernel = OneDnn()->Create(conv, DType::kF32, {});
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  return kernel.ok() ? (*kernel)->signature().output : TensorSpec();
}

TEST(OneDnnReluTest, Plain) { ExpectMatch("relu:mb2ic5ih7iw3"); }

TEST(OneDnnReluTest, Blocked) {
  ASSERT_NE(OneDnn(), nullptr);
  CompareOptions o;
  o.onednn_inputs = {BlockedSpec(2, 16, 5)};
  ExpectMatch("relu:mb2ic16ih5iw5", o);
}

TEST(OneDnnDropoutTest, SameMaskAsTheReference) {
  ExpectMatch("dropout:mb4ic33ih1iw1_p0.5");
  CompareOptions o;
  o.forward_calls = 3;  // the mask is keyed by the call count
  ExpectMatch("dropout:mb2ic7ih3iw3_p0.3", o);
}

TEST(OneDnnDropoutTest, BlockedInputUsesTheLogicalMask) {
  ASSERT_NE(OneDnn(), nullptr);
  CompareOptions o;
  o.onednn_inputs = {BlockedSpec(2, 16, 3)};
  o.forward_calls = 2;
  ExpectMatch("dropout:mb2ic16ih3iw3_p0.4", o);
}

TEST(OneDnnDropoutTest, InferenceIsTheIdentity) {
  CompareOptions o;
  o.training = false;
  ExpectMatch("dropout:mb2ic10ih2iw2_p0.5", o);
}

TEST(OneDnnAddTest, Plain) { ExpectMatch("add:mb2ic3ih5iw7"); }

TEST(OneDnnAddTest, InputsInDifferentLayouts) {
  ASSERT_NE(OneDnn(), nullptr);
  const TensorSpec blocked = BlockedSpec(2, 16, 4);
  CompareOptions o;
  o.onednn_inputs = {blocked, TensorSpec::Plain(DType::kF32, Shape{2, 16, 4, 4})};
  ExpectMatch("add:mb2ic16ih4iw4", o);
  o.onednn_inputs = {TensorSpec::Plain(DType::kF32, Shape{2, 16, 4, 4}), blocked};
  ExpectMatch("add:mb2ic16ih4iw4", o);
}

TEST(OneDnnAddTest, FusedRelu) {
  ExpectMatch("add:mb2ic3ih5iw7_relu");
  ASSERT_NE(OneDnn(), nullptr);
  // x1 is read in x0's layout whatever its producer's: the one layout the
  // backward loop runs over.
  const TensorSpec blocked = BlockedSpec(2, 16, 4);
  const TensorSpec plain = TensorSpec::Plain(DType::kF32, Shape{2, 16, 4, 4});
  CompareOptions o;
  o.onednn_inputs = {blocked, plain};
  ExpectMatch("add:mb2ic16ih4iw4_relu", o);
  auto kernel =
      OneDnn()->Create(*ParseOpDesc("add:mb2ic16ih4iw4_relu"), DType::kF32, {blocked, plain});
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  const KernelSignature& sig = (*kernel)->signature();
  EXPECT_TRUE(OneDnn()->SameLayout(sig.inputs[1], blocked));
  EXPECT_TRUE(sig.shared_input_gradient);
  EXPECT_TRUE(sig.sums_output_gradient);
  EXPECT_TRUE(sig.backward_reads_output);
}

// The fused add's backward takes dy as parts (an output read by several
// layers): oneDNN's loop against the reference, in a blocked layout, with
// more parts than one pass sums (the rest are added in a second pass), and
// with both dx pointing at one buffer.
TEST(OneDnnAddTest, FusedReluSumsGradientParts) {
  ASSERT_NE(OneDnn(), nullptr);
  std::unique_ptr<Backend> reference = CreateReferenceBackend();
  const TensorSpec blocked = BlockedSpec(2, 16, 4);
  const Shape shape{2, 16, 4, 4};
  const TensorSpec plain = TensorSpec::Plain(DType::kF32, shape);
  const OpDesc desc = *ParseOpDesc("add:mb2ic16ih4iw4_relu");
  auto fast = OneDnn()->Create(desc, DType::kF32, {blocked, blocked});
  auto slow = reference->Create(desc, DType::kF32, {});
  ASSERT_TRUE(fast.ok()) << fast.status();
  ASSERT_TRUE(slow.ok()) << slow.status();
  for (int num_parts : {1, 2, 5}) {
    SCOPED_TRACE(num_parts);
    std::vector<double> x0 = onednn_test::IntegerValues(shape, 1, -3, 3);
    std::vector<double> x1 = onednn_test::IntegerValues(shape, 2, -3, 3);
    std::vector<std::vector<double>> parts;
    for (int p = 0; p < num_parts; ++p)
      parts.push_back(onednn_test::IntegerValues(shape, 10 + p, -4, 4));
    std::vector<double> dx[2];
    for (int which = 0; which < 2; ++which) {
      Kernel& kernel = which == 0 ? **fast : **slow;
      const TensorSpec spec = which == 0 ? blocked : plain;
      auto make = [&] { return *Buffer::Allocate(Device::Cpu(), spec.bytes); };
      Buffer a = make(), b = make(), y = make(), out = make();
      std::vector<Buffer> part_buffers;
      KernelArgs args;
      if (which == 0) {
        ASSERT_TRUE(onednn_test::WritePlain(spec, a.data(), x0).ok());
        ASSERT_TRUE(onednn_test::WritePlain(spec, b.data(), x1).ok());
      } else {
        std::vector<float> fa(x0.begin(), x0.end()), fb(x1.begin(), x1.end());
        std::memcpy(a.data(), fa.data(), spec.bytes);
        std::memcpy(b.data(), fb.data(), spec.bytes);
      }
      for (const auto& values : parts) {
        part_buffers.push_back(make());
        if (which == 0) {
          ASSERT_TRUE(onednn_test::WritePlain(spec, part_buffers.back().data(), values).ok());
        } else {
          std::vector<float> f(values.begin(), values.end());
          std::memcpy(part_buffers.back().data(), f.data(), spec.bytes);
        }
        args.dy_parts.push_back(part_buffers.back().data());
      }
      args.x = {a.data(), b.data()};
      args.y = y.data();
      args.dx = {out.data(), out.data()};
      if (num_parts == 1) {
        args.dy = args.dy_parts[0];
        args.dy_parts.clear();
      }
      ASSERT_TRUE(kernel.Forward(args).ok());
      ASSERT_TRUE(kernel.BackwardData(args).ok());
      if (which == 0) {
        auto read = onednn_test::ReadPlain(spec, out.data());
        ASSERT_TRUE(read.ok()) << read.status();
        dx[0] = *read;
      } else {
        const float* f = static_cast<const float*>(out.data());
        dx[1].assign(f, f + shape.num_elements());
      }
    }
    EXPECT_EQ(dx[0], dx[1]);
    int zeros = 0, nonzero = 0;
    for (double v : dx[1]) (v == 0 ? zeros : nonzero)++;
    EXPECT_GT(zeros, 0);
    EXPECT_GT(nonzero, 0);
  }
}

}  // namespace
}  // namespace cnnbench
