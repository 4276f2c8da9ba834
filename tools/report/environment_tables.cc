#include "tools/report/environment_tables.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/report/model_names.h"
#include "tools/report/train_query.h"

namespace cnnbench::report {
namespace {

// The date part of ISO timestamps; several distinct dates become a range.
std::string DateRange(const std::vector<std::string>& values) {
  std::set<std::string> dates;
  for (const std::string& v : values) dates.insert(v.substr(0, 10));
  if (dates.empty()) return "unknown";
  if (dates.size() == 1) return *dates.begin();
  return absl::StrCat(*dates.begin(), " to ", *dates.rbegin());
}

std::string ShortCommits(const std::vector<std::string>& commits) {
  std::vector<std::string> out;
  for (const std::string& c : commits) {
    // A 40-hex commit reads as its first 7 characters, as the published page wrote it.
    bool dirty = c.size() > 6 && c.substr(c.size() - 6) == "-dirty";
    out.push_back(c.size() >= 40 ? absl::StrCat(c.substr(0, 7), dirty ? "-dirty" : "") : c);
  }
  return out.empty() ? "unknown" : absl::StrJoin(out, ", ");
}

std::string OrUnknown(const std::string& value) { return value.empty() ? "unknown" : value; }

std::string GpuText(const PlatformResults& p) {
  std::vector<std::string> counts = p.ContextValues("gpu_count");
  std::string model = p.Context("gpu_model");
  if (counts.empty()) return "unknown";
  if (counts.size() == 1 && (counts[0] == "0" || model == "none")) return "none";
  return absl::StrCat(absl::StrJoin(counts, " or "), "x ", OrUnknown(model));
}

}  // namespace

Table EnvironmentTable(const PlatformResults& p) {
  Table t;
  t.title = "Environment";
  t.header = {"Item", "Value"};
  std::string instance = p.Context("instance_type");
  if (instance.empty()) instance = p.Context("host_name");
  std::string cpu = OrUnknown(p.Context("cpu_model"));
  if (!p.Context("cpu_cores").empty())
    absl::StrAppend(&cpu, ", ", p.Context("cpu_cores"), " cores");
  std::string dataset = p.Context("dataset");
  if (dataset.empty())
    dataset = MeasuredDataKinds(p).empty() ? "n/a" : absl::StrJoin(MeasuredDataKinds(p), ", ");
  t.rows = {
      {"Instance type", OrUnknown(instance)},
      {"GPU", GpuText(p)},
      {"CPU", cpu},
      {"OS", OrUnknown(p.Context("os"))},
      {"CUDA / cuDNN", absl::StrCat(OrUnknown(p.Context("cuda_toolkit_version")), " / ",
                                    OrUnknown(p.Context("cudnn_version")))},
      {"NCCL", OrUnknown(p.Context("nccl_version"))},
      {"oneDNN", OrUnknown(p.Context("onednn_version"))},
      {"cnnbench commit", ShortCommits(p.ContextValues("git_commit"))},
      {"Build", OrUnknown(p.Context("build_config"))},
      {"Dataset", dataset},
      {"Methodology", OrUnknown(p.Context("methodology"))},
      {"Test date", DateRange(p.ContextValues("date"))},
      {"Runs merged", absl::StrJoin(p.files, ", ")},
  };
  // A run stopped by a signal holds only the cases finished before it.
  const std::vector<std::string> interrupted = p.ContextValues("interrupted");
  if (!interrupted.empty())
    t.rows.push_back({"Interrupted", absl::StrCat(absl::StrJoin(interrupted, "; "),
                                                  ": the tables hold what finished")});
  // A peer's run (or one that names its framework) says which, and how it was set up.
  if (!p.Context("framework").empty()) {
    t.rows.insert(t.rows.begin() + 1, {"Framework", p.framework});
    const std::string settings = p.Context("framework_settings");
    t.rows.insert(t.rows.begin() + 2,
                  {"Framework settings", settings.empty() ? "not recorded" : settings});
  }
  return t;
}

Table OptionsTable(const PlatformResults& p) {
  Table t;
  t.title = "Options";
  t.header = {"Options"};
  const auto primary = PrimaryBatches(p);
  std::vector<std::string> batch_row = {"Batch size per GPU"};
  std::vector<std::string> optimizer_row = {"Optimizer"};
  std::vector<std::string> precision_row = {"Precision"};
  std::string optimizer = p.Context("optimizer");
  std::vector<std::string> also;  // other batch sizes, for the note
  for (const std::string& model : TrainModels(p)) {
    t.header.push_back(ModelDisplayName(model));
    std::vector<std::string> batches, precisions, others;
    for (const auto& [key, batch] : primary) {
      if (key.first == model) AddDistinct(absl::StrCat(batch), batches);
    }
    for (const std::string& precision : TrainPrecisions(p)) {
      if (primary.count({model, precision})) precisions.push_back(precision);
    }
    std::set<int> other_batches;
    for (const auto& [c, m] : p.train) {
      if (c.model == model && c.batch != primary.at({model, c.precision})) {
        other_batches.insert(c.batch);
      }
    }
    for (int b : other_batches) others.push_back(absl::StrCat(b));
    if (!others.empty()) {
      also.push_back(absl::StrCat(ModelDisplayName(model), " at ", absl::StrJoin(others, ", ")));
    }
    batch_row.push_back(absl::StrJoin(batches, ", "));
    optimizer_row.push_back(optimizer.empty() ? "not recorded" : optimizer);
    precision_row.push_back(absl::StrJoin(precisions, ", "));
  }
  t.rows = {batch_row, optimizer_row, precision_row};
  if (!also.empty()) {
    t.notes.push_back(absl::StrCat("Also measured at other batch sizes (see Other results): ",
                                   absl::StrJoin(also, "; "), "."));
  }
  return t;
}

Table ConfigurationTable(const PlatformResults& p) {
  Table t;
  t.title = "Configuration";
  t.header = {"Model", "variable_update", "all_reduce"};
  const std::string variable_update = p.Context("variable_update");
  const std::string all_reduce = p.Context("all_reduce");
  for (const std::string& model : TrainModels(p)) {
    int max_gpus = 0, max_cpu_replicas = 0;
    for (const auto& [c, m] : p.train) {
      if (c.model != model) continue;
      const Placement at = Placement::Of(c);
      if (at.cpu()) {
        max_cpu_replicas = std::max(max_cpu_replicas, at.replicas);
      } else {
        max_gpus = std::max(max_gpus, at.gpus);
      }
    }
    // Data parallelism is replicated (one replica per device, or several on
    // the CPU; gradients all-reduced); with one replica nothing is reduced.
    // Between GPUs by NCCL, between CPU replicas by the local group's threads.
    const bool gpu_replicated = max_gpus > 1, cpu_replicated = max_cpu_replicas > 1;
    std::string reduce = gpu_replicated && cpu_replicated ? "nccl (GPUs), local (CPU)"
                         : gpu_replicated                 ? "nccl"
                                                          : "local";
    const bool replicated = gpu_replicated || cpu_replicated;
    t.rows.push_back(
        {ModelDisplayName(model),
         replicated ? (variable_update.empty() ? "replicated" : variable_update) : "n/a",
         replicated ? (all_reduce.empty() ? reduce : all_reduce) : "n/a"});
  }
  return t;
}

}  // namespace cnnbench::report
