// //tools:scaling_model_lib's formulas on hand-computed cases, its readers
// (configuration errors, a suite JSON with all-reduce busbw points), and
// //tools:scaling_model run as a user runs it. Bazel passes the binary
// ($(rootpath //tools:scaling_model)) and a shipped configuration as arguments.
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tools/scaling_model_lib.h"

namespace cnnbench::scaling {
namespace {

std::string g_binary;   // //tools:scaling_model
std::string g_shipped;  // tools/data/scaling/dgx1.json

std::string TempPath(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp ? tmp : "/tmp", "/", name);
}
std::string Write(const std::string& name, const std::string& text) {
  const std::string path = TempPath(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}
std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}
bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

Link MakeLink(double bandwidth, double latency, int shared_by = 1) {
  Link l;
  l.bandwidth = bandwidth;
  l.latency = latency;
  l.shared_by = shared_by;
  l.source = "test";
  return l;
}

Machine OneHost() {
  Machine m;
  m.name = "test box";
  m.gpus_per_host = 8;
  m.gpu_gpu = MakeLink(1e10, 0);
  m.gpu_host = MakeLink(1e10, 0);
  m.host_links = 1;
  return m;
}

MeasuredStep Resnet() {
  MeasuredStep w;
  w.step_seconds = 0.3;
  w.batch = 64;
  w.gradient_bytes = 1e9;
  w.backward_fraction = 2.0 / 3.0;  // 0.2 s of backward
  return w;
}

// ---- formulas ----

TEST(ScalingFormulaTest, OneDeviceIsTheStepTimeExactly) {
  Machine m = OneHost();
  m.network = MakeLink(1e9, 1e-4);
  for (Scheme s : {Scheme::kAllReduce, Scheme::kPsCpu, Scheme::kPsGpu, Scheme::kHierarchical,
                   Scheme::kDistributedPs}) {
    for (double overlap : {0.0, 0.5, 1.0}) {
      absl::StatusOr<Prediction> p = Predict(m, s, Resnet(), 1, 1, overlap, 0, nullptr, false);
      ASSERT_TRUE(p.ok()) << SchemeName(s) << ": " << p.status();
      EXPECT_EQ(p->step_seconds, 0.3) << SchemeName(s);
      EXPECT_EQ(p->images_per_second, 64 / 0.3) << SchemeName(s);
    }
  }
}

TEST(ScalingFormulaTest, RingAllReduceTimeForKnownBytesAndBandwidth) {
  // 2 (n-1)/n * bytes / bw + 2 (n-1) * latency: 2*3/4 * 1e9/1e10 + 6 * 1e-5.
  EXPECT_DOUBLE_EQ(RingAllReduceSeconds(1e9, 4, MakeLink(1e10, 1e-5)), 0.15 + 6e-5);
  EXPECT_DOUBLE_EQ(RingAllReduceSeconds(1e9, 2, MakeLink(1e10, 0)), 0.1);
  EXPECT_EQ(RingAllReduceSeconds(1e9, 1, MakeLink(1e10, 1)), 0);
  // Reduce (or broadcast) alone is half of it: (g-1)/g * bytes / bw + (g-1) * latency.
  EXPECT_DOUBLE_EQ(RingReduceSeconds(1e9, 4, MakeLink(1e10, 1e-5)), 0.075 + 3e-5);

  // Through Predict without overlap: 4 GPUs step 0.3 + 0.15, 4*64 images.
  absl::StatusOr<Prediction> p =
      Predict(OneHost(), Scheme::kAllReduce, Resnet(), 4, 1, 0.0, 0, nullptr, false);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_DOUBLE_EQ(p->comm_seconds, 0.15);
  EXPECT_DOUBLE_EQ(p->step_seconds, 0.45);
  EXPECT_DOUBLE_EQ(p->images_per_second, 256 / 0.45);
}

TEST(ScalingFormulaTest, FullOverlapHidesUpToTheBackwardTimeAndNoMore) {
  const MeasuredStep w = Resnet();  // backward 0.2 s
  EXPECT_EQ(ExposedSeconds(0.15, 1.0, w), 0);
  EXPECT_NEAR(ExposedSeconds(0.2, 1.0, w), 0, 1e-12);  // 2/3 * 0.3 rounds
  EXPECT_NEAR(ExposedSeconds(0.25, 1.0, w), 0.05, 1e-12);
  EXPECT_NEAR(ExposedSeconds(0.25, 0.5, w), 0.15, 1e-12);
  EXPECT_EQ(ExposedSeconds(0.25, 0.0, w), 0.25);

  // 4 GPUs, comm 0.15 s: hidden whole at overlap 1.
  absl::StatusOr<Prediction> hidden =
      Predict(OneHost(), Scheme::kAllReduce, w, 4, 1, 1.0, 0, nullptr, false);
  ASSERT_TRUE(hidden.ok()) << hidden.status();
  EXPECT_EQ(hidden->step_seconds, 0.3);
  // A slower link: comm 0.3 s, of which 0.1 s sticks out past the backward pass.
  Machine slow = OneHost();
  slow.gpu_gpu = MakeLink(5e9, 0);
  absl::StatusOr<Prediction> partly =
      Predict(slow, Scheme::kAllReduce, w, 4, 1, 1.0, 0, nullptr, false);
  ASSERT_TRUE(partly.ok()) << partly.status();
  EXPECT_DOUBLE_EQ(partly->comm_seconds, 0.3);
  EXPECT_NEAR(partly->step_seconds, 0.4, 1e-12);
}

TEST(ScalingFormulaTest, TheLastBucketIsNeverHidden) {
  MeasuredStep w = Resnet();
  w.bucket_bytes = w.gradient_bytes / 4;
  // 0.1 s would hide whole, but the last quarter starts only when backward ends.
  EXPECT_NEAR(ExposedSeconds(0.1, 1.0, w), 0.025, 1e-12);
  // Beyond the window, the overflow counts when it is the larger.
  EXPECT_NEAR(ExposedSeconds(0.4, 1.0, w), 0.2, 1e-12);
  // Without overlap, buckets change nothing.
  EXPECT_EQ(ExposedSeconds(0.1, 0.0, w), 0.1);
}

TEST(ScalingFormulaTest, ParameterServerBottleneckGrowsWithWorkers) {
  const Link server = MakeLink(1e10, 1e-5);
  double previous = 0;
  for (int workers : {1, 2, 4, 8}) {
    const double t = ParameterServerSeconds(1e9, workers, 1, server, 1e10, false);
    // Push and pull each move workers * bytes through the one server link.
    EXPECT_DOUBLE_EQ(t, 2 * (workers * 1e9 / 1e10 + 1e-5)) << workers;
    EXPECT_GT(t, previous) << workers;
    previous = t;
  }
  // Two server links halve the server side; a worker's own link then limits.
  EXPECT_DOUBLE_EQ(ParameterServerSeconds(1e9, 8, 2, server, 1e10, false), 2 * (0.4 + 1e-5));
  EXPECT_DOUBLE_EQ(ParameterServerSeconds(1e9, 1, 4, server, 1e10, false), 2 * (0.1 + 1e-5));
  // Colocated shards on every worker: each moves (n-1)/n of the bytes each way.
  EXPECT_DOUBLE_EQ(ParameterServerSeconds(1e9, 4, 4, MakeLink(1e10, 0), 1e10, true), 0.15);
  EXPECT_EQ(ParameterServerSeconds(1e9, 1, 1, server, 1e10, true), 0);

  // ps_cpu through Predict: more GPUs, a longer step.
  double step = 0;
  for (int gpus : {1, 2, 4, 8}) {
    absl::StatusOr<Prediction> p =
        Predict(OneHost(), Scheme::kPsCpu, Resnet(), gpus, 1, 0.0, 0, nullptr, false);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_GE(p->step_seconds, step) << gpus;
    if (gpus > 1) {
      EXPECT_GT(p->step_seconds, step) << gpus;
    }
    step = p->step_seconds;
  }
  // A link shared by two GPUs (a K80 board) halves what each gets.
  EXPECT_EQ(MakeLink(1e10, 0, 2).PerGpu(8), 5e9);
  EXPECT_EQ(MakeLink(1e10, 0, 2).PerGpu(1), 1e10);
}

TEST(ScalingFormulaTest, HierarchicalIsReduceRingBroadcast) {
  Machine m = OneHost();
  m.gpus_per_host = 4;
  m.gpu_gpu = MakeLink(1e10, 0);
  m.network = MakeLink(1e9, 1e-4);
  // 2 hosts of 4: 3/4 * 1e9/1e10 twice inside, 2*1/2 * 1e9/1e9 + 2 * 1e-4 between.
  absl::StatusOr<double> t =
      CommSeconds(m, Scheme::kHierarchical, 1e9, 8, 2, 0, nullptr, false, nullptr);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_DOUBLE_EQ(*t, 0.075 + 1.0 + 2e-4 + 0.075);
  // distributed_ps with one server per host moves what the ring does between
  // hosts (plus a latency per phase).
  absl::StatusOr<double> ps =
      CommSeconds(m, Scheme::kDistributedPs, 1e9, 8, 2, 0, nullptr, false, nullptr);
  ASSERT_TRUE(ps.ok()) << ps.status();
  EXPECT_DOUBLE_EQ(*ps, 0.15 + 2 * (0.5 + 1e-4));
  // One parameter server for four hosts: it takes three hosts' pushes.
  absl::StatusOr<double> one =
      CommSeconds(m, Scheme::kDistributedPs, 1e9, 16, 4, 1, nullptr, false, nullptr);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_DOUBLE_EQ(*one, 0.15 + 2 * (3.0 + 1e-4));

  // Schemes that cannot span hosts, and a machine with no network, say so.
  absl::StatusOr<double> ps_cpu =
      CommSeconds(m, Scheme::kPsCpu, 1e9, 8, 2, 0, nullptr, false, nullptr);
  EXPECT_FALSE(ps_cpu.ok());
  EXPECT_TRUE(Has(std::string(ps_cpu.status().message()), "one-host scheme"));
  absl::StatusOr<double> no_net =
      CommSeconds(OneHost(), Scheme::kHierarchical, 1e9, 16, 2, 0, nullptr, false, nullptr);
  EXPECT_FALSE(no_net.ok());
  EXPECT_TRUE(Has(std::string(no_net.status().message()), "links.network"));
  EXPECT_EQ(HostsFor(64, 8), 8);
  EXPECT_EQ(HostsFor(9, 8), 2);
  EXPECT_EQ(HostsFor(1, 8), 1);
}

// ---- configuration files ----

constexpr char kConfig[] = R"({
  "machine": "box",
  "gpus_per_host": 4,
  "links": {
    "gpu_gpu": {"GBps": 10, "latency_us": 0, "source": "spec"},
    "gpu_host": {"Gbit_per_s": 80, "latency_us": 0, "shared_by": 2, "source": "spec"}
  },
  "gpus": [1, 2, 4],
  "overlap": 1.0,
  "models": [
    {"name": "m", "label": "Model", "scheme": "allreduce", "batch": 64, "step_seconds": 0.3,
     "gradient_bytes": 1e9, "published": {"1": 213.3, "4": 600}},
    {"name": "resnet50", "scheme": "ps_cpu", "batch": 32, "images_per_second": 100}
  ]
})";

absl::StatusOr<int64_t> FakeZoo(const std::string& name) {
  if (name == "resnet50") return 25000000;
  return absl::NotFoundError(absl::StrCat("no model '", name, "'"));
}

TEST(ScalingConfigTest, ReadsAWholeConfiguration) {
  absl::StatusOr<Config> c = ParseConfig("box.json", kConfig, FakeZoo);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->machine.gpu_gpu.bandwidth, 1e10);
  EXPECT_EQ(c->machine.gpu_host.bandwidth, 1e10);  // 80 Gbit/s
  EXPECT_EQ(c->machine.gpu_host.shared_by, 2);
  ASSERT_EQ(c->models.size(), 2u);
  EXPECT_EQ(c->models[0].published.at(4), 600);
  EXPECT_EQ(c->models[1].parameters, 25000000);
  EXPECT_EQ(c->models[1].gradient_bytes, 1e8);
  EXPECT_EQ(c->models[1].parameters_source, "//models:zoo");
  EXPECT_DOUBLE_EQ(c->models[1].step_seconds, 0.32);
}

// `replace` in kConfig by `with`, then the error must name `field`.
void ExpectError(const std::string& replace, const std::string& with, const std::string& field) {
  std::string text = kConfig;
  const size_t at = text.find(replace);
  ASSERT_NE(at, std::string::npos) << replace;
  text.replace(at, replace.size(), with);
  absl::StatusOr<Config> c = ParseConfig("box.json", text, FakeZoo);
  ASSERT_FALSE(c.ok()) << with;
  const std::string message(c.status().message());
  EXPECT_TRUE(Has(message, "box.json: ")) << message;
  EXPECT_TRUE(Has(message, field)) << message;
}

TEST(ScalingConfigTest, ErrorsNameTheFileAndTheField) {
  ExpectError("\"batch\": 64", "\"batch\": -64", "models[0].batch: must be a positive integer");
  ExpectError("\"batch\": 64,", "", "models[0].batch: missing");
  ExpectError("\"step_seconds\": 0.3", "\"step_seconds\": \"fast\"",
              "models[0].step_seconds: must be a number");
  ExpectError("\"step_seconds\": 0.3,", "\"step_seconds\": 0.3, \"images_per_second\": 5,",
              "models[0]: give exactly one of images_per_second and step_seconds");
  ExpectError("\"scheme\": \"allreduce\"", "\"scheme\": \"gossip\"",
              "models[0].scheme: unknown scheme 'gossip'");
  ExpectError("\"GBps\": 10", "\"GBsp\": 10", "links.gpu_gpu.GBsp: unknown field");
  ExpectError("\"latency_us\": 0, \"source\"", "\"source\"", "links.gpu_gpu.latency_us: missing");
  ExpectError("\"overlap\": 1.0", "\"overlap\": 1.5", "overlap: must be in [0, 1]");
  ExpectError("\"gpus\": [1, 2, 4]", "\"gpus\": [1, 0]", "gpus[1]: must be a positive integer");
  ExpectError("\"4\": 600", "\"four\": 600", "models[0].published.four");
  ExpectError("\"name\": \"resnet50\"", "\"name\": \"resnet51\"",
              "models[1].name: no parameters or gradient_bytes given, and the zoo cannot count "
              "them: no model 'resnet51'");
  ExpectError("\"models\"", "\"modles\"", "modles: unknown field");

  absl::StatusOr<Config> broken = ParseConfig("box.json", "{\"machine\": ", FakeZoo);
  ASSERT_FALSE(broken.ok());
  EXPECT_TRUE(Has(std::string(broken.status().message()), "box.json: not valid JSON"))
      << broken.status();
  absl::StatusOr<Config> missing = LoadConfig(TempPath("no_such.json"), FakeZoo);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(Has(std::string(missing.status().message()), "no_such.json: cannot open"));
}

// ---- the suite's JSON ----

std::string Entry(const std::string& name, const std::string& counters) {
  return absl::StrCat(
      R"({"name": ")", name, R"(/iterations:20/manual_time", "run_name": ")", name,
      R"(/iterations:20/manual_time", "run_type": "iteration", )",
      R"("repetitions": 1, "repetition_index": 0, "threads": 1, "iterations": 20, )",
      R"("real_time": 1000.0, "cpu_time": 1000.0, "time_unit": "ns", )", counters, "}");
}

// busbw 1 GB/s at 1 MB, 4 GB/s at 100 MB, 8 GB/s at 10 GB on 4 ranks; 2 ranks at 1 MB only.
std::string SuiteJson() {
  return absl::StrCat(
      R"({"context": {"date": "2026-12-01", "host_name": "box", "platform": "box"}, "benchmarks": [)",
      Entry("allreduce/local/fp32/bytes:1000000/ranks:4", R"("algbw": 6.7e8, "busbw": 1e9)"), ",",
      Entry("allreduce/local/fp32/bytes:100000000/ranks:4", R"("algbw": 2.7e9, "busbw": 4e9)"), ",",
      Entry("allreduce/local/fp32/bytes:10000000000/ranks:4", R"("algbw": 5.3e9, "busbw": 8e9)"),
      ",", Entry("allreduce/local/fp32/bytes:1000000/ranks:2", R"("algbw": 1e9, "busbw": 1e9)"),
      ",", Entry("train/resnet50/fp32/synthetic/batch:32/gpus:4", R"("images_per_second": 321.5)"),
      "]}");
}

// A run with train cases but no all-reduce; one with an all-reduce at one rank only.
std::string TrainOnlyJson() {
  return absl::StrCat(
      R"({"context": {"date": "2026-12-01", "host_name": "box", "platform": "box"}, "benchmarks": [)",
      Entry("train/resnet50/fp32/synthetic/batch:32/gpus:1", R"("images_per_second": 100)"), "]}");
}
std::string OneRankJson() {
  return absl::StrCat(
      R"({"context": {"date": "2026-12-01", "host_name": "box", "platform": "box"}, "benchmarks": [)",
      Entry("allreduce/local/fp32/sum/bytes:1000000/ranks:1", R"("algbw": 6.7e8, "busbw": 0)"),
      "]}");
}

TEST(ScalingMeasuredTest, BusbwIsInterpolatedInLogBytesAndNeverSilentlyExtrapolated) {
  const std::string path = Write("suite.json", SuiteJson());
  std::vector<std::string> warnings;
  absl::StatusOr<Measured> m = LoadMeasured(path, &warnings);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->train.at("train/resnet50/fp32/synthetic/batch:32/gpus:4"), 321.5);
  absl::StatusOr<const BusbwCurve*> curve = ChooseCurve(*m, "");
  ASSERT_TRUE(curve.ok()) << curve.status();
  ASSERT_NE(*curve, nullptr);
  const BusbwCurve& c = **curve;

  // Measured points exactly; 10 MB is halfway between 1 MB and 100 MB in log(bytes).
  EXPECT_EQ(*c.At(100000000, 4, false, nullptr), 4e9);
  EXPECT_NEAR(*c.At(10000000, 4, false, nullptr), 2.5e9, 1);
  EXPECT_NEAR(*c.At(1000000000, 4, false, nullptr), 6e9, 1);

  // Outside the measured sizes: an error naming the range, or with
  // --extrapolate the nearest point and a note saying so.
  absl::StatusOr<double> beyond = c.At(20000000000, 4, false, nullptr);
  ASSERT_FALSE(beyond.ok());
  EXPECT_TRUE(Has(std::string(beyond.status().message()), "1000000 to 10000000000 bytes"))
      << beyond.status();
  EXPECT_TRUE(Has(std::string(beyond.status().message()), "does not extrapolate"));
  std::string note;
  absl::StatusOr<double> nearest = c.At(1000, 4, true, &note);
  ASSERT_TRUE(nearest.ok());
  EXPECT_EQ(*nearest, 1e9);
  EXPECT_TRUE(Has(note, "took the busbw of 1000000 bytes")) << note;

  // A rank count never measured: NotFound naming what there is.
  absl::StatusOr<double> eight = c.At(1000000, 8, false, nullptr);
  EXPECT_TRUE(absl::IsNotFound(eight.status()));
  EXPECT_TRUE(Has(std::string(eight.status().message()), "ranks: 2, 4")) << eight.status();

  // Predict uses the curve for 4 ranks (100 MB at 4 GB/s busbw: 2*3/4 * 0.1/4 s).
  MeasuredStep w = Resnet();
  w.gradient_bytes = 1e8;
  absl::StatusOr<Prediction> p = Predict(OneHost(), Scheme::kAllReduce, w, 4, 1, 0.0, 0, &c, false);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_DOUBLE_EQ(p->comm_seconds, 1.5 * 1e8 / 4e9);
  EXPECT_TRUE(Has(p->note, "busbw measured")) << p->note;
  // 2 ranks measured only at 1 MB: 100 MB is out of range there, and that is an error.
  EXPECT_FALSE(Predict(OneHost(), Scheme::kAllReduce, w, 2, 1, 0.0, 0, &c, false).ok());
  // 8 ranks not measured: the declared link, with a note saying so.
  absl::StatusOr<Prediction> declared =
      Predict(OneHost(), Scheme::kAllReduce, w, 8, 1, 0.0, 0, &c, false);
  ASSERT_TRUE(declared.ok()) << declared.status();
  EXPECT_DOUBLE_EQ(declared->comm_seconds, 2.0 * 7 / 8 * 1e8 / 1e10);
  EXPECT_TRUE(Has(declared->note, "declared gpu_gpu link")) << declared->note;

  // A file with several kinds needs a choice.
  Measured two = *m;
  two.curves["nccl/fp32"] = c;
  absl::StatusOr<const BusbwCurve*> ambiguous = ChooseCurve(two, "");
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_TRUE(Has(std::string(ambiguous.status().message()), "local/fp32, nccl/fp32"));
  EXPECT_TRUE(ChooseCurve(two, "nccl/fp32").ok());
}

// The in-host reduce and broadcast of hierarchical and distributed_ps use
// the file's reduce and broadcast curves (busbw = algbw for both: the time
// is bytes / busbw), read beside the all-reduce's for the same impl/dtype.
TEST(ScalingMeasuredTest, ReduceAndBroadcastCurvesCostTheInHostSteps) {
  const std::string path = Write(
      "collectives.json",
      absl::StrCat(
          R"({"context": {"date": "2026-12-02", "host_name": "box", "platform": "box"}, )",
          R"("benchmarks": [)",
          Entry("allreduce/nccl/fp32/sum/bytes:1000000000/ranks:4", R"("busbw": 4e9)"), ",",
          Entry("reduce/nccl/fp32/sum/bytes:1000000000/ranks:4", R"("busbw": 2e9)"), ",",
          Entry("reduce/nccl/fp32/max/bytes:1000000000/ranks:4", R"("busbw": 9e9)"), ",",
          Entry("broadcast/nccl/fp32/none/bytes:1000000000/ranks:4", R"("busbw": 5e9)"), ",",
          Entry("allgather/nccl/fp32/none/bytes:1000000000/ranks:4", R"("busbw": 7e9)"), "]}"));
  std::vector<std::string> warnings;
  absl::StatusOr<Measured> m = LoadMeasured(path, &warnings);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->curves.size(), 1u);
  EXPECT_EQ(m->reduce_curves.size(), 1u) << "the sum's reduce only";
  EXPECT_EQ(m->broadcast_curves.size(), 1u);
  absl::StatusOr<Curves> curves = ChooseCurves(*m, "");
  ASSERT_TRUE(curves.ok()) << curves.status();
  ASSERT_NE(curves->reduce, nullptr);
  ASSERT_NE(curves->broadcast, nullptr);
  EXPECT_TRUE(Has(curves->reduce->origin, "reduce/nccl/fp32")) << curves->reduce->origin;

  Machine machine = OneHost();
  machine.gpus_per_host = 4;
  machine.gpu_gpu = MakeLink(1e10, 0);
  machine.network = MakeLink(1e9, 1e-4);
  std::string note;
  // 2 hosts of 4: 1e9 / 2e9 to reduce, the ring between hosts, 1e9 / 5e9 to broadcast.
  absl::StatusOr<double> t =
      CommSeconds(machine, Scheme::kHierarchical, 1e9, 8, 2, 0, *curves, false, &note);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_DOUBLE_EQ(*t, 0.5 + 1.0 + 2e-4 + 0.2);
  EXPECT_TRUE(Has(note, "reduce/nccl/fp32")) << note;
  EXPECT_TRUE(Has(note, "broadcast/nccl/fp32")) << note;
  absl::StatusOr<double> ps =
      CommSeconds(machine, Scheme::kDistributedPs, 1e9, 8, 2, 0, *curves, false, nullptr);
  ASSERT_TRUE(ps.ok()) << ps.status();
  EXPECT_DOUBLE_EQ(*ps, 0.5 + 0.2 + 2 * (0.5 + 1e-4));
  // One host of 4: the all-reduce's curve (2 x 3/4 x 1e9 / 4e9).
  absl::StatusOr<double> one =
      CommSeconds(machine, Scheme::kHierarchical, 1e9, 4, 1, 0, *curves, false, nullptr);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_DOUBLE_EQ(*one, 1.5 * 1e9 / 4e9);
}

// ---- the command line ----

struct ToolRun {
  int exit_code = -1;
  std::string out, err;
};

ToolRun RunTool(const std::string& args) {
  const std::string out = TempPath("out"), err = TempPath("err");
  const int status =
      std::system(absl::StrCat("'", g_binary, "' ", args, " >'", out, "' 2>'", err, "'").c_str());
  ToolRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = Read(out);
  run.err = Read(err);
  return run;
}

TEST(ScalingToolTest, PrintsPredictionsBesidePublishedAndMeasured) {
  const std::string config = Write("box.json", kConfig);
  const std::string suite = Write("suite_cli.json", SuiteJson());
  // 2 ranks were measured at 1 MB only: 1 GB there is refused, or taken from
  // the nearest size with --extrapolate and a note.
  ToolRun run = RunTool(absl::StrCat("--config=", config, " --measured=", suite));
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_TRUE(Has(run.err,
                  "Model on 2 GPUs: 1000000000 bytes is outside the sizes measured on "
                  "ranks:2"))
      << run.err;
  EXPECT_TRUE(Has(run.err, "does not extrapolate")) << run.err;
  run = RunTool(absl::StrCat("--config=", config, " --measured=", suite, " --extrapolate"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(Has(run.out, "took the busbw of 1000000 bytes")) << run.out;
  // CSV keeps the note in its own column.
  run = RunTool(absl::StrCat("--config=", config, " --measured=", suite,
                             " --extrapolate --format=csv --model=m --gpus=2"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(Has(run.out, ",measured,note\n")) << run.out;
  EXPECT_TRUE(Has(run.out, "took the busbw of 1000000 bytes\"\n")) << run.out;

  run = RunTool(absl::StrCat("--config=", config, " --measured=", suite, " --gpus=1,4"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // Model m, 4 GPUs at 1 GB, 4 ranks: busbw from the curve at 1e9 bytes (6 GB/s):
  // comm 1.5 * 1e9 / 6e9 = 0.25 s; no overlap 256 / 0.55 = 465; overlap 1: 256 / 0.35 = 731.
  EXPECT_TRUE(Has(run.out, "| 4 | 1 | 250.0 [1] | 465 | 731 | 600 | -22.4% | +21.9% | — |"))
      << run.out;
  EXPECT_TRUE(Has(run.out, "| 1 | 1 | 0.0 | 213 | 213 | 213 | +0.0% | +0.0% | — |")) << run.out;
  EXPECT_TRUE(Has(run.out, "[1] busbw measured (")) << run.out;
  // resnet50 (parameters from the real zoo) beside the measured train case.
  EXPECT_TRUE(Has(run.out, "fp32 parameters, //models:zoo")) << run.out;
  EXPECT_TRUE(Has(run.out, "| 322 |")) << run.out;

  run = RunTool(absl::StrCat("--config=", config, " --format=csv --model=m --gpus=2 --overlap=0"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(Has(run.out, "machine,table,model,scheme,gpus,")) << run.out;
  // 2 GPUs over the declared 10 GB/s link: comm 0.1 s, 128 / 0.4 images/s.
  EXPECT_TRUE(Has(run.out, "\"box\",\"\",m,allreduce,2,1,100.0,320.00,320.00,0.00,,,,,\"\"\n"))
      << run.out;
}

TEST(ScalingToolTest, TheShippedConfigurationsRun) {
  ToolRun run = RunTool(absl::StrCat("--config=", g_shipped));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(Has(run.out, "## NVIDIA DGX-1")) << run.out;
  EXPECT_TRUE(Has(run.out, "Mean |error| over the")) << run.out;
  run = RunTool(absl::StrCat("--config=", g_shipped, " --hosts=2 --scheme=hierarchical"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(Has(run.out, "| 16 | 2 |")) << run.out;
}

TEST(ScalingToolTest, HelpListsTheFlags) {
  // absl's usage flags are not mistaken for unknown ones.
  for (const char* flag : {"--help", "--helpshort"}) {
    ToolRun run = RunTool(flag);
    EXPECT_NE(run.exit_code, 2) << flag;
    EXPECT_TRUE(Has(run.out + run.err, "--overlap")) << flag << "\n" << run.out << run.err;
  }
}

TEST(ScalingToolTest, BadInputExitsTwoNamingWhatAndWhere) {
  const std::string config = Write("box2.json", kConfig);
  struct Case {
    std::string args, message;
  } cases[] = {
      {"", "--config=<file> is required"},
      {absl::StrCat("--config=", config, " --overlap=lots"), "--overlap=lots: must be a number"},
      {absl::StrCat("--config=", config, " --overlap=1.5"), "--overlap=1.5"},
      {absl::StrCat("--config=", config, " --gpus=1,x"), "--gpus=1,x: 'x' is not a whole number"},
      // The list flags read as the suite's: duplicate rows, an empty list
      // or item, a count below 1 are refused, not printed twice or ignored.
      {absl::StrCat("--config=", config, " --gpus=1,1"), "--gpus=1,1: '1' is given twice"},
      {absl::StrCat("--config=", config, " --hosts=2,2"), "--hosts=2,2: '2' is given twice"},
      {absl::StrCat("--config=", config, " --gpus="), "--gpus is empty (leave it out for the"},
      {absl::StrCat("--config=", config, " --gpus=1,,2"), "--gpus=1,,2: an empty item"},
      {absl::StrCat("--config=", config, " --gpus=0"), "--gpus=0: '0' is less than 1"},
      // The measured cases to show: a precision or data kind no case name
      // can hold would leave the column empty without a word.
      {absl::StrCat("--config=", config, " --precision=fp8"),
       "--precision=fp8: unknown precision 'fp8' (known: fp32, tf32, fp16, bf16"},
      {absl::StrCat("--config=", config, " --data=bogus"),
       "--data=bogus: data 'bogus' is neither synthetic nor real"},
      {absl::StrCat("--config=", config, " --scheme=gossip"), "--scheme: unknown scheme 'gossip'"},
      {absl::StrCat("--config=", config, " --format=xml"), "--format must be markdown or csv"},
      {absl::StrCat("--config=", config, " --model=nope"), "--model=nope"},
      {absl::StrCat("--config=", config, " --gpus=2 --hosts=2"), "not both"},
      {absl::StrCat("--config=", config, " --gpus=8"), "Model on 8 GPUs: 2 hosts need a network"},
      {absl::StrCat("--config=", config, " --hosts=2"), "links.network"},
      {absl::StrCat("--config=", config, " --speed=11"), "unknown flag --speed"},
      {absl::StrCat("--config=", Write("bad.json", "{\"machine\": 1")), "bad.json: not valid JSON"},
      {absl::StrCat("--config=", config, " --measured=", Write("notsuite.json", "[1]")),
       "notsuite.json: not Google Benchmark JSON"},
      {absl::StrCat("--config=", TempPath("absent.json")), "absent.json: cannot open"},
      // --measured without an all-reduce curve: what the file lacks, not a
      // column of dashes with exit 0.
      {absl::StrCat("--config=", config, " --measured=", Write("train_only.json", TrainOnlyJson())),
       "train_only.json: no all-reduce case to draw a busbw curve from: --measured needs the "
       "sum's all-reduce at 2 or more ranks"},
      {absl::StrCat("--config=", config, " --measured=", Write("one_rank.json", OneRankJson())),
       "one_rank.json: no all-reduce case to draw a busbw curve from: --measured needs the "
       "sum's all-reduce at 2 or more ranks (allreduce/<impl>/<dtype>/sum/bytes:<S>/ranks:<N>, "
       "N >= 2, as //bench:all --families=allreduce writes them); its all-reduce sum cases are "
       "1 at one rank, where busbw is 0 by definition"},
  };
  for (const Case& c : cases) {
    ToolRun run = RunTool(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.args << "\n" << run.err;
    EXPECT_TRUE(Has(run.err, c.message)) << c.args << "\n" << run.err;
    EXPECT_TRUE(run.out.empty()) << c.args << "\n" << run.out;
  }
}

}  // namespace
}  // namespace cnnbench::scaling

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <scaling_model binary> <config>\n", argv[0]);
    return 2;
  }
  cnnbench::scaling::g_binary = argv[1];
  cnnbench::scaling::g_shipped = argv[2];
  return RUN_ALL_TESTS();
}
