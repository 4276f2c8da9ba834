// Layouts on the oneDNN backend: Reorder between plain and blocked specs
// (conv weights with groups, fc weights, NHWC, bf16), SameLayout, and
// blocked layouts flowing through conv -> bn -> relu -> pool, forward and
// backward, against the same chain on the reference backend.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "tests/kernels/onednn_test_util.h"

namespace cnnbench {
namespace {

using onednn_test::IntegerValues;
using onednn_test::OneDnn;
using onednn_test::ReadPlain;
using onednn_test::RealValues;
using onednn_test::Reference;
using onednn_test::WritePlain;

std::unique_ptr<Kernel> MustCreate(Backend& backend, const std::string& text,
                                   const std::vector<TensorSpec>& inputs = {}) {
  absl::StatusOr<OpDesc> desc = ParseOpDesc(text);
  EXPECT_TRUE(desc.ok()) << desc.status();
  if (!desc.ok()) return nullptr;
  auto kernel = backend.Create(*desc, DType::kF32, inputs);
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  return kernel.ok() ? std::move(kernel).value() : nullptr;
}

// Plain -> spec -> plain gives the values back.
void ExpectRoundTrip(const TensorSpec& spec) {
  const TensorSpec plain = TensorSpec::Plain(DType::kF32, spec.shape);
  const std::vector<double> values = IntegerValues(spec.shape, 5, -100, 100);
  std::vector<float> in(values.begin(), values.end());
  std::vector<char> stored(spec.bytes);
  std::vector<float> out(in.size(), -1.0f);
  ASSERT_TRUE(OneDnn()->Reorder(plain, in.data(), spec, stored.data()).ok());
  ASSERT_TRUE(OneDnn()->Reorder(spec, stored.data(), plain, out.data()).ok());
  EXPECT_EQ(out, in) << spec.DebugString();
}

TEST(OneDnnReorderTest, WeightsRoundTrip) {
  ASSERT_NE(OneDnn(), nullptr);
  for (const char* text : {"conv:mb2_ic16oc32_ih8oh8kh3sh1ph1_iw8ow8kw3sw1pw1",
                           "conv:mb2_g2_ic16oc16_ih8oh8kh3sh1ph1_iw8ow8kw3sw1pw1",
                           "conv:mb2_g16_ic16oc16_ih8oh8kh3sh1ph1_iw8ow8kw3sw1pw1"}) {
    std::unique_ptr<Kernel> conv = MustCreate(*OneDnn(), text);
    ASSERT_NE(conv, nullptr);
    ExpectRoundTrip(conv->signature().params[0]);
    ExpectRoundTrip(conv->signature().output);
  }
  std::unique_ptr<Kernel> producer =
      MustCreate(*OneDnn(), "conv:mb2_ic8oc16_ih4oh4kh3sh1ph1_iw4ow4kw3sw1pw1");
  ASSERT_NE(producer, nullptr);
  std::unique_ptr<Kernel> fc =
      MustCreate(*OneDnn(), "fc:mb2ic256oc24", {producer->signature().output});
  ASSERT_NE(fc, nullptr);
  ExpectRoundTrip(fc->signature().params[0]);
}

TEST(OneDnnReorderTest, NhwcAndBf16) {
  ASSERT_NE(OneDnn(), nullptr);
  const Shape shape{2, 3, 4, 5};
  TensorSpec nhwc = TensorSpec::Plain(DType::kF32, shape);
  nhwc.layout = Layout::kNHWC;
  ExpectRoundTrip(nhwc);
  // NHWC element (n=0, c=1, h=0, w=0) sits at offset 1.
  std::vector<float> nchw(shape.num_elements());
  for (size_t i = 0; i < nchw.size(); ++i) nchw[i] = static_cast<float>(i);
  std::vector<float> stored(nchw.size());
  ASSERT_TRUE(OneDnn()
                  ->Reorder(TensorSpec::Plain(DType::kF32, shape), nchw.data(), nhwc, stored.data())
                  .ok());
  EXPECT_EQ(stored[1], 20.0f);
  // Integers up to 256 are exact in bf16.
  ExpectRoundTrip(TensorSpec::Plain(DType::kBF16, Shape{4, 7}));
}

TEST(OneDnnReorderTest, Errors) {
  ASSERT_NE(OneDnn(), nullptr);
  std::vector<float> a(12), b(12);
  absl::Status status = OneDnn()->Reorder(TensorSpec::Plain(DType::kF32, Shape{3, 4}), a.data(),
                                          TensorSpec::Plain(DType::kF32, Shape{2, 5}), b.data());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  TensorSpec no_native = TensorSpec::Plain(DType::kF32, Shape{3, 4});
  no_native.layout = Layout::kBlocked;
  status =
      OneDnn()->Reorder(TensorSpec::Plain(DType::kF32, Shape{3, 4}), a.data(), no_native, b.data());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  status = OneDnn()->Reorder(TensorSpec::Plain(DType::kF32, Shape{3, 4}), nullptr,
                             TensorSpec::Plain(DType::kF32, Shape{3, 4}), b.data());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
}

TEST(OneDnnSameLayoutTest, EqualDescriptorsMatch) {
  ASSERT_NE(OneDnn(), nullptr);
  const std::string text = "conv:mb2_ic16oc32_ih8oh8kh3sh1ph1_iw8ow8kw3sw1pw1";
  std::unique_ptr<Kernel> a = MustCreate(*OneDnn(), text);
  std::unique_ptr<Kernel> b = MustCreate(*OneDnn(), text);
  ASSERT_TRUE(a && b);
  const TensorSpec& x = a->signature().output;
  ASSERT_EQ(x.layout, Layout::kBlocked);
  // Two kernels, two native objects, one layout.
  EXPECT_NE(x.native, b->signature().output.native);
  EXPECT_TRUE(OneDnn()->SameLayout(x, b->signature().output));
  EXPECT_FALSE(OneDnn()->SameLayout(x, TensorSpec::Plain(DType::kF32, x.shape)));
}

// conv -> bn -> relu -> max pool, each created with its producer's spec:
// the blocked layout flows unchanged, and forward and backward agree with
// the reference chain.
TEST(OneDnnChainTest, ConvBnReluPoolMatchesReference) {
  ASSERT_NE(OneDnn(), nullptr);
  const std::vector<std::string> layers = {
      "conv:mb2_ic8oc16_ih9oh9kh3sh1ph1_iw9ow9kw3sw1pw1_bias",
      "bn:mb2ic16ih9iw9_eps0.001mom0.9",
      "relu:mb2ic16ih9iw9",
      "pool:max_mb2ic16_ih9oh5kh3sh2ph1_iw9ow5kw3sw2pw1",
  };
  struct Layer {
    std::unique_ptr<Kernel> kernel;
    kernel_test::KernelBuffers buffers;
  };
  std::vector<Layer> dnn, ref;
  std::vector<TensorSpec> inputs;
  for (const std::string& text : layers) {
    Layer layer;
    layer.kernel = MustCreate(*OneDnn(), text, inputs);
    ASSERT_NE(layer.kernel, nullptr);
    const KernelSignature& sig = layer.kernel->signature();
    if (!inputs.empty()) {
      EXPECT_TRUE(OneDnn()->SameLayout(inputs[0], sig.inputs[0])) << text;
    }
    auto buffers = kernel_test::AllocateBuffers(sig);
    ASSERT_TRUE(buffers.ok()) << buffers.status();
    layer.buffers = std::move(buffers).value();
    inputs = {sig.output};
    dnn.push_back(std::move(layer));
  }
  EXPECT_EQ(dnn[0].kernel->signature().output.layout, Layout::kBlocked);
  EXPECT_EQ(dnn[3].kernel->signature().output.layout, Layout::kBlocked);
  for (const std::string& text : layers) {
    Layer layer;
    layer.kernel = MustCreate(*Reference(), text);
    ASSERT_NE(layer.kernel, nullptr);
    auto buffers = kernel_test::AllocateBuffers(layer.kernel->signature());
    ASSERT_TRUE(buffers.ok()) << buffers.status();
    layer.buffers = std::move(buffers).value();
    ref.push_back(std::move(layer));
  }
  // Same data on both sides: x, every param and state.
  uint64_t seed = 10;
  auto set_both = [&](const TensorSpec& dnn_spec, void* dnn_data, const TensorSpec& ref_spec,
                      void* ref_data, const std::vector<double>& values) {
    ASSERT_TRUE(WritePlain(dnn_spec, dnn_data, values).ok());
    ASSERT_TRUE(kernel_test::FromDoubles(ref_spec, ref_data, values).ok());
  };
  set_both(dnn[0].kernel->signature().inputs[0], dnn[0].buffers.x[0].data(),
           ref[0].kernel->signature().inputs[0], ref[0].buffers.x[0].data(),
           RealValues(Shape{2, 8, 9, 9}, ++seed, -1, 1));
  for (size_t l = 0; l < layers.size(); ++l) {
    const KernelSignature& ds = dnn[l].kernel->signature();
    const KernelSignature& rs = ref[l].kernel->signature();
    for (size_t i = 0; i < ds.params.size(); ++i)
      set_both(ds.params[i], dnn[l].buffers.params[i].data(), rs.params[i],
               ref[l].buffers.params[i].data(), RealValues(rs.params[i].shape, ++seed, 0.5, 1.5));
    for (size_t i = 0; i < ds.state.size(); ++i)
      set_both(ds.state[i], dnn[l].buffers.state[i].data(), rs.state[i],
               ref[l].buffers.state[i].data(), RealValues(rs.state[i].shape, ++seed, 0.5, 1.5));
  }
  // Forward: each layer reads its producer's y, with no reorder in between.
  std::vector<KernelArgs> dnn_args, ref_args;
  for (size_t l = 0; l < layers.size(); ++l) {
    dnn_args.push_back(dnn[l].buffers.Args());
    ref_args.push_back(ref[l].buffers.Args());
    if (l > 0) {
      dnn_args[l].x[0] = dnn_args[l - 1].y;
      ref_args[l].x[0] = ref_args[l - 1].y;
    }
    ASSERT_TRUE(dnn[l].kernel->Forward(dnn_args[l]).ok()) << layers[l];
    ASSERT_TRUE(ref[l].kernel->Forward(ref_args[l]).ok()) << layers[l];
  }
  auto compare = [](const std::string& what, const TensorSpec& dnn_spec, const void* dnn_data,
                    const TensorSpec& ref_spec, const void* ref_data) {
    absl::StatusOr<std::vector<double>> actual = ReadPlain(dnn_spec, dnn_data);
    ASSERT_TRUE(actual.ok()) << actual.status();
    absl::Status status = kernel_test::CompareTensors(
        what, *actual, kernel_test::ToDoubles(ref_spec, ref_data), 1e-4, 1e-5);
    EXPECT_TRUE(status.ok()) << status;
  };
  compare("pool y", dnn[3].kernel->signature().output, dnn_args[3].y,
          ref[3].kernel->signature().output, ref_args[3].y);
  // Backward from the pool's dy down to the conv's dx, dw and db.
  set_both(dnn[3].kernel->signature().output, const_cast<void*>(dnn_args[3].dy),
           ref[3].kernel->signature().output, const_cast<void*>(ref_args[3].dy),
           RealValues(Shape{2, 16, 5, 5}, ++seed, -1, 1));
  for (size_t l = layers.size(); l-- > 0;) {
    if (l + 1 < layers.size()) {
      dnn_args[l].dy = dnn_args[l + 1].dx[0];
      ref_args[l].dy = ref_args[l + 1].dx[0];
    }
    ASSERT_TRUE(dnn[l].kernel->BackwardData(dnn_args[l]).ok()) << layers[l];
    ASSERT_TRUE(ref[l].kernel->BackwardData(ref_args[l]).ok()) << layers[l];
    ASSERT_TRUE(dnn[l].kernel->BackwardWeights(dnn_args[l]).ok()) << layers[l];
    ASSERT_TRUE(ref[l].kernel->BackwardWeights(ref_args[l]).ok()) << layers[l];
  }
  compare("conv dx", dnn[0].kernel->signature().inputs[0], dnn_args[0].dx[0],
          ref[0].kernel->signature().inputs[0], ref_args[0].dx[0]);
  for (size_t l : {0, 1}) {
    for (size_t i = 0; i < ref[l].kernel->signature().params.size(); ++i)
      compare(absl::StrCat(layers[l], " dparam ", i), dnn[l].kernel->signature().params[i],
              dnn_args[l].dparams[i], ref[l].kernel->signature().params[i], ref_args[l].dparams[i]);
  }
}

}  // namespace
}  // namespace cnnbench
