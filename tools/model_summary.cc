// //tools:model_summary: one zoo model's layers, parameters, FLOPs and
// activation memory, or its distinct kernel descriptors (a shape file).
//   ./bazelw run //tools:model_summary -- --model=resnet50 [--classes=1000]
//       [--format=table|shapes] [--batch=N] [--image_size=S] [--batch_norm=on|off]
#include <cstdint>
#include <cstdio>
#include <string>

#include "core/crash_handler.h"
#include "core/invocation.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "models/summary.h"
#include "models/zoo.h"

ABSL_FLAG(std::string, model, "", "zoo model name or other name (resnet50, mobilenet_v2, ...)");
ABSL_FLAG(int64_t, classes, 1001, "label classes (1001 as tf_cnn_benchmarks, or 1000)");
ABSL_FLAG(std::string, format, "table",
          "table: per-layer table and totals; shapes: distinct kernel descriptors with counts");
ABSL_FLAG(int64_t, batch, 0, "batch size of the descriptors (0: the model's default)");
ABSL_FLAG(int64_t, image_size, 0, "square image size (0: the model's own)");
ABSL_FLAG(std::string, batch_norm, "", "on or off (empty: as the model defines it)");

namespace cnnbench {
namespace {

// 25557032 -> "25,557,032".
std::string WithCommas(int64_t value) {
  std::string digits = absl::StrCat(value < 0 ? -value : value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

std::string PerImageShape(const Shape& shape) {
  return shape.rank() == 0 ? "-" : absl::StrJoin(shape.dims(), "x");
}

void PrintTable(absl::string_view model, const ModelInfo& info, int64_t image_size,
                const ModelSummary& s) {
  std::printf("%s: %s; %lldx%lld images, batch %lld, %lld classes\n\n", std::string(model).c_str(),
              info.description.c_str(), static_cast<long long>(image_size),
              static_cast<long long>(image_size), static_cast<long long>(s.batch),
              static_cast<long long>(s.classes));
  size_t name_width = 5;
  for (const LayerSummary& layer : s.layers) name_width = std::max(name_width, layer.name.size());
  const std::string header = absl::StrFormat("%-*s  %-12s  %-14s  %12s  %12s", name_width, "layer",
                                             "op", "output", "params", "MFLOPs");
  std::printf("%s\n%s\n", header.c_str(), std::string(header.size(), '-').c_str());
  for (const LayerSummary& layer : s.layers) {
    std::printf("%s\n", absl::StrFormat("%-*s  %-12s  %-14s  %12s  %12.2f", name_width, layer.name,
                                        layer.op, PerImageShape(layer.output),
                                        WithCommas(layer.parameters), layer.forward_flops / 1e6)
                            .c_str());
  }
  std::printf("\nparameters:                     %s\n", WithCommas(s.parameters).c_str());
  std::printf("forward GFLOPs per image:       %.3f (%.3f G multiply-adds)\n",
              s.forward_flops / 1e9, s.forward_flops / 2e9);
  std::printf("training activations per image: %.2f MiB (fp32, every layer output kept)\n",
              s.activation_bytes / (1024.0 * 1024.0));
}

int Run() {
  const std::string model = absl::GetFlag(FLAGS_model);
  absl::StatusOr<ModelInfo> info = FindModel(model);
  if (!info.ok()) {
    std::fprintf(stderr, "model_summary: %s\n", std::string(info.status().message()).c_str());
    return 2;
  }
  ModelOptions options;
  options.batch = absl::GetFlag(FLAGS_batch);
  options.classes = absl::GetFlag(FLAGS_classes);
  options.image_size = absl::GetFlag(FLAGS_image_size);
  const std::string batch_norm = absl::GetFlag(FLAGS_batch_norm);
  if (batch_norm == "on" || batch_norm == "off") {
    options.batch_norm = batch_norm == "on";
  } else if (!batch_norm.empty()) {
    std::fprintf(stderr, "model_summary: --batch_norm must be on or off, got '%s'\n",
                 batch_norm.c_str());
    return 2;
  }
  const std::string format = absl::GetFlag(FLAGS_format);
  if (format != "table" && format != "shapes") {
    std::fprintf(stderr, "model_summary: --format must be table or shapes, got '%s'\n",
                 format.c_str());
    return 2;
  }
  absl::StatusOr<Graph> graph = BuildModel(model, options);
  if (!graph.ok()) {
    std::fprintf(stderr, "model_summary: %s\n", std::string(graph.status().message()).c_str());
    return 2;
  }
  if (format == "shapes") {
    // One line per distinct descriptor: the string first, so the file reads
    // back as a shape list; the count after a tab.
    for (const KernelShape& shape : DistinctKernelShapes(*graph))
      std::printf("%s\t%d\n", shape.desc.c_str(), shape.count);
    return 0;
  }
  const int64_t image_size = graph->nodes[graph->images].output[2];
  PrintTable(info->name, *info, image_size, Summarize(*graph));
  return 0;
}

}  // namespace
}  // namespace cnnbench

int main(int argc, char** argv) {
  cnnbench::InstallCrashHandler(argv[0]);
  cnnbench::ChangeToInvocationDirectory();
  absl::SetProgramUsageMessage(
      "model_summary --model=NAME [--classes=1000] [--format=table|shapes] [--batch=N] "
      "[--image_size=S] [--batch_norm=on|off]");
  absl::ParseCommandLine(argc, argv);
  return cnnbench::Run();
}
