// The scaling model's tables: predictions beside the published and measured
// figures, as markdown or CSV.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "bench/suite/names.h"
#include "core/status.h"
#include "nlohmann/json.hpp"
#include "tools/report/run_file.h"
#include "tools/scaling_model_lib.h"

// Errors here go to the user as they are (file and field, no source line):
// core/status.h's _AS_IS macros return them unchanged.

namespace cnnbench::scaling {
namespace {

// ---- formatting ----

std::string Rate(double v) {
  if (!std::isfinite(v)) return "N/A";
  return v >= 100 ? absl::StrFormat("%.0f", v) : absl::StrFormat("%.1f", v);
}

std::string RelativeError(double predicted, double published) {
  double percent = 100.0 * (predicted - published) / published;
  if (std::abs(percent) < 0.05) percent = 0;  // no "-0.0%"
  return absl::StrFormat("%+.1f%%", percent);
}

std::string Megabytes(double bytes) { return absl::StrFormat("%.1f MB", bytes / 1e6); }

}  // namespace

absl::StatusOr<std::string> RenderTables(const Config& config, const Measured* measured,
                                         const Curves& curves, const RunOptions& options) {
  const double overlap = options.overlap.value_or(config.overlap);
  if (!(overlap >= 0 && overlap <= 1))
    return absl::InvalidArgumentError(absl::StrCat("overlap must be in [0, 1], got ", overlap));
  const std::vector<int>& rows = options.gpus.empty() ? config.gpus : options.gpus;
  const bool csv = options.format == "csv";
  if (!csv && options.format != "markdown")
    return absl::InvalidArgumentError(
        absl::StrCat("format must be markdown or csv, got '", options.format, "'"));
  const std::string with = absl::StrFormat("overlap %.2f", overlap);
  std::string out;
  std::vector<std::string> notes;  // footnotes, numbered in order, each once
  auto footnote = [&](const std::string& text) {
    for (size_t i = 0; i < notes.size(); ++i)
      if (notes[i] == text) return absl::StrCat(" [", i + 1, "]");
    notes.push_back(text);
    return absl::StrCat(" [", notes.size(), "]");
  };
  std::vector<double> errors_none, errors_with;  // |relative error| of cells beyond one GPU

  if (csv) {
    out =
        "machine,table,model,scheme,gpus,hosts,comm_ms,images_per_second_no_overlap,"
        "images_per_second_overlap,overlap,published,error_no_overlap,error_overlap,measured,"
        "note\n";
  } else {
    const Machine& m = config.machine;
    absl::StrAppend(&out, "## ", m.name, "\n\n");
    if (!config.source.empty()) absl::StrAppend(&out, "Published figures: ", config.source, "\n\n");
    absl::StrAppend(&out, "| link | bandwidth (per direction) | latency | shared by | source |\n",
                    "|---|---|---|---|---|\n");
    auto link_row = [&](const char* name, const Link& l) {
      absl::StrAppend(&out, "| ", name, " | ", absl::StrFormat("%.3g GB/s", l.bandwidth / 1e9),
                      " | ", absl::StrFormat("%g us", l.latency * 1e6), " | ", l.shared_by,
                      " GPU(s) | ", l.source, " |\n");
    };
    link_row("gpu_gpu", m.gpu_gpu);
    link_row("gpu_host", m.gpu_host);
    if (m.network) link_row("network", *m.network);
    absl::StrAppend(&out, "\n", m.gpus_per_host, " GPUs per host; ", m.host_links,
                    " GPU-host link(s) into the CPUs; backward = ",
                    absl::StrFormat("%.2f", config.backward_fraction), " of the step",
                    config.bucket_bytes > 0
                        ? absl::StrCat("; buckets of ", Megabytes(config.bucket_bytes))
                        : "",
                    ".\n\n");
  }

  for (const ModelEntry& model : config.models) {
    if (!options.model.empty() && model.name != options.model) continue;
    const Scheme scheme = options.scheme.value_or(model.scheme);
    MeasuredStep w;
    w.step_seconds = model.step_seconds;
    w.batch = model.batch;
    w.gradient_bytes = model.gradient_bytes;
    w.backward_fraction = config.backward_fraction;
    w.bucket_bytes = config.bucket_bytes;
    if (!csv) {
      absl::StrAppend(&out, "### ", model.label, model.table.empty() ? "" : " — ", model.table,
                      "\n\n");
      absl::StrAppend(
          &out, "Scheme ", SchemeName(scheme),
          model.scheme_detail.empty() ? ""
                                      : absl::StrCat(" (published: ", model.scheme_detail, ")"),
          model.ps_shards > 0 ? absl::StrCat(", ", model.ps_shards, " parameter servers") : "",
          "; batch ", model.batch, " per GPU; one GPU ",
          Rate(static_cast<double>(model.batch) / model.step_seconds), " images/s (",
          absl::StrFormat("%.1f ms", model.step_seconds * 1e3), " a step); gradients ",
          Megabytes(model.gradient_bytes),
          model.parameters > 0 ? absl::StrCat(" (", model.parameters, " fp32 parameters, ",
                                              model.parameters_source, ")")
                               : "",
          ".\n\n");
      absl::StrAppend(&out, "| GPUs | hosts | comm ms | predicted, no overlap | predicted, ", with,
                      " | published | error, no overlap | error, ", with, " |",
                      measured != nullptr ? " measured |" : "", "\n",
                      "|---:|---:|---:|---:|---:|---:|---:|---:|",
                      measured != nullptr ? "---:|" : "", "\n");
    }
    for (int gpus : rows) {
      const int hosts = HostsFor(gpus, config.machine.gpus_per_host);
      absl::StatusOr<Prediction> none = Predict(config.machine, scheme, w, gpus, hosts, 0.0,
                                                model.ps_shards, curves, options.extrapolate);
      if (!none.ok())
        return absl::Status(none.status().code(),
                            absl::StrCat(config.path, ": ", model.label, " on ", gpus,
                                         " GPUs: ", none.status().message()));
      ASSIGN_OR_RETURN_AS_IS(Prediction hidden,
                             Predict(config.machine, scheme, w, gpus, hosts, overlap,
                                     model.ps_shards, curves, options.extrapolate));
      auto pub = model.published.find(gpus);
      std::string published = "", err_none = "", err_with = "";
      if (pub != model.published.end()) {
        published = Rate(pub->second);
        err_none = RelativeError(none->images_per_second, pub->second);
        err_with = RelativeError(hidden.images_per_second, pub->second);
        if (gpus > 1) {
          errors_none.push_back(std::abs(none->images_per_second / pub->second - 1));
          errors_with.push_back(std::abs(hidden.images_per_second / pub->second - 1));
        }
      }
      std::string meas;
      if (measured != nullptr) {
        auto it = measured->train.find(
            bench::TrainCaseName(model.name, options.precision, options.data, model.batch, gpus));
        if (it != measured->train.end()) meas = Rate(it->second);
      }
      const std::string comm = absl::StrFormat("%.1f", none->comm_seconds * 1e3);
      if (csv) {
        auto quote = [](absl::string_view text) {
          return absl::StrCat("\"", absl::StrReplaceAll(text, {{"\"", "\"\""}}), "\"");
        };
        absl::StrAppend(&out, quote(config.machine.name), ",", quote(model.table), ",", model.name,
                        ",", SchemeName(scheme), ",", gpus, ",", hosts, ",", comm, ",",
                        absl::StrFormat("%.2f", none->images_per_second), ",",
                        absl::StrFormat("%.2f", hidden.images_per_second), ",",
                        absl::StrFormat("%.2f", overlap), ",", published, ",", err_none, ",",
                        err_with, ",", meas, ",", quote(none->note), "\n");
      } else {
        const std::string mark = none->note.empty() ? "" : footnote(none->note);
        absl::StrAppend(
            &out, "| ", gpus, " | ", hosts, " | ", comm, mark, " | ", Rate(none->images_per_second),
            " | ", Rate(hidden.images_per_second), " | ", published.empty() ? "—" : published,
            " | ", err_none.empty() ? "—" : err_none, " | ", err_with.empty() ? "—" : err_with,
            " |", measured != nullptr ? absl::StrCat(" ", meas.empty() ? "—" : meas, " |") : "",
            "\n");
      }
    }
    if (!csv) out += "\n";
  }
  if (!csv) {
    auto mean = [](const std::vector<double>& v) {
      double s = 0;
      for (double x : v) s += x;
      return v.empty() ? 0.0 : s / v.size();
    };
    if (!errors_none.empty())
      absl::StrAppend(&out, "Mean |error| over the ", errors_none.size(),
                      " published cells beyond one GPU: ",
                      absl::StrFormat("%.1f%%", 100 * mean(errors_none)), " without overlap, ",
                      absl::StrFormat("%.1f%%", 100 * mean(errors_with)), " with ", with, ".\n\n");
    for (size_t i = 0; i < notes.size(); ++i)
      absl::StrAppend(&out, "[", i + 1, "] ", notes[i], "\n");
    if (!notes.empty()) out += "\n";
  }
  return out;
}

}  // namespace cnnbench::scaling
