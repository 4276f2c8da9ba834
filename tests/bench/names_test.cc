#include "bench/suite/names.h"

#include <algorithm>
#include <array>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cnnbench::bench {
namespace {

TEST(NamesTest, TrainNameRoundTrips) {
  const std::string name = TrainCaseName("resnet50", "fp16", "synthetic", 64, 8);
  EXPECT_EQ(name, "train/resnet50/fp16/synthetic/batch:64/gpus:8");
  auto c = ParseCaseName(name);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->family, "train");
  EXPECT_EQ(c->model, "resnet50");
  EXPECT_EQ(c->precision, "fp16");
  EXPECT_EQ(c->data, "synthetic");
  EXPECT_EQ(c->batch, 64);
  EXPECT_EQ(c->gpus, 8);
  EXPECT_EQ(c->ToString(), name);
}

TEST(NamesTest, CpuReplicasAreNamedAndParsed) {
  const std::string name = TrainCaseName("resnet50", "fp32", "synthetic", 16, 0, 2);
  EXPECT_EQ(name, "train/resnet50/fp32/synthetic/batch:16/gpus:0/replicas:2");
  auto c = ParseCaseName(absl::StrCat(name, "/iterations:3/manual_time"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->replicas, 2);
  EXPECT_EQ(c->gpus, 0);
  EXPECT_EQ(c->ToString(), name);
  // One replica keeps the plain name, and differs from the two-replica case.
  EXPECT_EQ(TrainCaseName("resnet50", "fp32", "synthetic", 16, 0, 1),
            "train/resnet50/fp32/synthetic/batch:16/gpus:0");
  EXPECT_FALSE(*c == *ParseCaseName("train/resnet50/fp32/synthetic/batch:16/gpus:0"));
  // GPU replicas are counted by gpus:<G>.
  EXPECT_EQ(TrainCaseName("resnet50", "fp32", "synthetic", 16, 4, 4),
            "train/resnet50/fp32/synthetic/batch:16/gpus:4");
  for (const char* bad : {"train/resnet50/fp32/synthetic/batch:16/gpus:2/replicas:2",
                          "train/resnet50/fp32/synthetic/batch:16/gpus:0/replicas:1",
                          "train/resnet50/fp32/synthetic/batch:16/gpus:0/ranks:2"}) {
    auto parsed = ParseCaseName(bad);
    EXPECT_FALSE(parsed.ok()) << bad;
    EXPECT_THAT(std::string(parsed.status().message()), ::testing::HasSubstr("replicas")) << bad;
  }
}

TEST(NamesTest, HarnessSuffixesAreStripped) {
  for (const char* raw :
       {"train/vgg16/fp32/real/batch:32/gpus:0/iterations:100/repeats:5/manual_time",
        "train/vgg16/fp32/real/batch:32/gpus:0/manual_time_mean",
        "train/vgg16/fp32/real/batch:32/gpus:0/real_time",
        "train/vgg16/fp32/real/batch:32/gpus:0/min_warmup_time:0.1/process_time"}) {
    auto c = ParseCaseName(raw);
    ASSERT_TRUE(c.ok()) << raw << ": " << c.status();
    EXPECT_EQ(c->ToString(), "train/vgg16/fp32/real/batch:32/gpus:0");
  }
}

TEST(NamesTest, InputThreadsIsNotASuffix) {
  auto c = ParseCaseName("input/folder/train/threads:8/iterations:3/threads:1/manual_time");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->threads, 8);
  EXPECT_EQ(c->ToString(), "input/folder/train/threads:8");
}

TEST(NamesTest, PeakNamesRoundTrip) {
  const CaseName built = CaseName::Peak("fp32", 8);
  EXPECT_EQ(built.ToString(), "peak/fp32/cpu/threads:8");
  // Google Benchmark's own "threads:" suffix comes after the case's part.
  auto c = ParseCaseName("peak/fp32/cpu/threads:8/min_time:0.500/repeats:5/manual_time_mean");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->family, "peak");
  EXPECT_EQ(c->precision, "fp32");
  EXPECT_EQ(c->device, "cpu");
  EXPECT_EQ(c->threads, 8);
  EXPECT_EQ(*c, built);
  EXPECT_EQ(c->ToString(), "peak/fp32/cpu/threads:8");
  // The precision and the team size tell cases apart.
  EXPECT_FALSE(built == CaseName::Peak("bf16", 8));
  EXPECT_FALSE(built == CaseName::Peak("fp32", 4));
  const CaseFamily* family = FindCaseFamily("peak");
  ASSERT_NE(family, nullptr);
  EXPECT_EQ(family->counter, "flops");
  EXPECT_TRUE(family->registered);
  EXPECT_TRUE(family->shape_kind.empty());  // not a layer kernel: no descriptor
}

TEST(NamesTest, MalformedPeakNamesAreClearErrors) {
  struct Bad {
    const char* name;
    const char* reason;  // part of the message
  };
  for (const Bad& bad : {
           Bad{"peak/fp16/cpu/threads:2", "precision 'fp16' is neither fp32 nor bf16"},
           Bad{"peak/tf32/cpu/threads:2", "precision 'tf32'"},
           Bad{"peak/fp32/cuda:0/threads:2", "'threads:2' where the fp32 GPU peak's fma belongs"},
           Bad{"peak/fp32/tpu/threads:2", "device 'tpu' is not cpu"},
           Bad{"peak/fp32/cpu/threads:0", "'threads:0' where threads:<T> (T > 0)"},
           Bad{"peak/fp32/cpu/threads:-1", "'threads:-1' where threads:<T>"},
           Bad{"peak/fp32/cpu/threads:x", "'threads:x' where threads:<T>"},
           Bad{"peak/fp32/cpu/cores:2", "'cores:2' where threads:<T>"},
           Bad{"peak/fp32/cpu", "does not match peak/<fp32|bf16|tf32|fp16|fp8>/<cpu|cuda>/"},
           Bad{"peak/fp32/cpu/threads:2/extra", "does not match peak/"},
           Bad{"peak/fp32/threads:2", "does not match peak/"},
       }) {
    auto c = ParseCaseName(bad.name);
    ASSERT_FALSE(c.ok()) << bad.name << " parsed as " << c->ToString();
    EXPECT_NE(c.status().message().find(bad.reason), absl::string_view::npos)
        << bad.name << ": " << c.status().message();
  }
}

TEST(NamesTest, KernelNamesRoundTrip) {
  for (const std::string name :
       {"conv/bwd_filter/fp32/cpu/conv:mb32_ic64oc64_ih56oh56kh3sh1ph1_iw56ow56kw3sw1pw1",
        "fc/fwd/bf16/cuda:0/fc:mb32ic2048oc1001",
        "pool/max/bwd/fp32/cpu/pool:max_mb32ic64_ih112oh56kh3sh2pt0pb1_iw112ow56kw3sw2pl0pr1",
        "batchnorm/fwd/fp32/cpu/bn:mb32ic64ih56iw56_eps0.001mom0.997",
        "relu/bwd/fp32/cpu/relu:mb32ic64ih56iw56",
        "gemm/fp32/cpu/gemm:m2048n2048k2048",
        "allreduce/local/fp32/sum/bytes:1048576/ranks:4",
        "allreduce/mpi/int64/avg/bytes:64/ranks:2",
        "allreduce/nccl/int32/prod/bytes:4/ranks:8",
        "allgather/nccl/bf16/none/bytes:96/ranks:3",
        "reducescatter/mpi/fp64/min/bytes:8/ranks:1",
        "broadcast/local/int64/none/bytes:8/ranks:2",
        "reduce/local/fp16/max/bytes:2/ranks:7",
        "alltoall/mpi/int32/none/bytes:24/ranks:3",
        "gather/nccl/fp16/none/bytes:64/ranks:4",
        "scatter/local/int64/none/bytes:48/ranks:3",
        "input/tfrecord/train/threads:8",
        "grads/resnet50_v1.5/nccl/bucket_mb:25/ranks:8",
        "peak/fp32/cpu/threads:16",
        "peak/bf16/cpu/threads:1",
        "bandwidth/copy/cpu/bytes:67108864/threads:2",
        "peak/fp32/cuda/fma",
        "peak/bf16/cuda/gemm:m8192n8192k8192",
        "peak/fp8/cuda:1/gemm:m1024n1024k1024",
        "bandwidth/d2d/cuda:1/bytes:1024/threads:1"}) {
    auto c = ParseCaseName(name);
    ASSERT_TRUE(c.ok()) << name << ": " << c.status();
    EXPECT_EQ(c->ToString(), name);
  }
}

TEST(NamesTest, GrammarViolationsAreClearErrors) {
  struct Bad {
    const char* name;
    const char* reason;  // part of the message
  };
  for (const Bad& bad : {
           Bad{"train/resnet50/fp8/synthetic/batch:64/gpus:1", "precision 'fp8'"},
           Bad{"train/resnet50/fp32/synthetic/batch:0/gpus:1", "'batch:0' where batch:<B>"},
           Bad{"train/resnet50/fp32/fake/batch:64/gpus:1", "data 'fake'"},
           Bad{"train/resnet50/fp32/synthetic/batch:64", "does not match train/"},
           Bad{"infer/resnet50/fp32/synthetic/batch:1/gpus:0/replicas:2", "has no replicas"},
           Bad{"conv/fwd2/fp32/cpu/conv:mb1", "does not match conv/"},
           Bad{"conv/fwd/fp32/tpu:0/conv:mb1", "device 'tpu:0'"},
           Bad{"conv/fwd/fp32/cpu/pool:max", "shape 'pool:max'"},
           Bad{"relu/bwd_data/fp32/cpu/relu:mb1", "does not match relu/<fwd|bwd>"},
           Bad{"pool/min/fwd/fp32/cpu/pool:max", "does not match pool/"},
           Bad{"allreduce/gloo/fp32/sum/bytes:8/ranks:2", "does not match allreduce/"},
           Bad{"allreduce/local/fp32/sum/bytes:8/ranks:0", "does not match allreduce/"},
           Bad{"allreduce/local/fp32/none/bytes:8/ranks:2", "does not match allreduce/"},
           Bad{"allreduce/local/uint8/sum/bytes:8/ranks:2", "does not match allreduce/"},
           Bad{"allreduce/local/fp32/sum/bytes:0/ranks:2", "does not match allreduce/"},
           Bad{"allgather/local/fp32/sum/bytes:8/ranks:2", "does not match allgather/"},
           Bad{"broadcast/local/fp32/bytes:8/ranks:2", "does not match broadcast/"},
           Bad{"reduce/local/fp32/mean/bytes:8/ranks:2", "does not match reduce/"},
           Bad{"bandwidth/scale/cpu/bytes:8/threads:1", "kind 'scale'"},
           Bad{"bandwidth/d2d/cpu/bytes:8/threads:1", "device 'cpu' does not go with d2d"},
           Bad{"bandwidth/triad/cuda/bytes:8/threads:1", "device 'cuda' does not go with triad"},
           Bad{"bandwidth/copy/cpu/bytes:0/threads:1", "'bytes:0' where bytes:<S>"},
           Bad{"bandwidth/copy/cpu/bytes:8/threads:0", "'threads:0' where threads:<T>"},
           Bad{"peak/fp32/cuda/gemm:m8n8k8", "where the fp32 GPU peak's fma belongs"},
           Bad{"peak/int8/cuda/fma", "precision 'int8' has no GPU peak"},
           Bad{"peak/bf16/cuda/fma", "where a canonical gemm:m<M>n<N>k<K> belongs"},
           Bad{"frobnicate/x", "not a cnnbench case name"},
       }) {
    auto c = ParseCaseName(bad.name);
    ASSERT_FALSE(c.ok()) << bad.name;
    EXPECT_NE(c.status().message().find(bad.reason), absl::string_view::npos)
        << bad.name << ": " << c.status().message();
  }
}

TEST(NamesTest, EveryFamilyOfTheTableParsesItsOwnGrammar) {
  // One example name per family, built by the printer: the table's part
  // count, passes and shape prefix must accept what the printer writes.
  const std::vector<CaseName> examples = {
      CaseName::Train("resnet50", "fp32", "synthetic", 32, 1),
      CaseName::Kernel(Family::kConv, "bwd_data", "fp32", "cpu",
                       "conv:mb64_ic256oc512_ih56oh28kh1sh2ph0_iw56ow28kw1sw2pw0"),
      CaseName::Kernel(Family::kFc, "bwd_filter", "bf16", "cuda:1", "fc:mb1ic2oc3"),
      CaseName::Kernel(Family::kPool, "avg/bwd", "fp32", "cpu",
                       "pool:avg_mb32ic64_ih112oh55kh3sh2ph0_iw112ow55kw3sw2pw0"),
      CaseName::Kernel(Family::kBatchNorm, "bwd", "fp16", "cpu", "bn:mb32ic64ih56iw56_eps0.001mom0.997"),
      CaseName::Kernel(Family::kRelu, "fwd", "fp32", "cpu", "relu:mb32ic64ih56iw56"),
      CaseName::Kernel(Family::kGemm, "", "tf32", "cuda", "gemm:m1n2k3"),
      CaseName::Collective("allreduce", "nccl", "fp16", "sum", 1024, 8),
      CaseName::Collective("allgather", "local", "fp32", "none", 96, 3),
      CaseName::Collective("reducescatter", "mpi", "bf16", "avg", 64, 2),
      CaseName::Collective("broadcast", "nccl", "int32", "none", 4, 1),
      CaseName::Collective("reduce", "local", "fp64", "prod", 8, 4),
      CaseName::Collective("alltoall", "nccl", "bf16", "none", 96, 3),
      CaseName::Collective("gather", "mpi", "fp32", "none", 128, 2),
      CaseName::Collective("scatter", "local", "int32", "none", 32, 4),
      CaseName::Grads("resnet50", "local", 25, 2),
      CaseName::Input("folder", "train", 4),
      CaseName::Peak("bf16", 2),
      CaseName::Bandwidth("triad", "cpu", 1 << 20, 4),
      CaseName::Infer("mobilenet", "bf16", "real", 1, 0),
  };
  std::vector<std::string> families;
  for (const CaseName& c : examples) {
    const std::string name = c.ToString();
    const CaseFamily* family = FindCaseFamily(c.family);
    ASSERT_NE(family, nullptr) << name;
    families.push_back(family->name);
    // The grammar line names the family and has the table's part count
    // (an optional "[/...]" tail not counted).
    EXPECT_EQ(family->grammar.substr(0, family->name.size() + 1), family->name + "/");
    const std::string required = family->grammar.substr(0, family->grammar.find('['));
    EXPECT_EQ(static_cast<size_t>(std::count(required.begin(), required.end(), '/')) + 1,
              family->parts)
        << family->grammar;
    EXPECT_EQ(static_cast<size_t>(std::count(name.begin(), name.end(), '/')) + 1, family->parts)
        << name;
    EXPECT_FALSE(family->counter.empty()) << name;
    auto parsed = ParseCaseName(name + "/iterations:5/repeats:2/manual_time_mean");
    ASSERT_TRUE(parsed.ok()) << name << ": " << parsed.status();
    EXPECT_EQ(*parsed, c) << name;
  }
  // The examples cover the table, in its order.
  std::vector<std::string> table;
  for (const CaseFamily& f : CaseFamilies()) table.push_back(f.name);
  EXPECT_EQ(families, table);
  EXPECT_EQ(RegisteredFamilyList(),
            "train, conv, fc, pool, batchnorm, relu, gemm, allreduce, allgather, reducescatter, "
            "broadcast, reduce, alltoall, gather, scatter, grads, input, peak, bandwidth, infer");
}

// What makes every family-indexed table complete: its entries have no
// default, so an initializer short of a family is ill-formed (the
// elements it leaves out would be default-constructed).
using Entry = FamilyEntry<int (*)()>;
static_assert(!std::is_default_constructible_v<Entry>);
static_assert(std::tuple_size_v<FamilyTable<int (*)()>> == kFamilyCount);
static_assert(kFamilyCount == static_cast<size_t>(Family::kCount));
// A table in family order passes InFamilyOrder; one with two rows swapped
// does not (the static_asserts beside the suite's and the report's tables).
constexpr int Zero() { return 0; }
// Every family's entry, in Family's order (made from the enum itself, so a
// family added there needs nothing here).
template <size_t... I>
constexpr FamilyTable<int (*)()> EveryFamily(std::index_sequence<I...>) {
  return {{FamilyEntry<int (*)()>(static_cast<Family>(I), Zero)...}};
}
constexpr FamilyTable<int (*)()> OrderedTable(bool swapped) {
  FamilyTable<int (*)()> table = EveryFamily(std::make_index_sequence<kFamilyCount>());
  if (swapped) {
    const FamilyEntry<int (*)()> first = table[0];
    table[0] = table[1];
    table[1] = first;
  }
  return table;
}
static_assert(InFamilyOrder(OrderedTable(false)));
static_assert(!InFamilyOrder(OrderedTable(true)));
static_assert(!std::is_default_constructible_v<CaseFamily>);

TEST(NamesTest, EachFamilyIsItsEnumValuesEntryAndOwnsItsGrammar) {
  ASSERT_EQ(CaseFamilies().size(), kFamilyCount);
  for (size_t i = 0; i < kFamilyCount; ++i) {
    const CaseFamily& f = CaseFamilies()[i];
    EXPECT_EQ(static_cast<size_t>(f.id), i) << f.name;
    EXPECT_EQ(FindCaseFamily(f.name), &f) << f.name;
    EXPECT_NE(f.parse, nullptr) << f.name;
    EXPECT_NE(f.print, nullptr) << f.name;
  }
  // Dispatch goes through the entry: a train name is parsed by train's parser.
  auto name = ParseCaseName("train/resnet50/fp32/synthetic/batch:64/gpus:1");
  ASSERT_TRUE(name.ok()) << name.status();
  EXPECT_EQ(CaseFamilies()[static_cast<size_t>(Family::kTrain)].print(*name), name->ToString());
}

TEST(NamesTest, ShapePrefixComesFromTheTable) {
  // batchnorm's descriptors are "bn:...", not "batchnorm:...".
  EXPECT_TRUE(ParseCaseName("batchnorm/fwd/fp32/cpu/bn:mb1ic2ih3iw4_eps0.001mom0.997").ok());
  auto wrong = ParseCaseName("batchnorm/fwd/fp32/cpu/batchnorm:mb1");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("'bn:'"), absl::string_view::npos) << wrong.status();
}

TEST(NamesTest, TheShapeIsACanonicalDescriptor) {
  // Found by the fuzzer: a shape that is no descriptor printed back into a
  // name that parsed differently.
  auto garbage = ParseCaseName("gemm/fp32/cpu/gemm:m2048n20m:m2048n2048k2048_stddev");
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.status().message().find("shape"), absl::string_view::npos) << garbage.status();
  // A descriptor in another spelling than its canonical one.
  auto spelled =
      ParseCaseName("pool/max/fwd/fp32/cpu/pool:max_mb1ic1_ih4oh2kh2sh2pt0pb0_iw4ow2kw2sw2pw0");
  if (!spelled.ok()) {
    EXPECT_NE(spelled.status().message().find("canonical"), absl::string_view::npos)
        << spelled.status();
  }
  EXPECT_TRUE(ParseCaseName("gemm/fp32/cpu/gemm:m2048n2048k2048_mean").ok());
}

TEST(NamesTest, CaseNamesOrderAndCompareByEveryPart) {
  const CaseName a = CaseName::Train("alexnet", "fp32", "synthetic", 32, 1);
  CaseName b = a;
  EXPECT_EQ(a, b);
  b.gpus = 2;
  EXPECT_FALSE(a == b);
  EXPECT_TRUE(a < b);
  EXPECT_FALSE(b < a);
  const CaseName max = CaseName::Kernel(Family::kPool, "max/fwd", "fp32", "cpu", "pool:x");
  const CaseName avg = CaseName::Kernel(Family::kPool, "avg/fwd", "fp32", "cpu", "pool:x");
  EXPECT_EQ(max.algorithm, "max");
  EXPECT_EQ(max.pass, "fwd");
  EXPECT_FALSE(max == avg);
}

TEST(NamesTest, ModelDisplayNamesAreOneEntryPerModel) {
  std::set<std::string> models, displays;
  int published = 0;
  bool published_first = true;
  for (const ModelDisplay& m : ModelDisplayNames()) {
    EXPECT_TRUE(models.insert(m.model).second) << "twice: " << m.model;
    EXPECT_TRUE(displays.insert(m.display).second) << "twice: " << m.display;
    if (m.published) published_first = published_first && published == models.size() - 1;
    published += m.published;
  }
  // The published page's five columns, first.
  EXPECT_EQ(published, 5);
  EXPECT_TRUE(published_first);
}

}  // namespace
}  // namespace cnnbench::bench

namespace cnnbench::bench {
namespace {

// Families are named by id: each id's name is its entry's, a parsed name
// says which family it is of, and an MPI job runs exactly the families
// whose cases span its ranks.
TEST(NamesTest, FamiliesAreNamedByIdAndSayWhetherTheySpanRanks) {
  EXPECT_EQ(FamilyName(Family::kAllReduce), "allreduce");
  EXPECT_EQ(&FamilyOf(Family::kPeak), FindCaseFamily("peak"));
  auto name = ParseCaseName("allreduce/local/fp32/sum/bytes:1024/ranks:2");
  ASSERT_TRUE(name.ok()) << name.status();
  EXPECT_TRUE(name->Is(Family::kAllReduce));
  EXPECT_TRUE(name->IsCollective());
  EXPECT_FALSE(name->Is(Family::kGrads));
  std::set<std::string> spanning;
  for (const CaseFamily& f : CaseFamilies())
    if (f.spans_ranks) spanning.insert(f.name);
  EXPECT_EQ(spanning,
            (std::set<std::string>{"train", "allreduce", "allgather", "reducescatter", "broadcast",
                                   "reduce", "alltoall", "gather", "scatter", "grads"}));
  EXPECT_EQ(SpanningFamilyList(),
            "train, allreduce, allgather, reducescatter, broadcast, reduce, alltoall, gather, "
            "scatter and grads");
  for (const CaseFamily& f : CaseFamilies())
    EXPECT_EQ(IsCollectiveFamily(f.id), f.name == "allreduce" || f.name == "allgather" ||
                                            f.name == "reducescatter" || f.name == "broadcast" ||
                                            f.name == "reduce" || f.name == "alltoall" ||
                                            f.name == "gather" || f.name == "scatter")
        << f.name;
}

// An all-reduce named before the collectives had ops (older JSON files)
// reads as the sum, with or without Google Benchmark's suffixes.
TEST(NamesTest, AnAllReduceWithoutAnOpReadsAsTheSum) {
  for (const char* old_name : {"allreduce/local/fp32/bytes:1024/ranks:2",
                               "allreduce/local/fp32/bytes:1024/ranks:2/iterations:20/repeats:5/"
                               "manual_time_mean"}) {
    auto name = ParseCaseName(old_name);
    ASSERT_TRUE(name.ok()) << old_name << ": " << name.status();
    EXPECT_EQ(name->ToString(), "allreduce/local/fp32/sum/bytes:1024/ranks:2") << old_name;
  }
  EXPECT_FALSE(ParseCaseName("allgather/local/fp32/bytes:1024/ranks:2").ok())
      << "only the all-reduce had names without an op";
}

}  // namespace
}  // namespace cnnbench::bench
