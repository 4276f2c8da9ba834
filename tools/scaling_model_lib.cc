#include "tools/scaling_model_lib.h"

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
#include "bench/names.h"
#include "core/status.h"
#include "nlohmann/json.hpp"
#include "tools/report/run_file.h"

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
  RETURN_IF_ERROR_AS_IS(r.OnlyKnown(json, field,
                  {"GBps", "Gbit_per_s", "latency_us", "shared_by", "source", "note"}));
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
      ASSIGN_OR_RETURN_AS_IS(m.published[gpus], r.Positive(it.value(), absl::StrCat(pf, ".", it.key())));
    }
  }
  return m;
}

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

double Link::PerGpu(int active) const {
  return bandwidth / std::max(1, std::min(active, shared_by));
}

absl::StatusOr<double> BusbwCurve::At(int64_t bytes, int ranks, bool extrapolate,
                                      std::string* note) const {
  auto it = by_ranks.find(ranks);
  if (it == by_ranks.end() || it->second.empty()) {
    std::vector<int> have;
    for (const auto& [r, points] : by_ranks) have.push_back(r);
    return absl::NotFoundError(absl::StrCat(origin, " has no all-reduce case with ranks:", ranks,
                                            " (it has ranks: ", absl::StrJoin(have, ", "), ")"));
  }
  const std::map<int64_t, double>& points = it->second;
  const int64_t lo = points.begin()->first, hi = points.rbegin()->first;
  if (bytes < lo || bytes > hi) {
    const std::string what =
        absl::StrCat(bytes, " bytes is outside the sizes measured on ranks:", ranks, " in ", origin,
                     " (", lo, " to ", hi, " bytes)");
    if (!extrapolate)
      return absl::OutOfRangeError(
          absl::StrCat(what,
                       "; the model does not extrapolate a busbw curve (--extrapolate "
                       "takes the nearest measured size's busbw)"));
    if (note != nullptr)
      *note = absl::StrCat(what, ": took the busbw of ", bytes < lo ? lo : hi, " bytes");
    return bytes < lo ? points.begin()->second : points.rbegin()->second;
  }
  auto upper = points.lower_bound(bytes);
  if (upper->first == bytes) return upper->second;
  auto lower = std::prev(upper);
  const double t =
      (std::log(static_cast<double>(bytes)) - std::log(static_cast<double>(lower->first))) /
      (std::log(static_cast<double>(upper->first)) - std::log(static_cast<double>(lower->first)));
  return lower->second + t * (upper->second - lower->second);
}

double RingAllReduceSeconds(double bytes, int n, const Link& link) {
  if (n <= 1) return 0;
  return 2.0 * (n - 1) / n * bytes / link.bandwidth + 2.0 * (n - 1) * link.latency;
}

double RingReduceSeconds(double bytes, int g, const Link& link) {
  if (g <= 1) return 0;
  return static_cast<double>(g - 1) / g * bytes / link.bandwidth + (g - 1) * link.latency;
}

double ParameterServerSeconds(double bytes, int workers, int shards, const Link& server_link,
                              double worker_bandwidth, bool colocated) {
  if (workers <= 0 || shards <= 0) return 0;
  if (colocated && workers == 1 && shards == 1) return 0;  // the only worker holds everything
  // Into the busiest server in the push phase (out of it in the pull phase):
  // every worker's share for it, less its own worker's when colocated.
  const int remote = colocated ? workers - 1 : workers;
  const double server_bytes = remote * bytes / shards;
  // Out of a worker in the push phase: what it sends to servers elsewhere. A
  // colocated worker that holds a shard keeps that shard's share.
  const double worker_bytes =
      colocated && shards >= workers ? bytes * (shards - 1) / shards : bytes;
  const double phase =
      std::max(server_bytes / server_link.bandwidth, worker_bytes / worker_bandwidth) +
      server_link.latency;
  return 2 * phase;
}

int HostsFor(int gpus, int gpus_per_host) {
  return std::max(1, (gpus + gpus_per_host - 1) / std::max(1, gpus_per_host));
}

absl::StatusOr<double> CommSeconds(const Machine& m, Scheme scheme, double bytes, int gpus,
                                   int hosts, int ps_shards, const BusbwCurve* curve,
                                   bool extrapolate, std::string* note) {
  if (gpus < 1 || hosts < 1 || hosts > gpus)
    return absl::InvalidArgumentError(
        absl::StrCat("cannot place ", gpus, " GPUs on ", hosts, " hosts"));
  if (gpus > hosts * m.gpus_per_host)
    return absl::InvalidArgumentError(
        absl::StrCat(gpus, " GPUs do not fit on ", hosts, " hosts of ", m.gpus_per_host, " GPUs"));
  const int per_host = (gpus + hosts - 1) / hosts;
  const bool multi_host = hosts > 1;
  if (multi_host && !m.network.has_value())
    return absl::InvalidArgumentError(absl::StrCat(
        hosts, " hosts need a network link (links.network) in the machine description"));

  // One host's ring: a measured curve when it has this rank count, else the declared link.
  auto one_host_ring = [&](int n) -> absl::StatusOr<double> {
    if (n <= 1) return 0.0;
    if (curve != nullptr) {
      std::string extra;
      absl::StatusOr<double> busbw = curve->At(static_cast<int64_t>(bytes), n, extrapolate, &extra);
      if (busbw.ok()) {
        if (note != nullptr)
          *note = extra.empty() ? absl::StrCat("busbw measured (", curve->origin, ")") : extra;
        return 2.0 * (n - 1) / n * bytes / *busbw;
      }
      if (!absl::IsNotFound(busbw.status())) return busbw.status();
      if (note != nullptr)
        *note = absl::StrCat(busbw.status().message(), ": the declared gpu_gpu link instead");
    }
    return RingAllReduceSeconds(bytes, n, m.gpu_gpu);
  };

  switch (scheme) {
    case Scheme::kAllReduce: {
      if (!multi_host) return one_host_ring(gpus);
      // One flat ring through every GPU: its slowest hop is the network.
      Link slowest = m.gpu_gpu;
      slowest.bandwidth = std::min(m.gpu_gpu.bandwidth, m.network->bandwidth);
      slowest.latency = std::max(m.gpu_gpu.latency, m.network->latency);
      return RingAllReduceSeconds(bytes, gpus, slowest);
    }
    case Scheme::kPsCpu:
    case Scheme::kPsGpu: {
      if (multi_host)
        return absl::InvalidArgumentError(
            absl::StrCat(SchemeName(scheme), " is a one-host scheme; ", hosts,
                         " hosts need hierarchical or distributed_ps"));
      if (scheme == Scheme::kPsCpu)
        return ParameterServerSeconds(bytes, gpus, m.host_links, m.gpu_host,
                                      m.gpu_host.PerGpu(gpus), /*colocated=*/false);
      // Every GPU serves a shard and works: both over its own (maybe shared) link.
      Link own = m.gpu_gpu;
      own.bandwidth = m.gpu_gpu.PerGpu(gpus);
      return ParameterServerSeconds(bytes, gpus, gpus, own, own.bandwidth, /*colocated=*/true);
    }
    case Scheme::kHierarchical: {
      if (!multi_host) return one_host_ring(gpus);
      return RingReduceSeconds(bytes, per_host, m.gpu_gpu) +
             RingAllReduceSeconds(bytes, hosts, *m.network) +
             RingReduceSeconds(bytes, per_host, m.gpu_gpu);
    }
    case Scheme::kDistributedPs: {
      const double local = 2 * RingReduceSeconds(bytes, per_host, m.gpu_gpu);
      if (!multi_host) return local;
      // At most one server per host: fewer hosts than `ps_shards` get one each.
      const int shards = ps_shards > 0 ? std::min(ps_shards, hosts) : hosts;
      return local + ParameterServerSeconds(bytes, hosts, shards, *m.network, m.network->bandwidth,
                                            /*colocated=*/true);
    }
  }
  return absl::InternalError("unhandled scheme");
}

double ExposedSeconds(double comm, double overlap, const MeasuredStep& w) {
  const double window = overlap * w.backward_fraction * w.step_seconds;
  double exposed = std::max(0.0, comm - window);
  if (overlap > 0 && w.bucket_bytes > 0 && w.gradient_bytes > 0) {
    // The last bucket is ready only when backward ends: its share is never hidden.
    const double tail = comm * std::min(1.0, w.bucket_bytes / w.gradient_bytes);
    exposed = std::max(exposed, tail);
  }
  return exposed;
}

absl::StatusOr<Prediction> Predict(const Machine& machine, Scheme scheme, const MeasuredStep& w,
                                   int gpus, int hosts, double overlap, int ps_shards,
                                   const BusbwCurve* curve, bool extrapolate) {
  if (!(w.step_seconds > 0) || !(w.gradient_bytes > 0) || w.batch <= 0)
    return absl::InvalidArgumentError(
        "a workload needs a positive step time, batch and gradient size");
  if (!(overlap >= 0 && overlap <= 1))
    return absl::InvalidArgumentError(absl::StrCat("overlap must be in [0, 1], got ", overlap));
  Prediction p;
  p.gpus = gpus;
  p.hosts = hosts;
  ASSIGN_OR_RETURN_AS_IS(p.comm_seconds, CommSeconds(machine, scheme, w.gradient_bytes, gpus, hosts, ps_shards,
                                         curve, extrapolate, &p.note));
  ASSIGN_OR_RETURN_AS_IS(double single, CommSeconds(machine, scheme, w.gradient_bytes, 1, 1, ps_shards, nullptr,
                                        extrapolate, nullptr));
  p.exposed_seconds =
      ExposedSeconds(p.comm_seconds, overlap, w) - ExposedSeconds(single, overlap, w);
  p.step_seconds = w.step_seconds + p.exposed_seconds;
  if (!(p.step_seconds > 0))
    return absl::InternalError(absl::StrCat("predicted a step of ", p.step_seconds, " s"));
  p.images_per_second = static_cast<double>(gpus) * static_cast<double>(w.batch) / p.step_seconds;
  return p;
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
  RETURN_IF_ERROR_AS_IS(r.OnlyKnown(json, "",
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
    ASSIGN_OR_RETURN_AS_IS(ModelEntry m,
               ReadModel(r, (*models)[i], absl::StrCat("models[", i, "]"), zoo_parameters));
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
    const std::string& family = c.name.family;
    if (family != "train" && family != "allreduce") continue;
    const char* counter = family == "train" ? "images_per_second" : "busbw";
    // The mean aggregate when written, else the mean of the repetitions.
    double value = 0;
    int count = 0;
    if (auto it = c.mean.find(counter); it != c.mean.end()) {
      value = it->second;
      count = 1;
    } else {
      for (const report::Counters& rep : c.iterations) {
        auto it = rep.find(counter);
        if (it == rep.end()) continue;
        value += it->second;
        ++count;
      }
      if (count > 0) value /= count;
    }
    if (count == 0) {
      if (warnings != nullptr)
        warnings->push_back(absl::StrCat(path, ": ", c.entry, ": no ", counter,
                                         c.error.empty() ? "" : absl::StrCat(" (", c.error, ")"),
                                         "; not used"));
      continue;
    }
    if (family == "train") {
      m.train[c.name.ToString()] = value;
      continue;
    }
    if (c.name.ranks < 2) continue;  // one rank moves nothing: busbw is 0 by definition
    if (!std::isfinite(value) || value <= 0) {
      if (warnings != nullptr)
        warnings->push_back(absl::StrCat(path, ": ", c.entry, ": busbw ", value, "; not used"));
      continue;
    }
    const std::string key = absl::StrCat(c.name.impl, "/", c.name.dtype);
    BusbwCurve& curve = m.curves[key];
    curve.origin = absl::StrCat(path, " allreduce/", key);
    curve.by_ranks[c.name.ranks][c.name.bytes] = value;
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

absl::StatusOr<std::string> RenderTables(const Config& config, const Measured* measured,
                                         const BusbwCurve* curve, const RunOptions& options) {
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
                                                model.ps_shards, curve, options.extrapolate);
      if (!none.ok())
        return absl::Status(none.status().code(),
                            absl::StrCat(config.path, ": ", model.label, " on ", gpus,
                                         " GPUs: ", none.status().message()));
      ASSIGN_OR_RETURN_AS_IS(Prediction hidden, Predict(config.machine, scheme, w, gpus, hosts, overlap,
                                            model.ps_shards, curve, options.extrapolate));
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
