#include "tools/infer_profile.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/random.h"
#include "core/status.h"
#include "kernels/desc.h"

namespace cnnbench {
namespace {

struct Spread {
  double min = 0, median = 0, max = 0;
};

Spread SpreadOf(std::vector<double> v) {
  if (v.empty()) return {};
  std::sort(v.begin(), v.end());
  return {v.front(), v[v.size() / 2], v.back()};
}

// `batches` forward passes, each waited for: their seconds one by one.
absl::StatusOr<std::vector<double>> TimeBatches(Inferencer& inferencer, int batches) {
  std::vector<double> seconds;
  for (int i = 0; i < batches; ++i) {
    const auto begun = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(inferencer.Run());
    RETURN_IF_ERROR(inferencer.Synchronize());
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begun).count());
  }
  return seconds;
}

absl::StatusOr<std::unique_ptr<Inferencer>> Prepared(const Graph& graph, Backend* backend,
                                                     InferOptions options, bool profile,
                                                     const std::vector<float>& images, int warmup) {
  options.profile = profile;
  ASSIGN_OR_RETURN(std::unique_ptr<Inferencer> inferencer,
                   Inferencer::Compile(graph, backend, options));
  RETURN_IF_ERROR(inferencer->SetBatch(images.data()));
  RETURN_IF_ERROR(TimeBatches(*inferencer, warmup).status());
  inferencer->ResetProfile();
  return inferencer;
}

void PrintSpread(const char* what, const std::vector<double>& seconds) {
  const Spread s = SpreadOf(seconds);
  double sum = 0;
  for (double v : seconds) sum += v;
  std::printf("%-30s mean %9.3f ms  (min %.3f, median %.3f, max %.3f; %zu batches)\n", what,
              1e3 * sum / seconds.size(), 1e3 * s.min, 1e3 * s.median, 1e3 * s.max, seconds.size());
}

}  // namespace

std::string LayerKind(const std::string& op) {
  if (absl::StatusOr<ConvDesc> conv = ConvDesc::Parse(op); conv.ok()) {
    std::string kind = absl::StrCat("conv ", conv->h.kernel, "x", conv->w.kernel);
    if (conv->h.stride > 1 || conv->w.stride > 1) absl::StrAppend(&kind, "/", conv->h.stride);
    if (conv->groups > 1)
      absl::StrAppend(&kind, conv->groups == conv->c ? " depthwise" : " grouped");
    if (conv->residual) absl::StrAppend(&kind, "+add");
    return kind;
  }
  const size_t colon = op.find(':');
  if (colon == std::string::npos) return op;
  std::string kind = op.substr(0, colon);
  if (kind == "pool") {
    const size_t underscore = op.find('_', colon);
    absl::StrAppend(&kind, " ", op.substr(colon + 1, underscore - colon - 1));
  }
  return kind;
}

absl::Status ProfileInference(const Graph& graph, Backend* backend,
                              const InferProfileOptions& options) {
  std::vector<float> images(graph.nodes[graph.images].output.num_elements());
  Rng rng(1234);
  for (float& x : images) x = static_cast<float>(rng.Normal());
  // The same plan twice (the timed algorithm choices are the process's).
  ASSIGN_OR_RETURN(std::unique_ptr<Inferencer> plain,
                   Prepared(graph, backend, options.infer, false, images, options.warmup));
  ASSIGN_OR_RETURN(std::unique_ptr<Inferencer> profiled,
                   Prepared(graph, backend, options.infer, true, images, options.warmup));
  ASSIGN_OR_RETURN(const std::vector<double> unprofiled, TimeBatches(*plain, options.batches));
  // Profiled batch by batch: each batch's layer times kept.
  const size_t entries = profiled->profile().size();
  std::vector<std::vector<double>> per_batch(entries);
  std::vector<double> profiled_seconds, profile_sums;
  for (int i = 0; i < options.batches; ++i) {
    ASSIGN_OR_RETURN(const std::vector<double> one, TimeBatches(*profiled, 1));
    profiled_seconds.push_back(one[0]);
    double sum = 0;
    for (size_t e = 0; e < entries; ++e) {
      per_batch[e].push_back(profiled->profile()[e].forward_seconds);
      sum += profiled->profile()[e].forward_seconds;
    }
    profile_sums.push_back(sum);
    profiled->ResetProfile();
  }
  ASSIGN_OR_RETURN(const std::vector<double> unprofiled_after,
                   TimeBatches(*plain, options.batches));

  const std::vector<LayerTime>& profile = profiled->profile();
  std::map<std::string, std::pair<double, int>> by_kind;  // kind -> (ms per batch, layers)
  std::printf("%-40s %-26s %10s %10s\n", "layer", "implementation", "mean ms", "median ms");
  for (size_t e = 0; e < entries; ++e) {
    double sum = 0;
    for (double v : per_batch[e]) sum += v;
    const double mean = sum / options.batches;
    if (mean == 0) continue;  // the loss layer (not run) and the update
    std::printf("%-40s %-26s %10.3f %10.3f\n", profile[e].name.c_str(),
                profile[e].implementation.c_str(), 1e3 * mean, 1e3 * SpreadOf(per_batch[e]).median);
    const std::string kind =
        profile[e].name == "edges" ? "edges (input reorders)" : LayerKind(profile[e].op);
    by_kind[kind].first += 1e3 * mean;
    ++by_kind[kind].second;
  }
  std::printf("\nby kind (ms per batch, layers):\n");
  for (const auto& [kind, sum] : by_kind)
    std::printf("  %-28s %10.3f  %3d\n", kind.c_str(), sum.first, sum.second);
  std::printf(
      "\nfolded batch norms %d, fused ReLUs %d (%d conv epilogues), adds in a conv %d, concats in "
      "place %d\n",
      profiled->folded_batch_norms(), profiled->fused_relus(), profiled->conv_relu_epilogues(),
      profiled->conv_residual_adds(), profiled->concats_in_place());
  PrintSpread("unprofiled batch (before)", unprofiled);
  PrintSpread("profiled batch", profiled_seconds);
  PrintSpread("sum of the profile", profile_sums);
  PrintSpread("unprofiled batch (after)", unprofiled_after);
  double plain_sum = 0, profile_sum = 0;
  for (double v : unprofiled) plain_sum += v;
  for (double v : unprofiled_after) plain_sum += v;
  for (double v : profile_sums) profile_sum += v;
  std::printf("profile / unprofiled batch: %.3f\n",
              (profile_sum / options.batches) / (plain_sum / (2.0 * options.batches)));
  if (!options.per_batch_file.empty()) {
    std::ofstream out(options.per_batch_file);
    out << "layer\tkind";
    for (int i = 0; i < options.batches; ++i) out << "\tbatch" << i << "_ms";
    out << "\n";
    for (size_t e = 0; e < entries; ++e) {
      out << profile[e].name << "\t"
          << (profile[e].name == "edges" ? "edges" : LayerKind(profile[e].op));
      for (double v : per_batch[e]) out << "\t" << 1e3 * v;
      out << "\n";
    }
    if (!out.good())
      return absl::UnavailableError(
          absl::StrCat("could not write the per-batch profile to ", options.per_batch_file));
    std::printf("each profiled batch's layer times: %s\n", options.per_batch_file.c_str());
  }
  return absl::OkStatus();
}

}  // namespace cnnbench
