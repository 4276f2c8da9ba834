// bf16 on the oneDNN backend (CPUs with avx512_bf16 only; skipped
// elsewhere, with the reason): each op against the fp32 reference. Inputs
// are integers in [-2, 2], exact in bf16; outputs are rounded to bf16's 8
// significant bits, hence rtol 1/128.
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "tests/kernels/onednn_test_util.h"

namespace cnnbench {
namespace {

using onednn_test::CompareOptions;
using onednn_test::CompareWithReference;
using onednn_test::OneDnn;

class OneDnnBf16Test : public ::testing::TestWithParam<std::string> {};

TEST_P(OneDnnBf16Test, MatchesReference) {
  ASSERT_NE(OneDnn(), nullptr);
  absl::StatusOr<OpDesc> desc = ParseOpDesc(GetParam());
  ASSERT_TRUE(desc.ok()) << desc.status();
  auto probe = OneDnn()->Create(*desc, DType::kBF16, {});
  // Skipped only where the CPU lacks bf16; every case here (the fused ReLU6
  // forms included) runs in training where it has it.
  if (!probe.ok() && absl::StrContains(probe.status().message(), "avx512_bf16"))
    GTEST_SKIP() << probe.status().message();
  ASSERT_TRUE(probe.ok()) << probe.status();
  CompareOptions o;
  o.dtype = DType::kBF16;
  o.low = -2;
  o.high = 2;
  o.forward_rtol = o.backward_rtol = 1.0 / 128;
  o.forward_atol = o.backward_atol = 1e-2;
  if (absl::StrContains(GetParam(), "_relu6")) {  // both clips (0 and 6) and past them
    o.low = -3;
    o.high = 9;
  }
  absl::Status status = CompareWithReference(*desc, o);
  EXPECT_TRUE(status.ok()) << status;
}

INSTANTIATE_TEST_SUITE_P(
    Ops, OneDnnBf16Test,
    ::testing::Values(
        "conv:mb2_ic16oc16_ih8oh4kh3sh2pt0pb1_iw8ow4kw3sw2pl0pr1_bias",
        "conv:mb2_ic16oc20_ih6oh6kh3sh1ph1_iw6ow6kw3sw1pw1_bias_relu", "fc:mb4ic64oc16",
        "pool:avg_mb2ic16_ih6oh3kh2sh2ph0_iw6ow3kw2sw2pw0", "relu:mb2ic16ih5iw5",
        "bn:mb2ic16ih5iw5_eps0.001mom0.9", "lrn:mb2ic16ih3iw3_r2k2a0.3b0.75",
        "dropout:mb2ic16ih3iw3_p0.5", "concat:mb2ih3iw3_ic8:16", "add:mb2ic16ih4iw4",
        "softmax_xent:mb4ic10", "bn:mb2ic16ih5iw5_eps0.001mom0.9_relu", "add:mb2ic16ih4iw4_relu",
        "relu:mb2ic16ih5iw5_relu6", "spad:mb2ic16ih5iw4_t-1b2l1r-2",
        "droppath:mb8ic16ih3iw3_k0.5r0", "bn:mb2ic16ih5iw5_eps0.001mom0.9_relu6",
        "add:mb2ic16ih4iw4_relu6", "conv:mb2_ic16oc20_ih6oh6kh3sh1ph1_iw6ow6kw3sw1pw1_bias_relu6",
        "relu:mb2ic16ih5iw5_sigmoid", "relu:mb2ic16ih5iw5_silu", "relu:mb2ic16ih5iw5_hardsigmoid",
        "relu:mb2ic16ih5iw5_hardswish", "relu:mb2ic16ih5iw5_gelu", "relu:mb2ic16ih5iw5_gelu_tanh"),
    [](const ::testing::TestParamInfo<std::string>& info) {
      std::string name = info.param.substr(0, info.param.find(':'));
      return name + "_" + std::to_string(info.index);
    });

}  // namespace
}  // namespace cnnbench
