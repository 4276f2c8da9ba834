#include "tools/report/case_name.h"

#include "gtest/gtest.h"
#include "tools/report/model_names.h"

namespace cnnbench::report {
namespace {

// The report reads names with bench's parser and prints them with its
// printer (bench/suite/names.h): one CaseName type for the suite and its reports.
TEST(CaseNameTest, ParsesTrainNameAndDropsBenchmarkSuffixes) {
  auto name = ParseCaseName("train/resnet50/fp16/real/batch:256/gpus:8/iterations:1/manual_time");
  ASSERT_TRUE(name.ok()) << name.status();
  EXPECT_EQ(name->family, "train");
  EXPECT_EQ(name->model, "resnet50");
  EXPECT_EQ(name->precision, "fp16");
  EXPECT_EQ(name->data, "real");
  EXPECT_EQ(name->batch, 256);
  EXPECT_EQ(name->gpus, 8);
  EXPECT_EQ(name->ToString(), "train/resnet50/fp16/real/batch:256/gpus:8");
  EXPECT_TRUE(*name == CaseName::Train("resnet50", "fp16", "real", 256, 8));
  EXPECT_FALSE(IsKernelCase(*name));
}

TEST(CaseNameTest, GpusZeroIsTheCpu) {
  auto name = ParseCaseName("train/alexnet/fp32/synthetic/batch:64/gpus:0/real_time");
  ASSERT_TRUE(name.ok()) << name.status();
  EXPECT_EQ(name->gpus, 0);
}

TEST(CaseNameTest, ModelNamesWithDotsAndUnderscores) {
  auto name = ParseCaseName("train/resnet50_v1.5/bf16/synthetic/batch:32/gpus:1/repeats:5");
  ASSERT_TRUE(name.ok()) << name.status();
  EXPECT_EQ(name->model, "resnet50_v1.5");
}

TEST(CaseNameTest, ParsesKernelNames) {
  auto conv =
      ParseCaseName("conv/bwd_filter/fp16/cuda/conv:mb64_ic3oc64_ih224oh112kh7sh2ph3_iw224ow112kw7sw2pw3/real_time");
  ASSERT_TRUE(conv.ok()) << conv.status();
  EXPECT_TRUE(IsKernelCase(*conv));
  EXPECT_EQ(KernelVariant(*conv), "bwd_filter");
  EXPECT_EQ(conv->shape, "conv:mb64_ic3oc64_ih224oh112kh7sh2ph3_iw224ow112kw7sw2pw3");

  auto pool = ParseCaseName("pool/avg/bwd/fp32/cpu/pool:avg_mb1ic1_ih4oh2kh2sh2ph0_iw4ow2kw2sw2pw0");
  ASSERT_TRUE(pool.ok()) << pool.status();
  EXPECT_EQ(KernelVariant(*pool), "avg bwd");
  EXPECT_EQ(pool->ToString(), "pool/avg/bwd/fp32/cpu/pool:avg_mb1ic1_ih4oh2kh2sh2ph0_iw4ow2kw2sw2pw0");

  auto gemm = ParseCaseName("gemm/fp32/cpu/gemm:m256n256k256/real_time");
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  EXPECT_TRUE(IsKernelCase(*gemm));
  EXPECT_EQ(KernelVariant(*gemm), "");
  EXPECT_EQ(gemm->ToString(), "gemm/fp32/cpu/gemm:m256n256k256");
}

TEST(CaseNameTest, ParsesAllReduceAndInput) {
  auto allreduce = ParseCaseName("allreduce/nccl/fp32/bytes:1048576/ranks:8/manual_time");
  ASSERT_TRUE(allreduce.ok()) << allreduce.status();
  EXPECT_EQ(allreduce->bytes, 1048576);
  EXPECT_EQ(allreduce->ranks, 8);
  EXPECT_FALSE(IsKernelCase(*allreduce));

  // threads:<T> is part of an input name, not Google Benchmark's suffix.
  auto input = ParseCaseName("input/tfrecord/train_preprocess/threads:4/iterations:1");
  ASSERT_TRUE(input.ok()) << input.status();
  EXPECT_EQ(input->threads, 4);
  EXPECT_FALSE(IsKernelCase(*input));
}

TEST(CaseNameTest, RejectsNamesOffTheGrammarWithTheReason) {
  struct Bad {
    const char* name;
    const char* reason;
  };
  for (const Bad& bad : {
           Bad{"train/resnet50/fp64/synthetic/batch:64/gpus:1", "precision 'fp64'"},
           Bad{"train/resnet50/fp32/imagenet/batch:64/gpus:1", "data 'imagenet'"},
           Bad{"train/resnet50/fp32/synthetic/batch:64", "does not match train/"},
           Bad{"train/resnet50/fp32/synthetic/batch:64/iterations:1", "'iterations:1' where gpus"},
           Bad{"train/resnet50/fp32/synthetic/batch:0/gpus:1", "batch:<B> (B > 0)"},
           Bad{"train/resnet50/fp32/synthetic/batch:64/gpus:-1", "gpus:<G>"},
           Bad{"BM_Memcpy/64", "not a cnnbench case name"},
           Bad{"conv/sideways/fp32/cpu/conv:mb1", "does not match conv/"},
           Bad{"relu/bwd_data/fp32/cpu/relu:mb1", "does not match relu/<fwd|bwd>"},
           Bad{"allreduce/nccl/fp32/bytes:1k/ranks:2", "does not match allreduce/"},
       }) {
    auto name = ParseCaseName(bad.name);
    ASSERT_FALSE(name.ok()) << bad.name;
    EXPECT_NE(name.status().message().find(bad.reason), absl::string_view::npos)
        << bad.name << ": " << name.status().message();
  }
}

TEST(ModelNamesTest, PublishedDisplayNamesAndOrder) {
  EXPECT_EQ(ModelDisplayName("inception3"), "InceptionV3");
  EXPECT_EQ(ModelDisplayName("resnet50"), "ResNet-50");
  EXPECT_EQ(ModelDisplayName("resnet152"), "ResNet-152");
  EXPECT_EQ(ModelDisplayName("alexnet"), "AlexNet");
  EXPECT_EQ(ModelDisplayName("vgg16"), "VGG16");
  EXPECT_EQ(ModelDisplayName("googlenet"), "GoogLeNet");
  EXPECT_EQ(ModelDisplayName("resnet50_v1.5"), "ResNet-50 v1.5");
  EXPECT_EQ(ModelDisplayName("my_net"), "my_net");
  EXPECT_FALSE(IsKnownModel("my_net"));
  // The published column order, then the rest of the zoo, then unknown names.
  EXPECT_TRUE(ModelBefore("inception3", "resnet50"));
  EXPECT_TRUE(ModelBefore("resnet50", "resnet152"));
  EXPECT_TRUE(ModelBefore("resnet152", "alexnet"));
  EXPECT_TRUE(ModelBefore("alexnet", "vgg16"));
  EXPECT_TRUE(ModelBefore("vgg16", "googlenet"));
  EXPECT_TRUE(ModelBefore("trivial", "a_custom_net"));
  EXPECT_TRUE(ModelBefore("a_custom_net", "b_custom_net"));
}

TEST(PrecisionTest, Order) {
  EXPECT_LT(PrecisionRank("fp32"), PrecisionRank("tf32"));
  EXPECT_LT(PrecisionRank("tf32"), PrecisionRank("fp16"));
  EXPECT_LT(PrecisionRank("fp16"), PrecisionRank("bf16"));
  EXPECT_LT(PrecisionRank("bf16"), PrecisionRank("int8"));
}

}  // namespace
}  // namespace cnnbench::report
