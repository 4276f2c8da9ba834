// A scaling model for data-parallel training: from one device's step time,
// the gradient size and the links between devices (declared bandwidth and
// latency, or an all-reduce busbw curve measured by //bench:all), the step
// time and throughput of N devices on one or several hosts, for the update
// schemes tf_cnn_benchmarks' published tables used. docs/scaling_model.md
// gives the formulas; //tools:scaling_model is the command line.
#ifndef CNNBENCH_TOOLS_SCALING_MODEL_LIB_H_
#define CNNBENCH_TOOLS_SCALING_MODEL_LIB_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cnnbench::scaling {

// How gradients meet. The names are the command line's (--scheme=).
enum class Scheme {
  kAllReduce,      // ring all-reduce over the GPU-GPU link (replicated)
  kPsCpu,          // parameter server: variables on the host CPU
  kPsGpu,          // parameter server: variables spread over the GPUs
  kHierarchical,   // intra-host reduce, inter-host ring all-reduce, intra-host broadcast
  kDistributedPs,  // intra-host reduce, parameter servers across hosts, intra-host broadcast
};
absl::StatusOr<Scheme> ParseScheme(absl::string_view name);
std::string SchemeName(Scheme scheme);

// One link, per direction (full duplex).
struct Link {
  double bandwidth = 0;  // bytes/s
  double latency = 0;    // seconds per message (per ring step, per push or pull)
  int shared_by = 1;     // GPUs behind this one link (K80: two GPUs per board)
  std::string source;    // where the figure comes from

  // What one of `active` GPUs gets when they all send at once.
  double PerGpu(int active) const;
};

// Busbw (bytes/s) at each measured size, per rank count; from the suite's
// `<collective>/<impl>/<dtype>/<op>/bytes:<S>/ranks:<N>` cases of one
// collective (all-reduce, reduce or broadcast; the sum's).
struct BusbwCurve {
  std::string origin;                                 // "run.json allreduce/local/fp32"
  std::map<int, std::map<int64_t, double>> by_ranks;  // ranks -> bytes -> busbw

  // Busbw for `bytes` on `ranks`, interpolated linearly in log(bytes)
  // between the two nearest measured sizes. Outside the measured sizes an
  // error names the range, unless `extrapolate`: then the nearest size's
  // busbw, and `note` says so. No case with that rank count: NotFound.
  absl::StatusOr<double> At(int64_t bytes, int ranks, bool extrapolate, std::string* note) const;
};

// The measured curves a prediction may use, one per collective (null: the
// declared links). From a bare all-reduce curve, as before there were more.
struct Curves {
  Curves(const BusbwCurve* all_reduce = nullptr)  // NOLINT: implicit
      : allreduce(all_reduce) {}
  const BusbwCurve* allreduce = nullptr;  // one host's ring all-reduce
  const BusbwCurve* reduce = nullptr;     // one host's reduce (hierarchical, distributed_ps)
  const BusbwCurve* broadcast = nullptr;  // one host's broadcast (the same)
};

// Everything about the machine the formulas read.
struct Machine {
  std::string name;
  int gpus_per_host = 1;
  Link gpu_gpu;                 // the ring's link inside a host (NVLink, PCIe peer to peer)
  Link gpu_host;                // one GPU's path to the host CPU (PCIe)
  int host_links = 1;           // gpu_host links into the CPUs (a CPU parameter server's lanes)
  std::optional<Link> network;  // between hosts (a NIC)
};

// Communication of one step, in seconds, before any overlap.
// Ring all-reduce of `bytes` over `n` ranks: 2(n-1)/n * bytes / busbw +
// 2(n-1) * latency; 0 for one rank.
double RingAllReduceSeconds(double bytes, int n, const Link& link);
// Ring reduce (or broadcast) inside a host: (g-1)/g * bytes / bw + (g-1) * latency.
double RingReduceSeconds(double bytes, int g, const Link& link);
// Parameter server: `workers` each push `bytes` of gradients and pull
// `bytes` of weights; the variables are split evenly over `shards` servers,
// each behind a link of `server_link` bandwidth; each worker has
// `worker_bandwidth`. With `colocated` servers (a worker's own shard) a
// worker's own shard needs no transfer. Push and pull are two phases, each
// as long as its busiest link, plus a latency each.
double ParameterServerSeconds(double bytes, int workers, int shards, const Link& server_link,
                              double worker_bandwidth, bool colocated);

// One prediction's inputs.
struct MeasuredStep {
  double step_seconds = 0;               // one device's step (forward + backward + update)
  int64_t batch = 0;                     // per device
  double gradient_bytes = 0;             // parameters * 4 (fp32 gradients)
  double backward_fraction = 2.0 / 3.0;  // of the step, the backward pass
  double bucket_bytes = 0;               // 0: no buckets; else the last bucket cannot be hidden
};

struct Prediction {
  int gpus = 0, hosts = 0;
  double comm_seconds = 0;     // communication of the step at this size
  double exposed_seconds = 0;  // what is left of it after overlap, less the single device's
  double step_seconds = 0;
  double images_per_second = 0;
  std::string note;  // how the communication was costed when not by the declared links
};

// Communication seconds of one step of `gpus` devices on `hosts` hosts.
// Each of `curves` replaces the declared gpu_gpu link for its collective
// inside one host when it has that rank count: the all-reduce's for a
// one-host ring (2(n-1)/n x bytes / busbw), the reduce's and broadcast's for
// the in-host steps of hierarchical and distributed_ps (bytes / busbw:
// nccl-tests' factor for both is 1).
absl::StatusOr<double> CommSeconds(const Machine& machine, Scheme scheme, double bytes, int gpus,
                                   int hosts, int ps_shards, const Curves& curves, bool extrapolate,
                                   std::string* note);

// The part of `comm` the backward pass does not hide: overlap in [0, 1] is
// the fraction of the backward time communication may run behind. With
// buckets, the last bucket's share of `comm` is always exposed.
double ExposedSeconds(double comm, double overlap, const MeasuredStep& w);

// Step time and throughput of `gpus` devices on `hosts` hosts. The single
// device's step time already holds what its scheme costs on one device, so
// the step is step_seconds + exposed(N) - exposed(1): one device predicts
// exactly its own figure.
absl::StatusOr<Prediction> Predict(const Machine& machine, Scheme scheme, const MeasuredStep& w,
                                   int gpus, int hosts, double overlap, int ps_shards,
                                   const Curves& curves, bool extrapolate);

// The hosts `gpus` devices need, filling each host first.
int HostsFor(int gpus, int gpus_per_host);

// --- Configuration files (tools/data/scaling/*.json) ---

struct ModelEntry {
  std::string name;   // zoo name (resnet50)
  std::string label;  // shown in tables (ResNet-50)
  std::string table;  // which published table ("synthetic, batch 64 per GPU")
  Scheme scheme = Scheme::kAllReduce;
  std::string scheme_detail;  // as published: "parameter_server, local_parameter_device=cpu"
  int ps_shards = 0;  // distributed_ps: parameter servers, at most one per host (0: one per host)
  int64_t batch = 0;
  double step_seconds = 0;
  double gradient_bytes = 0;        // 0 until resolved from the zoo
  int64_t parameters = 0;           // when given or resolved
  std::string parameters_source;    // "config" or "//models:zoo"
  std::map<int, double> published;  // gpus -> images/s
};

struct Config {
  std::string path;
  Machine machine;
  std::string source;  // what the published figures are
  std::vector<int> gpus;
  double overlap = 0;
  double backward_fraction = 2.0 / 3.0;
  double bucket_bytes = 0;
  std::vector<ModelEntry> models;
};

// Parses a configuration; errors name `path` and the field
// ("dgx1.json: models[2].images_per_second: must be a positive number").
// Models without "parameters" or "gradient_bytes" get their parameter count
// from `zoo_parameters(name)` (null: an error).
using ZooParameters = std::function<absl::StatusOr<int64_t>(const std::string& name)>;
absl::StatusOr<Config> ParseConfig(absl::string_view path, absl::string_view text,
                                   const ZooParameters& zoo_parameters);
absl::StatusOr<Config> LoadConfig(const std::string& path, const ZooParameters& zoo_parameters);

// --- Measured results (the suite's Google Benchmark JSON) ---

struct Measured {
  std::string path;
  // Each (impl/dtype) with allreduce cases (the sum's): its busbw curve;
  // the same for the reduce (sum) and broadcast cases.
  std::map<std::string, BusbwCurve> curves;
  std::map<std::string, BusbwCurve> reduce_curves;
  std::map<std::string, BusbwCurve> broadcast_curves;
  // train/<model>/<precision>/<data>/batch:<B>/gpus:<G> -> images/s (mean).
  std::map<std::string, double> train;
  // All-reduce (sum) cases that give no curve point: at one rank (busbw is
  // 0 by definition), or without a usable busbw (an error, none, not > 0).
  int allreduce_one_rank = 0, allreduce_unusable = 0;
};

absl::StatusOr<Measured> LoadMeasured(const std::string& path, std::vector<std::string>* warnings);

// The curve to use: `which` ("local/fp32"), or the only one; null when the
// file has none. Several and no choice: an error listing them.
absl::StatusOr<const BusbwCurve*> ChooseCurve(const Measured& measured, const std::string& which);
// The chosen all-reduce curve and the same impl/dtype's reduce and
// broadcast curves, where the file has them.
absl::StatusOr<Curves> ChooseCurves(const Measured& measured, const std::string& which);
// What `measured` lacks when it has no all-reduce curve (ChooseCurve gave
// null), and which of its all-reduce cases could not be used, for --measured.
std::string NoCurveMessage(const Measured& measured);

// --- Tables ---

struct RunOptions {
  std::vector<int> gpus;                               // rows (total devices)
  std::optional<double> overlap;                       // overrides the config's
  std::optional<Scheme> scheme;                        // overrides every model's
  std::string model;                                   // only this model ("": all)
  std::string precision = "fp32", data = "synthetic";  // measured train cases to show
  bool extrapolate = false;
  std::string format = "markdown";  // markdown or csv
};

// The tables for every model of `config`: per GPU count, the prediction
// without overlap and with the configured overlap, the published figure and
// the relative error, and a measured figure when `measured` has one.
absl::StatusOr<std::string> RenderTables(const Config& config, const Measured* measured,
                                         const Curves& curves, const RunOptions& options);

}  // namespace cnnbench::scaling

#endif  // CNNBENCH_TOOLS_SCALING_MODEL_LIB_H_
