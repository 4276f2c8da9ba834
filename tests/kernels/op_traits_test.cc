// Each op's facts in one place (kernels/op_traits.h): the traits agree with
// the kernels the backends build for every layer of the zoo, the kinds
// parse and print, and an op of a test's own gets every fact the suite
// reads (parse, print, parameters, initialisers, FLOPs, bytes, kernel
// cases) from its traits alone.
#include "kernels/op_traits.h"

#include <set>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "bench/cases/kernel/layer_cases.h"
#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "kernels/kernel.h"
#include "models/summary.h"
#include "models/zoo.h"

namespace cnnbench {

// A toy elementwise op with one per-channel parameter: y = x * scale.
struct ToyScaleDesc {
  Dims4 dims;
  std::string ToString() const {
    return absl::StrCat("toyscale:mb", dims.n, "ic", dims.c, "ih", dims.h, "iw", dims.w);
  }
  static absl::StatusOr<ToyScaleDesc> Parse(absl::string_view text) {
    ToyScaleDesc d;
    int64_t v[4];
    std::vector<std::string> parts;
    std::string rest(text);
    if (!absl::ConsumePrefix(&text, "toyscale:mb"))
      return absl::InvalidArgumentError(absl::StrCat("bad toyscale '", rest, "'"));
    for (absl::string_view key : {"ic", "ih", "iw", ""}) {
      const size_t at = key.empty() ? text.size() : text.find(key);
      if (at == absl::string_view::npos)
        return absl::InvalidArgumentError(absl::StrCat("bad toyscale '", rest, "'"));
      parts.emplace_back(text.substr(0, at));
      text.remove_prefix(std::min(text.size(), at + key.size()));
    }
    for (int i = 0; i < 4; ++i)
      if (!absl::SimpleAtoi(parts[i], &v[i]))
        return absl::InvalidArgumentError(absl::StrCat("bad toyscale '", rest, "'"));
    d.dims = {v[0], v[1], v[2], v[3]};
    return d;
  }
};

template <>
struct OpTraits<ToyScaleDesc> {
  static constexpr absl::string_view kKind = "toyscale";
  static constexpr absl::string_view kSample = "toyscale:mb2ic3ih4iw5";
  static std::vector<Shape> Parameters(const ToyScaleDesc& d) { return {Shape{d.dims.c}}; }
  static ParamFact Init(const ToyScaleDesc&, int) { return {ParamInit::kOne}; }
  static std::vector<Shape> State(const ToyScaleDesc&) { return {}; }
  static float StateStart(const ToyScaleDesc&, int) { return 0; }
  static double ForwardFlops(const ToyScaleDesc& d) {
    return static_cast<double>(d.dims.elements());
  }
  static double PassBytes(const ToyScaleDesc& d, OpPass pass, DType t) {
    const double bytes = static_cast<double>(SizeOf(t)) * d.dims.elements();
    return pass == OpPass::kForward ? 2 * bytes : 3 * bytes;
  }
  static std::optional<Dims4> ActivationInput(const ToyScaleDesc& d) { return d.dims; }
  static std::optional<Shape> ReshapedInput(const ToyScaleDesc& d) { return d.dims.shape(); }
  static BenchFact Bench(const ToyScaleDesc&) {
    return {KernelCaseFamily::kConv,  // a family of the suite's; its passes are conv's
            {{"fwd", OpPass::kForward, false},
             {"bwd_data", OpPass::kBackwardData, true},
             {"bwd_filter", OpPass::kBackwardWeights, false}}};
  }
  static std::optional<ToyScaleDesc> WithActivation(const ToyScaleDesc&, ActivationKind, PlanUse) {
    return std::nullopt;
  }
};

namespace {

TEST(OpTraitsTest, AToyOpGetsEveryFactFromItsTraitsAlone) {
  using ToyOps = std::variant<ReluDesc, ToyScaleDesc>;
  const std::string text = "toyscale:mb2ic3ih4iw5";
  auto parsed = ParseOpOf<ToyOps>(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_TRUE(std::holds_alternative<ToyScaleDesc>(*parsed));
  const ToyScaleDesc& toy = std::get<ToyScaleDesc>(*parsed);
  EXPECT_EQ(toy.ToString(), text);
  EXPECT_EQ(toy.dims, (Dims4{2, 3, 4, 5}));
  // The other alternative still parses; an unknown kind lists both.
  EXPECT_TRUE(std::holds_alternative<ReluDesc>(*ParseOpOf<ToyOps>("relu:mb1ic2ih3iw4")));
  auto unknown = ParseOpOf<ToyOps>("gelu:mb1ic2ih3iw4");
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(absl::StrContains(unknown.status().message(), "(known: relu, toyscale)"))
      << unknown.status();

  EXPECT_EQ(ParameterCountOf(toy), 3);
  EXPECT_EQ(OpTraits<ToyScaleDesc>::Init(toy, 0).init, ParamInit::kOne);
  EXPECT_EQ(OpTraits<ToyScaleDesc>::ForwardFlops(toy), 120);
  EXPECT_EQ(OpTraits<ToyScaleDesc>::PassBytes(toy, OpPass::kBackwardData, DType::kBF16), 720);

  // Its kernel cases, as the suite registers them for a layer.
  const bench::LayerCases with_dx = bench::LayerCasesOf(toy, /*inputs_need_grad=*/true);
  EXPECT_EQ(with_dx.family, bench::Family::kConv);
  EXPECT_EQ(with_dx.shape, text);
  ASSERT_EQ(with_dx.passes.size(), 3u);
  EXPECT_EQ(with_dx.passes[1].name, "bwd_data");
  const bench::LayerCases first_layer = bench::LayerCasesOf(toy, /*inputs_need_grad=*/false);
  ASSERT_EQ(first_layer.passes.size(), 2u);  // no input gradient: no bwd_data case
  EXPECT_EQ(first_layer.passes[1].name, "bwd_filter");
}

// Every alternative of OpDesc, through its traits' sample: the kinds are
// distinct, and each sample parses to its own alternative and prints back;
// the activation samples after them parse and print back too.
TEST(OpTraitsTest, EveryKindParsesAndTheUnknownListsThem) {
  const std::vector<absl::string_view> kinds = OpKinds();
  const std::vector<absl::string_view> samples = OpSamples();
  ASSERT_EQ(kinds.size(), std::variant_size_v<OpDesc>);
  ASSERT_EQ(samples.size(), kinds.size() + kActivationSamples.size());
  EXPECT_EQ(std::set<absl::string_view>(samples.begin(), samples.end()).size(), samples.size());
  EXPECT_EQ(std::set<absl::string_view>(kinds.begin(), kinds.end()).size(), kinds.size());
  for (size_t i = kinds.size(); i < samples.size(); ++i) {
    auto op = ParseOpDesc(samples[i]);
    ASSERT_TRUE(op.ok()) << samples[i] << ": " << op.status();
    EXPECT_EQ(OpDescToString(*op), samples[i]);
  }
  for (size_t i = 0; i < kinds.size(); ++i) {
    auto op = ParseOpDesc(samples[i]);
    ASSERT_TRUE(op.ok()) << samples[i] << ": " << op.status();
    EXPECT_EQ(op->index(), i) << samples[i] << " parses as another op";
    EXPECT_EQ(OpDescToString(*op), samples[i]);
    EXPECT_EQ(OpKind(*op), kinds[i]);
    EXPECT_TRUE(absl::StartsWith(samples[i], absl::StrCat(kinds[i], ":"))) << samples[i];
  }
  auto bad = ParseOpDesc("gelu:mb1ic2ih3iw4");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(
      bad.status().message(),
      absl::StrCat("unknown op 'gelu' (known: ", absl::StrJoin(kinds, ", "), ")")))
      << bad.status();
}

// Every op whose traits name a kernel-case family: that family is one the
// suite registers, its descriptors are the op's kind, and each pass's case
// name parses back to the same case (the suite registers and the report
// reads exactly these names).
TEST(OpTraitsTest, EveryKernelCaseFamilyIsTheSuitesAndItsNamesRoundTrip) {
  std::set<bench::Family> covered;
  for (absl::string_view sample : OpSamples()) {
    auto op = ParseOpDesc(sample);
    ASSERT_TRUE(op.ok()) << sample;
    const BenchFact fact = BenchFacts(*op);
    if (!fact.family) {
      EXPECT_TRUE(fact.passes.empty()) << sample;
      continue;
    }
    const bench::Family id = bench::CaseFamilyOf(*fact.family);
    covered.insert(id);
    const bench::CaseFamily& family = bench::FamilyOf(id);
    EXPECT_TRUE(family.registered) << sample;
    EXPECT_EQ(family.shape_kind, OpKind(*op)) << sample;
    ASSERT_FALSE(fact.passes.empty()) << sample;
    for (const BenchPassFact& pass : fact.passes) {
      const std::string name =
          bench::KernelCaseName(id, pass.name, "fp32", "cpu", std::string(sample));
      auto parsed = bench::ParseCaseName(name);
      ASSERT_TRUE(parsed.ok()) << name << ": " << parsed.status();
      EXPECT_EQ(parsed->ToString(), name);
      EXPECT_TRUE(parsed->Is(id)) << name;
    }
  }
  // Every kernel-case family has an op.
  EXPECT_EQ(covered.size(), kKernelCaseFamilyCount);
}

// Every distinct layer of the zoo: the reference backend's kernel has the
// parameters and state tensors the traits name, of the sizes they say.
TEST(OpTraitsTest, EveryZooLayersKernelHasTheTensorsItsTraitsName) {
  auto backend = CreateBackend("reference", Device::Cpu());
  ASSERT_TRUE(backend.ok()) << backend.status();
  int checked = 0;
  for (const char* model : {"alexnet", "googlenet", "resnet50_v1.5", "inception3", "vgg16"}) {
    auto graph = BuildModel(model, {.batch = 2});
    ASSERT_TRUE(graph.ok()) << model << ": " << graph.status();
    for (const KernelShape& shape : DistinctKernelShapes(*graph)) {
      auto op = ParseOpDesc(shape.desc);
      ASSERT_TRUE(op.ok()) << shape.desc;
      auto kernel = (*backend)->Create(*op, DType::kF32, {});
      ASSERT_TRUE(kernel.ok()) << shape.desc << ": " << kernel.status();
      const KernelSignature& sig = (*kernel)->signature();
      const std::vector<Shape> params = ParameterShapes(*op), state = StateShapes(*op);
      ASSERT_EQ(sig.params.size(), params.size()) << shape.desc;
      for (size_t i = 0; i < params.size(); ++i)
        EXPECT_EQ(sig.params[i].shape.num_elements(), params[i].num_elements()) << shape.desc;
      ASSERT_EQ(sig.state.size(), state.size()) << shape.desc;
      for (size_t i = 0; i < state.size(); ++i)
        EXPECT_EQ(sig.state[i].shape.num_elements(), state[i].num_elements()) << shape.desc;
      EXPECT_EQ(HasParameters(*op), !params.empty()) << shape.desc;
      ++checked;
    }
  }
  EXPECT_GT(checked, 50);
}

// What the suite's cases read off the traits: FLOPs only for conv and fc
// in a model, bytes for the memory-bound kernel families, a family for
// exactly the layers with kernel cases.
TEST(OpTraitsTest, FlopsBytesAndFamiliesFollowTheOp) {
  auto graph = BuildModel("resnet50_v1.5", {.batch = 2});
  ASSERT_TRUE(graph.ok()) << graph.status();
  std::set<std::string> families;
  auto name = [](const BenchFact& f) {
    return f.family ? bench::FamilyName(bench::CaseFamilyOf(*f.family)) : std::string();
  };
  for (const Node& node : graph->nodes) {
    if (node.kind != Node::Kind::kOp) continue;
    const absl::string_view kind = OpKind(node.op);
    const BenchFact bench = BenchFacts(node.op);
    families.insert(name(bench));
    if (kind == "conv" || kind == "fc") {
      EXPECT_GT(ForwardFlops(node.op), 0) << node.name;
      EXPECT_EQ(PassBytes(node.op, OpPass::kForward, DType::kF32), 0) << node.name;
    } else {
      EXPECT_EQ(ForwardFlops(node.op), 0) << node.name;
    }
    if (bench.family == KernelCaseFamily::kPool || bench.family == KernelCaseFamily::kBatchNorm ||
        bench.family == KernelCaseFamily::kRelu) {
      EXPECT_GT(PassBytes(node.op, OpPass::kBackwardData, DType::kBF16), 0) << node.name;
    }
  }
  EXPECT_EQ(families, (std::set<std::string>{"", "conv", "fc", "pool", "batchnorm", "relu"}));
}

}  // namespace
}  // namespace cnnbench
