// The facts of any op through its OpTraits, and the descriptor-level
// functions of desc.h that dispatch on the kind (parse, print, kind,
// parameters).
#include "kernels/op_traits.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cnnbench {

std::vector<Shape> ParameterShapes(const OpDesc& op) {
  return VisitOpTraits(op, [](const auto& d, auto traits) { return traits.Parameters(d); });
}

int64_t ParameterCount(const OpDesc& op) {
  return std::visit([](const auto& d) { return ParameterCountOf(d); }, op);
}

ParamFact ParameterInit(const OpDesc& op, int index) {
  return VisitOpTraits(op, [&](const auto& d, auto traits) { return traits.Init(d, index); });
}

std::vector<Shape> StateShapes(const OpDesc& op) {
  return VisitOpTraits(op, [](const auto& d, auto traits) { return traits.State(d); });
}

float StateStart(const OpDesc& op, int index) {
  return VisitOpTraits(op, [&](const auto& d, auto traits) { return traits.StateStart(d, index); });
}

double ForwardFlops(const OpDesc& op) {
  return VisitOpTraits(op, [](const auto& d, auto traits) { return traits.ForwardFlops(d); });
}

double PassBytes(const OpDesc& op, OpPass pass, DType dtype) {
  return VisitOpTraits(
      op, [&](const auto& d, auto traits) { return traits.PassBytes(d, pass, dtype); });
}

std::optional<Dims4> ActivationInput(const OpDesc& op) {
  return VisitOpTraits(op, [](const auto& d, auto traits) { return traits.ActivationInput(d); });
}

std::optional<Shape> ReshapedInput(const OpDesc& op) {
  return VisitOpTraits(op, [](const auto& d, auto traits) { return traits.ReshapedInput(d); });
}

BenchFact BenchFacts(const OpDesc& op) {
  return VisitOpTraits(op, [](const auto& d, auto traits) { return traits.Bench(d); });
}

std::optional<OpDesc> WithActivation(const OpDesc& op, ActivationKind kind, PlanUse use) {
  return VisitOpTraits(op, [kind, use](const auto& d, auto traits) -> std::optional<OpDesc> {
    auto fused = traits.WithActivation(d, kind, use);
    if (!fused) return std::nullopt;
    return OpDesc(*std::move(fused));
  });
}

// ---- desc.h's functions over any op.

ActivationKind FusedActivation(const OpDesc& desc) {
  return std::visit(
      [](const auto& d) {
        using T = std::decay_t<decltype(d)>;
        if constexpr (std::is_same_v<T, ConvDesc> || std::is_same_v<T, BatchNormDesc> ||
                      std::is_same_v<T, AddDesc>) {
          return d.activation;
        } else {
          return ActivationKind::kNone;
        }
      },
      desc);
}

std::string OpDescToString(const OpDesc& desc) {
  return std::visit([](const auto& d) { return d.ToString(); }, desc);
}

absl::string_view OpKind(const OpDesc& desc) {
  return VisitOpTraits(desc, [](const auto&, auto traits) { return traits.kKind; });
}

bool HasParameters(const OpDesc& desc) { return !ParameterShapes(desc).empty(); }

std::vector<absl::string_view> OpKinds() { return OpKindsOf<OpDesc>(); }

std::vector<absl::string_view> OpSamples() {
  std::vector<absl::string_view> samples = OpSamplesOf<OpDesc>();
  samples.insert(samples.end(), kActivationSamples.begin(), kActivationSamples.end());
  return samples;
}

absl::StatusOr<OpDesc> ParseOpDesc(absl::string_view text) { return ParseOpOf<OpDesc>(text); }

}  // namespace cnnbench
