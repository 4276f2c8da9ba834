// The scaling model's formulas, as docs/scaling_model.md states them. The
// configuration and results reading is scaling_config.cc, the tables
// scaling_tables.cc.
#include "tools/scaling_model_lib.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/status.h"

namespace cnnbench::scaling {

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
                                   int hosts, int ps_shards, const Curves& curves, bool extrapolate,
                                   std::string* note) {
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

  // What the notes say, each once, in order.
  std::vector<std::string> notes;
  auto add_note = [&](const std::string& text) {
    if (std::find(notes.begin(), notes.end(), text) == notes.end()) notes.push_back(text);
  };
  // One host's collective: `factor` x bytes / busbw of a measured curve
  // when it has this rank count, else `declared`.
  auto measured = [&](const BusbwCurve* curve, int n, double factor,
                      double declared) -> absl::StatusOr<double> {
    if (n <= 1) return 0.0;
    if (curve == nullptr) return declared;
    std::string extra;
    absl::StatusOr<double> busbw = curve->At(static_cast<int64_t>(bytes), n, extrapolate, &extra);
    if (busbw.ok()) {
      add_note(extra.empty() ? absl::StrCat("busbw measured (", curve->origin, ")") : extra);
      return factor * bytes / *busbw;
    }
    if (!absl::IsNotFound(busbw.status())) return busbw.status();
    add_note(absl::StrCat(busbw.status().message(), ": the declared gpu_gpu link instead"));
    return declared;
  };
  auto one_host_ring = [&](int n) {
    return measured(curves.allreduce, n, n > 0 ? 2.0 * (n - 1) / n : 0,
                    RingAllReduceSeconds(bytes, n, m.gpu_gpu));
  };
  auto one_host_reduce = [&](int n) {
    return measured(curves.reduce, n, 1, RingReduceSeconds(bytes, n, m.gpu_gpu));
  };
  auto one_host_broadcast = [&](int n) {
    return measured(curves.broadcast, n, 1, RingReduceSeconds(bytes, n, m.gpu_gpu));
  };
  auto noted = [&](absl::StatusOr<double> seconds) -> absl::StatusOr<double> {
    if (note != nullptr && !notes.empty()) *note = absl::StrJoin(notes, "; ");
    return seconds;
  };

  switch (scheme) {
    case Scheme::kAllReduce: {
      if (!multi_host) return noted(one_host_ring(gpus));
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
      if (!multi_host) return noted(one_host_ring(gpus));
      // Reduce inside each host, all-reduce across hosts, broadcast inside each host.
      ASSIGN_OR_RETURN_AS_IS(const double reduce, one_host_reduce(per_host));
      ASSIGN_OR_RETURN_AS_IS(const double broadcast, one_host_broadcast(per_host));
      return noted(reduce + RingAllReduceSeconds(bytes, hosts, *m.network) + broadcast);
    }
    case Scheme::kDistributedPs: {
      ASSIGN_OR_RETURN_AS_IS(const double reduce, one_host_reduce(per_host));
      ASSIGN_OR_RETURN_AS_IS(const double broadcast, one_host_broadcast(per_host));
      const double local = reduce + broadcast;
      if (!multi_host) return noted(local);
      // At most one server per host: fewer hosts than `ps_shards` get one each.
      const int shards = ps_shards > 0 ? std::min(ps_shards, hosts) : hosts;
      return noted(local + ParameterServerSeconds(bytes, hosts, shards, *m.network,
                                                  m.network->bandwidth, /*colocated=*/true));
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
                                   const Curves& curves, bool extrapolate) {
  if (!(w.step_seconds > 0) || !(w.gradient_bytes > 0) || w.batch <= 0)
    return absl::InvalidArgumentError(
        "a workload needs a positive step time, batch and gradient size");
  if (!(overlap >= 0 && overlap <= 1))
    return absl::InvalidArgumentError(absl::StrCat("overlap must be in [0, 1], got ", overlap));
  Prediction p;
  p.gpus = gpus;
  p.hosts = hosts;
  ASSIGN_OR_RETURN_AS_IS(p.comm_seconds, CommSeconds(machine, scheme, w.gradient_bytes, gpus, hosts,
                                                     ps_shards, curves, extrapolate, &p.note));
  ASSIGN_OR_RETURN_AS_IS(double single, CommSeconds(machine, scheme, w.gradient_bytes, 1, 1,
                                                    ps_shards, nullptr, extrapolate, nullptr));
  p.exposed_seconds =
      ExposedSeconds(p.comm_seconds, overlap, w) - ExposedSeconds(single, overlap, w);
  p.step_seconds = w.step_seconds + p.exposed_seconds;
  if (!(p.step_seconds > 0))
    return absl::InternalError(absl::StrCat("predicted a step of ", p.step_seconds, " s"));
  p.images_per_second = static_cast<double>(gpus) * static_cast<double>(w.batch) / p.step_seconds;
  return p;
}

}  // namespace cnnbench::scaling
