// The oneDNN convolution's algorithm (--cpu_conv_algorithm, conv_choices.h):
// every mode against the reference backend, within a tolerance stated per
// algorithm (Winograd rounds differently from a direct sum); Winograd taken
// where oneDNN 2.6 has it (3x3 stride 1 fp32 on AVX-512) and direct where it
// does not; the timed choice made once per descriptor and pass, kept, and
// taken from another rank's text; each pass's implementation named.
#include <omp.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "kernels/onednn/onednn_backend.h"
#include "tests/kernels/onednn_test_util.h"

namespace cnnbench {
namespace {

using onednn_test::CompareOptions;
using onednn_test::CompareWithReference;
using ::testing::HasSubstr;

// oneDNN 2.6 has Winograd F(4x4, 3x3) for fp32 training on avx512_core.
bool CpuHasWinograd() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
}

ConvDesc Conv3x3(int64_t n, int64_t c, int64_t k, int64_t hw, bool bias) {
  ConvDesc d;
  d.n = n;
  d.c = c;
  d.k = k;
  d.bias = bias;
  d.h = MakeWindowDim(hw, 3, 1, Padding::kSame, 1, 0, 0).value();
  d.w = MakeWindowDim(hw, 3, 1, Padding::kSame, 1, 0, 0).value();
  return d;
}

std::unique_ptr<Backend> MakeOneDnn(CpuConvAlgorithm algorithm, ConvChoices* choices) {
  OneDnnOptions options;
  options.conv_algorithm = algorithm;
  options.choices = choices;
  auto backend = CreateOneDnnBackend(options);
  EXPECT_TRUE(backend.ok()) << backend.status();
  return backend.ok() ? *std::move(backend) : nullptr;
}

std::vector<std::string> PassImplementations(Backend& backend, const ConvDesc& d) {
  auto kernel = backend.Create(OpDesc(d), DType::kF32, {});
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  if (!kernel.ok()) return {};
  return {(*kernel)->pass_implementation(OpPass::kForward),
          (*kernel)->pass_implementation(OpPass::kBackwardData),
          (*kernel)->pass_implementation(OpPass::kBackwardWeights)};
}

bool IsWinograd(const std::string& implementation) {
  return absl::StrContains(implementation, "wino");
}

// Real-valued data: Winograd's transforms are not exact on integers either.
// Direct convolution in fp32 agrees with the double-precision reference to a
// few ulps of the sums; Winograd F(4x4, 3x3) to about 1e-4 of them (its
// transforms scale the terms by up to ~10 and sum them back).
struct ModeCase {
  CpuConvAlgorithm algorithm;
  double rtol, atol;
};

class ConvAlgorithmTest : public ::testing::TestWithParam<ModeCase> {};

TEST_P(ConvAlgorithmTest, MatchesReferenceInEveryPass) {
  ConvChoices choices;
  std::unique_ptr<Backend> backend = MakeOneDnn(GetParam().algorithm, &choices);
  ASSERT_NE(backend, nullptr);
  for (const ConvDesc& d : {Conv3x3(2, 16, 16, 12, true), Conv3x3(2, 64, 64, 7, false)}) {
    CompareOptions o;
    o.onednn = backend.get();
    o.integers = false;
    o.low = -1;
    o.high = 1;
    o.forward_rtol = o.backward_rtol = GetParam().rtol;
    o.forward_atol = o.backward_atol = GetParam().atol;
    const absl::Status status = CompareWithReference(OpDesc(d), o);
    EXPECT_TRUE(status.ok()) << d.ToString() << " " << CpuConvAlgorithmName(GetParam().algorithm)
                             << ": " << status;
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, ConvAlgorithmTest,
                         ::testing::Values(ModeCase{CpuConvAlgorithm::kDirect, 1e-5, 1e-5},
                                           ModeCase{CpuConvAlgorithm::kWinograd, 2e-4, 2e-4},
                                           ModeCase{CpuConvAlgorithm::kAuto, 2e-4, 2e-4},
                                           ModeCase{CpuConvAlgorithm::kTimed, 2e-4, 2e-4}),
                         [](const auto& info) {
                           return std::string(CpuConvAlgorithmName(info.param.algorithm));
                         });

TEST(ConvAlgorithmChoiceTest, WinogradWhereTheLibraryHasItDirectElsewhere) {
  ConvChoices choices;
  std::unique_ptr<Backend> winograd = MakeOneDnn(CpuConvAlgorithm::kWinograd, &choices);
  std::unique_ptr<Backend> direct = MakeOneDnn(CpuConvAlgorithm::kDirect, &choices);
  ASSERT_TRUE(winograd && direct);
  // 1x1 and stride 2: no Winograd in oneDNN; the mode falls back to direct.
  ConvDesc one_by_one = Conv3x3(2, 32, 32, 8, false);
  one_by_one.h = MakeWindowDim(8, 1, 1, Padding::kSame, 1, 0, 0).value();
  one_by_one.w = one_by_one.h;
  for (const std::string& impl : PassImplementations(*winograd, one_by_one))
    EXPECT_FALSE(IsWinograd(impl)) << impl;
  for (const std::string& impl : PassImplementations(*direct, Conv3x3(2, 64, 64, 14, false)))
    EXPECT_FALSE(IsWinograd(impl)) << impl;
  EXPECT_EQ(choices.size(), 0u) << "only the timed mode keeps choices";
  if (!CpuHasWinograd()) GTEST_SKIP() << "no AVX-512 here: oneDNN 2.6 has no Winograd";
  for (const std::string& impl : PassImplementations(*winograd, Conv3x3(2, 64, 64, 14, false)))
    EXPECT_TRUE(IsWinograd(impl)) << impl;
}

TEST(ConvAlgorithmChoiceTest, TimedChoosesOncePerDescriptorAndPassAndKeepsIt) {
  ConvChoices choices;
  const ConvDesc d = Conv3x3(4, 64, 64, 14, false);
  std::unique_ptr<Backend> first = MakeOneDnn(CpuConvAlgorithm::kTimed, &choices);
  ASSERT_NE(first, nullptr);
  const std::vector<std::string> chosen = PassImplementations(*first, d);
  EXPECT_EQ(choices.size(), 3u) << choices.Serialize();
  const std::string recorded = choices.Serialize();
  // A second kernel, and a second backend on the same choices: the same
  // implementations, nothing timed again (the record is unchanged).
  EXPECT_EQ(PassImplementations(*first, d), chosen);
  std::unique_ptr<Backend> second = MakeOneDnn(CpuConvAlgorithm::kTimed, &choices);
  EXPECT_EQ(PassImplementations(*second, d), chosen);
  EXPECT_EQ(choices.Serialize(), recorded);
  // Each recorded choice is the faster of the two it timed (or direct,
  // alone), and each pass runs what its record says.
  const std::vector<std::string> passes = {"fwd", "bwd_data", "bwd_weights"};
  for (size_t i = 0; i < passes.size(); ++i) {
    const std::optional<ConvChoice> c =
        choices.Find(ConvChoices::Key(d.ToString(), "fp32", passes[i], omp_get_max_threads()));
    ASSERT_TRUE(c.has_value()) << passes[i] << "\n" << recorded;
    if (c->algorithm == "winograd") {
      EXPECT_LT(c->seconds, c->direct_seconds) << passes[i];
    }
    EXPECT_EQ(IsWinograd(chosen[i]), c->algorithm == "winograd") << passes[i] << ": " << chosen[i];
  }
}

// Another rank's choices, merged, are what a timed kernel runs: every
// replica and rank runs the same algorithms.
TEST(ConvAlgorithmChoiceTest, MergedChoicesAreRunWithoutTiming) {
  if (!CpuHasWinograd()) GTEST_SKIP() << "no AVX-512 here: oneDNN 2.6 has no Winograd";
  const ConvDesc d = Conv3x3(2, 32, 32, 10, true);
  ConvChoices choices;
  std::unique_ptr<Backend> backend = MakeOneDnn(CpuConvAlgorithm::kTimed, &choices);
  ASSERT_NE(backend, nullptr);
  std::string text;
  const std::vector<std::string> passes = {"fwd", "bwd_data", "bwd_weights"};
  for (const std::string& pass : passes) {
    const std::string key = ConvChoices::Key(d.ToString(), "fp32", pass, omp_get_max_threads());
    // Winograd for the forward and the weight gradient, direct for the data gradient.
    absl::StrAppend(&text, key, "\t", pass == "bwd_data" ? "direct" : "winograd", "\t1\t2\n");
  }
  ASSERT_TRUE(choices.Merge(text).ok());
  const std::vector<std::string> impls = PassImplementations(*backend, d);
  ASSERT_EQ(impls.size(), 3u);
  EXPECT_TRUE(IsWinograd(impls[0])) << impls[0];
  EXPECT_FALSE(IsWinograd(impls[1])) << impls[1];
  EXPECT_TRUE(IsWinograd(impls[2])) << impls[2];
  EXPECT_EQ(choices.size(), 3u);
  // The kernel still matches the reference with its mixed passes.
  CompareOptions o;
  o.onednn = backend.get();
  o.integers = false;
  o.low = -1;
  o.high = 1;
  o.forward_rtol = o.backward_rtol = o.forward_atol = o.backward_atol = 2e-4;
  EXPECT_TRUE(CompareWithReference(OpDesc(d), o).ok());
}

TEST(ConvAlgorithmChoiceTest, BadTextAndNamesAreErrors) {
  ConvChoices choices;
  const absl::Status bad = choices.Merge("key\tfft\t1\t2\n");
  EXPECT_THAT(std::string(bad.message()), HasSubstr("line 1"));
  EXPECT_FALSE(choices.Merge("key\tdirect\tone\t2\n").ok());
  EXPECT_EQ(choices.size(), 0u);
  EXPECT_FALSE(ParseCpuConvAlgorithm("fastest").ok());
  EXPECT_THAT(std::string(ParseCpuConvAlgorithm("fastest").status().message()),
              HasSubstr("timed, direct, winograd, auto"));
  for (CpuConvAlgorithm a : {CpuConvAlgorithm::kTimed, CpuConvAlgorithm::kDirect,
                             CpuConvAlgorithm::kWinograd, CpuConvAlgorithm::kAuto})
    EXPECT_EQ(*ParseCpuConvAlgorithm(CpuConvAlgorithmName(a)), a);
}

// --cpu_conv_algorithm=direct runs what the backend ran before there was a
// choice: the bits of two direct kernels agree, and none is Winograd.
TEST(ConvAlgorithmChoiceTest, DirectIsTheSameKernelEveryTime) {
  CompareOptions o;
  o.integers = true;  // exact: direct sums of small integers
  EXPECT_TRUE(CompareWithReference(OpDesc(Conv3x3(2, 16, 16, 12, true)), o).ok());
}

}  // namespace
}  // namespace cnnbench
