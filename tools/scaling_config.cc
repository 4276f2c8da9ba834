// The scaling model's inputs: configuration files (tools/data/scaling/*.json)
// and the suite's measured results, every error naming the file and field.
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

using Json = nlohmann::json;

constexpr struct {
  Scheme scheme;
  const char* name;
} kSchemes[] = {
    {Scheme::kAllReduce, "allreduce"},
    {Scheme::kPsCpu, "ps_cpu"},
    {Scheme::kPsGpu, "ps_gpu"},
    {Scheme::kHierarchical, "hierarchical"},
    {Scheme::kDistributedPs, "distributed_ps"},
};

std::string SchemeList() {
  std::vector<std::string> names;
  for (const auto& s : kSchemes) names.push_back(s.name);
  return absl::StrJoin(names, ", ");
}

// ---- configuration reading ----

// Errors while reading one file name it and the field ("f.json: models[2].batch: ...").
class Reader {
 public:
  explicit Reader(absl::string_view path) : path_(path) {}

  absl::Status Error(absl::string_view field, absl::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat(path_, ": ", field, ": ", message));
  }

  // A required object member.
  absl::StatusOr<const Json*> Member(const Json& object, absl::string_view parent,
                                     const std::string& key) const {
    auto it = object.find(key);
    if (it == object.end()) return Error(Join(parent, key), "missing");
    return &*it;
  }
  const Json* Optional(const Json& object, const std::string& key) const {
    auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
  }

  absl::StatusOr<double> Positive(const Json& value, absl::string_view field) const {
    if (!value.is_number())
      return Error(field, absl::StrCat("must be a number, got ", value.dump()));
    const double v = value.get<double>();
    if (!std::isfinite(v) || v <= 0)
      return Error(field, absl::StrCat("must be a positive number, got ", value.dump()));
    return v;
  }
  absl::StatusOr<double> NonNegative(const Json& value, absl::string_view field) const {
    if (!value.is_number())
      return Error(field, absl::StrCat("must be a number, got ", value.dump()));
    const double v = value.get<double>();
    if (!std::isfinite(v) || v < 0)
      return Error(field, absl::StrCat("must be zero or more, got ", value.dump()));
    return v;
  }
  absl::StatusOr<int64_t> PositiveInt(const Json& value, absl::string_view field) const {
    if (!value.is_number_integer() || value.get<int64_t>() <= 0)
      return Error(field, absl::StrCat("must be a positive integer, got ", value.dump()));
    return value.get<int64_t>();
  }
  absl::StatusOr<std::string> String(const Json& value, absl::string_view field) const {
    if (!value.is_string() || value.get<std::string>().empty())
      return Error(field, absl::StrCat("must be a non-empty string, got ", value.dump()));
    return value.get<std::string>();
  }

  static std::string Join(absl::string_view parent, absl::string_view key) {
    return parent.empty() ? std::string(key) : absl::StrCat(parent, ".", key);
  }

  // Keys of `object` not in `known` are errors: a misspelt field must not
  // silently leave a default in place.
  absl::Status OnlyKnown(const Json& object, absl::string_view parent,
                         std::initializer_list<const char*> known) const {
    for (auto it = object.begin(); it != object.end(); ++it) {
      bool found = false;
      for (const char* k : known) found = found || it.key() == k;
      if (!found)
        return Error(Join(parent, it.key()),
                     absl::StrCat("unknown field (known: ", absl::StrJoin(known, ", "), ")"));
    }
    return absl::OkStatus();
  }

 private:
  std::string path_;
};

absl::StatusOr<Link> ReadLink(const Reader& r, const Json& json, const std::string& field) {
  if (!json.is_object()) return r.Error(field, "must be an object");
  RETURN_IF_ERROR_AS_IS(r.OnlyKnown(
      json, field, {"GBps", "Gbit_per_s", "latency_us", "shared_by", "source", "note"}));
  Link link;
  const Json* gbps = r.Optional(json, "GBps");
  const Json* gbit = r.Optional(json, "Gbit_per_s");
  if ((gbps == nullptr) == (gbit == nullptr))
    return r.Error(field, "give exactly one of GBps (10^9 bytes/s) and Gbit_per_s");
  if (gbps != nullptr) {
    ASSIGN_OR_RETURN_AS_IS(double v, r.Positive(*gbps, field + ".GBps"));
    link.bandwidth = v * 1e9;
  } else {
    ASSIGN_OR_RETURN_AS_IS(double v, r.Positive(*gbit, field + ".Gbit_per_s"));
    link.bandwidth = v * 1e9 / 8;
  }
  ASSIGN_OR_RETURN_AS_IS(const Json* latency, r.Member(json, field, "latency_us"));
  ASSIGN_OR_RETURN_AS_IS(double us, r.NonNegative(*latency, field + ".latency_us"));
  link.latency = us * 1e-6;
  if (const Json* shared = r.Optional(json, "shared_by")) {
    ASSIGN_OR_RETURN_AS_IS(int64_t s, r.PositiveInt(*shared, field + ".shared_by"));
    link.shared_by = static_cast<int>(s);
  }
  ASSIGN_OR_RETURN_AS_IS(const Json* source, r.Member(json, field, "source"));
  ASSIGN_OR_RETURN_AS_IS(link.source, r.String(*source, field + ".source"));
  return link;
}

absl::StatusOr<ModelEntry> ReadModel(const Reader& r, const Json& json, const std::string& field,
                                     const ZooParameters& zoo_parameters) {
  if (!json.is_object()) return r.Error(field, "must be an object");
  RETURN_IF_ERROR_AS_IS(r.OnlyKnown(
      json, field,
      {"name", "label", "table", "scheme", "scheme_detail", "ps_shards", "batch",
       "images_per_second", "step_seconds", "parameters", "gradient_bytes", "published", "note"}));
  ModelEntry m;
  ASSIGN_OR_RETURN_AS_IS(const Json* name, r.Member(json, field, "name"));
  ASSIGN_OR_RETURN_AS_IS(m.name, r.String(*name, field + ".name"));
  m.label = m.name;
  if (const Json* label = r.Optional(json, "label")) {
    ASSIGN_OR_RETURN_AS_IS(m.label, r.String(*label, field + ".label"));
  }
  if (const Json* table = r.Optional(json, "table")) {
    ASSIGN_OR_RETURN_AS_IS(m.table, r.String(*table, field + ".table"));
  }
  ASSIGN_OR_RETURN_AS_IS(const Json* scheme, r.Member(json, field, "scheme"));
  ASSIGN_OR_RETURN_AS_IS(std::string scheme_name, r.String(*scheme, field + ".scheme"));
  absl::StatusOr<Scheme> parsed = ParseScheme(scheme_name);
  if (!parsed.ok()) return r.Error(field + ".scheme", parsed.status().message());
  m.scheme = *parsed;
  if (const Json* detail = r.Optional(json, "scheme_detail")) {
    ASSIGN_OR_RETURN_AS_IS(m.scheme_detail, r.String(*detail, field + ".scheme_detail"));
  }
  if (const Json* shards = r.Optional(json, "ps_shards")) {
    ASSIGN_OR_RETURN_AS_IS(int64_t s, r.PositiveInt(*shards, field + ".ps_shards"));
    m.ps_shards = static_cast<int>(s);
  }
  ASSIGN_OR_RETURN_AS_IS(const Json* batch, r.Member(json, field, "batch"));
  ASSIGN_OR_RETURN_AS_IS(m.batch, r.PositiveInt(*batch, field + ".batch"));

  const Json* ips = r.Optional(json, "images_per_second");
  const Json* step = r.Optional(json, "step_seconds");
  if ((ips == nullptr) == (step == nullptr))
    return r.Error(field, "give exactly one of images_per_second and step_seconds (one device)");
  if (ips != nullptr) {
    ASSIGN_OR_RETURN_AS_IS(double v, r.Positive(*ips, field + ".images_per_second"));
    m.step_seconds = static_cast<double>(m.batch) / v;
  } else {
    ASSIGN_OR_RETURN_AS_IS(m.step_seconds, r.Positive(*step, field + ".step_seconds"));
  }

  const Json* params = r.Optional(json, "parameters");
  const Json* grad = r.Optional(json, "gradient_bytes");
  if (params != nullptr && grad != nullptr)
    return r.Error(field, "give parameters or gradient_bytes, not both");
  if (params != nullptr) {
    ASSIGN_OR_RETURN_AS_IS(m.parameters, r.PositiveInt(*params, field + ".parameters"));
    m.gradient_bytes = 4.0 * static_cast<double>(m.parameters);
    m.parameters_source = "config";
  } else if (grad != nullptr) {
    ASSIGN_OR_RETURN_AS_IS(m.gradient_bytes, r.Positive(*grad, field + ".gradient_bytes"));
    m.parameters_source = "config";
  } else {
    if (!zoo_parameters)
      return r.Error(field, "no parameters or gradient_bytes, and no model zoo to count them");
    absl::StatusOr<int64_t> count = zoo_parameters(m.name);
    if (!count.ok())
      return r.Error(field + ".name",
                     absl::StrCat("no parameters or gradient_bytes given, and the zoo cannot "
                                  "count them: ",
                                  count.status().message()));
    m.parameters = *count;
    m.gradient_bytes = 4.0 * static_cast<double>(*count);
    m.parameters_source = "//models:zoo";
  }

  if (const Json* published = r.Optional(json, "published")) {
    const std::string pf = field + ".published";
    if (!published->is_object()) return r.Error(pf, "must be an object of \"<gpus>\": images/s");
    for (auto it = published->begin(); it != published->end(); ++it) {
      int gpus = 0;
      if (!absl::SimpleAtoi(it.key(), &gpus) || gpus <= 0)
        return r.Error(absl::StrCat(pf, ".", it.key()), "key must be a positive GPU count");
      ASSIGN_OR_RETURN_AS_IS(m.published[gpus],
                             r.Positive(it.value(), absl::StrCat(pf, ".", it.key())));
    }
  }
  return m;
}

}  // namespace

absl::StatusOr<Scheme> ParseScheme(absl::string_view name) {
  for (const auto& s : kSchemes)
    if (name == s.name) return s.scheme;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown scheme '", name, "' (known: ", SchemeList(), ")"));
}

std::string SchemeName(Scheme scheme) {
  for (const auto& s : kSchemes)
    if (scheme == s.scheme) return s.name;
  return "?";
}

absl::StatusOr<Config> ParseConfig(absl::string_view path, absl::string_view text,
                                   const ZooParameters& zoo_parameters) {
  const Reader r(path);
  Json json = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not valid JSON: ", report::JsonSyntaxError(std::string(text))));
  }
  if (!json.is_object()) return r.Error("(top level)", "must be an object");
  RETURN_IF_ERROR_AS_IS(
      r.OnlyKnown(json, "",
                  {"machine", "source", "gpus_per_host", "links", "host_links", "gpus", "overlap",
                   "backward_fraction", "bucket_bytes", "models", "note"}));
  Config c;
  c.path = std::string(path);
  ASSIGN_OR_RETURN_AS_IS(const Json* machine, r.Member(json, "", "machine"));
  ASSIGN_OR_RETURN_AS_IS(c.machine.name, r.String(*machine, "machine"));
  if (const Json* source = r.Optional(json, "source")) {
    ASSIGN_OR_RETURN_AS_IS(c.source, r.String(*source, "source"));
  }
  ASSIGN_OR_RETURN_AS_IS(const Json* gph, r.Member(json, "", "gpus_per_host"));
  ASSIGN_OR_RETURN_AS_IS(int64_t per_host, r.PositiveInt(*gph, "gpus_per_host"));
  c.machine.gpus_per_host = static_cast<int>(per_host);
  if (const Json* host_links = r.Optional(json, "host_links")) {
    ASSIGN_OR_RETURN_AS_IS(int64_t n, r.PositiveInt(*host_links, "host_links"));
    c.machine.host_links = static_cast<int>(n);
  }

  ASSIGN_OR_RETURN_AS_IS(const Json* links, r.Member(json, "", "links"));
  if (!links->is_object()) return r.Error("links", "must be an object");
  RETURN_IF_ERROR_AS_IS(r.OnlyKnown(*links, "links", {"gpu_gpu", "gpu_host", "network"}));
  ASSIGN_OR_RETURN_AS_IS(const Json* gpu_gpu, r.Member(*links, "links", "gpu_gpu"));
  ASSIGN_OR_RETURN_AS_IS(c.machine.gpu_gpu, ReadLink(r, *gpu_gpu, "links.gpu_gpu"));
  ASSIGN_OR_RETURN_AS_IS(const Json* gpu_host, r.Member(*links, "links", "gpu_host"));
  ASSIGN_OR_RETURN_AS_IS(c.machine.gpu_host, ReadLink(r, *gpu_host, "links.gpu_host"));
  if (const Json* network = r.Optional(*links, "network")) {
    ASSIGN_OR_RETURN_AS_IS(c.machine.network, ReadLink(r, *network, "links.network"));
  }

  ASSIGN_OR_RETURN_AS_IS(const Json* gpus, r.Member(json, "", "gpus"));
  if (!gpus->is_array() || gpus->empty())
    return r.Error("gpus", "must be a non-empty array of GPU counts");
  for (size_t i = 0; i < gpus->size(); ++i) {
    ASSIGN_OR_RETURN_AS_IS(int64_t n, r.PositiveInt((*gpus)[i], absl::StrCat("gpus[", i, "]")));
    c.gpus.push_back(static_cast<int>(n));
  }
  if (const Json* overlap = r.Optional(json, "overlap")) {
    ASSIGN_OR_RETURN_AS_IS(c.overlap, r.NonNegative(*overlap, "overlap"));
    if (c.overlap > 1) return r.Error("overlap", "must be in [0, 1]");
  }
  if (const Json* bf = r.Optional(json, "backward_fraction")) {
    ASSIGN_OR_RETURN_AS_IS(c.backward_fraction, r.Positive(*bf, "backward_fraction"));
    if (c.backward_fraction > 1) return r.Error("backward_fraction", "must be in (0, 1]");
  }
  if (const Json* bucket = r.Optional(json, "bucket_bytes")) {
    ASSIGN_OR_RETURN_AS_IS(c.bucket_bytes, r.NonNegative(*bucket, "bucket_bytes"));
  }

  ASSIGN_OR_RETURN_AS_IS(const Json* models, r.Member(json, "", "models"));
  if (!models->is_array() || models->empty()) return r.Error("models", "must be a non-empty array");
  for (size_t i = 0; i < models->size(); ++i) {
    ASSIGN_OR_RETURN_AS_IS(
        ModelEntry m, ReadModel(r, (*models)[i], absl::StrCat("models[", i, "]"), zoo_parameters));
    c.models.push_back(std::move(m));
  }
  return c;
}

absl::StatusOr<Config> LoadConfig(const std::string& path, const ZooParameters& zoo_parameters) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open the configuration"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read error"));
  return ParseConfig(path, text, zoo_parameters);
}

absl::StatusOr<Measured> LoadMeasured(const std::string& path, std::vector<std::string>* warnings) {
  ASSIGN_OR_RETURN_AS_IS(report::RunFile run, report::LoadRunFile(path, warnings));
  Measured m;
  m.path = path;
  for (const report::FileCase& c : run.cases) {
    const bool train = c.name.Is(bench::Family::kTrain);
    // The collectives data parallelism moves, as the schemes use them: the
    // sum's all-reduce and reduce, and the broadcast.
    const bool curve = (c.name.Is(bench::Family::kAllReduce) && c.name.op == "sum") ||
                       (c.name.Is(bench::Family::kReduce) && c.name.op == "sum") ||
                       c.name.Is(bench::Family::kBroadcast);
    if (!train && !curve) continue;
    const std::string& counter = bench::FindCaseFamily(c.name.family)->counter;
    const std::optional<double> mean = report::CaseMean(c, counter);
    const bool allreduce = c.name.Is(bench::Family::kAllReduce);
    if (!mean) {
      if (allreduce) ++m.allreduce_unusable;
      if (warnings != nullptr)
        warnings->push_back(absl::StrCat(path, ": ", c.entry, ": no ", counter,
                                         c.error.empty() ? "" : absl::StrCat(" (", c.error, ")"),
                                         "; not used"));
      continue;
    }
    const double value = *mean;
    if (train) {
      m.train[c.name.ToString()] = value;
      continue;
    }
    if (c.name.ranks < 2) {  // one rank moves nothing: busbw is 0 by definition
      if (allreduce) ++m.allreduce_one_rank;
      continue;
    }
    if (!std::isfinite(value) || value <= 0) {
      if (allreduce) ++m.allreduce_unusable;
      if (warnings != nullptr)
        warnings->push_back(absl::StrCat(path, ": ", c.entry, ": busbw ", value, "; not used"));
      continue;
    }
    const std::string key = absl::StrCat(c.name.impl, "/", c.name.dtype);
    std::map<std::string, BusbwCurve>& curves = c.name.Is(bench::Family::kReduce) ? m.reduce_curves
                                                : c.name.Is(bench::Family::kBroadcast)
                                                    ? m.broadcast_curves
                                                    : m.curves;
    BusbwCurve& kind = curves[key];
    kind.origin = absl::StrCat(path, " ", c.name.family, "/", key);
    kind.by_ranks[c.name.ranks][c.name.bytes] = value;
  }
  return m;
}

absl::StatusOr<const BusbwCurve*> ChooseCurve(const Measured& measured, const std::string& which) {
  if (!which.empty()) {
    auto it = measured.curves.find(which);
    if (it != measured.curves.end()) return &it->second;
  } else if (measured.curves.size() <= 1) {
    return measured.curves.empty() ? nullptr : &measured.curves.begin()->second;
  }
  std::vector<std::string> names;
  for (const auto& [name, curve] : measured.curves) names.push_back(name);
  return absl::InvalidArgumentError(
      absl::StrCat(measured.path, ": ",
                   which.empty() ? "several all-reduce kinds"
                                 : absl::StrCat("no all-reduce cases '", which, "'"),
                   "; choose one with --allreduce=<impl>/<dtype> (",
                   names.empty() ? "none" : absl::StrJoin(names, ", "), ")"));
}

absl::StatusOr<Curves> ChooseCurves(const Measured& measured, const std::string& which) {
  ASSIGN_OR_RETURN_AS_IS(const BusbwCurve* allreduce, ChooseCurve(measured, which));
  Curves curves(allreduce);
  // The chosen all-reduce's impl/dtype (or, without all-reduce cases, the
  // one asked for or the only one).
  std::string key = which;
  for (const auto& [name, curve] : measured.curves)
    if (&curve == allreduce) key = name;
  auto find = [&](const std::map<std::string, BusbwCurve>& map) -> const BusbwCurve* {
    if (key.empty()) return map.size() == 1 ? &map.begin()->second : nullptr;
    auto it = map.find(key);
    return it == map.end() ? nullptr : &it->second;
  };
  curves.reduce = find(measured.reduce_curves);
  curves.broadcast = find(measured.broadcast_curves);
  return curves;
}

std::string NoCurveMessage(const Measured& measured) {
  std::vector<std::string> has;
  if (measured.allreduce_one_rank > 0)
    has.push_back(absl::StrCat(measured.allreduce_one_rank,
                               " at one rank, where busbw is 0 by definition"));
  if (measured.allreduce_unusable > 0)
    has.push_back(absl::StrCat(measured.allreduce_unusable,
                               " without a usable busbw (the warnings above say why)"));
  return absl::StrCat(
      measured.path,
      ": no all-reduce case to draw a busbw curve from: --measured needs the sum's all-reduce "
      "at 2 or more ranks (allreduce/<impl>/<dtype>/sum/bytes:<S>/ranks:<N>, N >= 2, as "
      "//bench:all --families=allreduce writes them); ",
      has.empty() ? "it has no all-reduce sum case"
                  : absl::StrCat("its all-reduce sum cases are ", absl::StrJoin(has, "; ")));
}

}  // namespace cnnbench::scaling
