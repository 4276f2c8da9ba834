#include "tools/report/messages.h"

#include "gtest/gtest.h"

namespace cnnbench::report {
namespace {

TEST(UserMessageTest, DropsSourceLocationsAndRepeatedReasons) {
  EXPECT_EQ(UserMessage("bench/cases/train/train_cases.cc:56: train/trainer.cc:75: unsupported: bf16 needs "
                        "avx512_bf16"),
            "unsupported: bf16 needs avx512_bf16");
  EXPECT_EQ(UserMessage("OOM: train/executor.cc:90: OOM: needs 32.0 GB, 24.0 GB available"),
            "OOM: needs 32.0 GB, 24.0 GB available");
  EXPECT_EQ(UserMessage("bench/cases/train/train_cases.cc:56: OOM: OOM: OOM: cudaMalloc failed"),
            "OOM: cudaMalloc failed");
  EXPECT_EQ(UserMessage("kernels/cuda/conv.cu:12:7: cudnn: CUDNN_STATUS_NOT_SUPPORTED"),
            "cudnn: CUDNN_STATUS_NOT_SUPPORTED");
}

TEST(UserMessageTest, KeepsWhatIsNotALocation) {
  // Descriptor strings, sizes and ordinary text with colons stay as they are.
  for (const char* message : {
           "input: no TFRecord shards under /data/imagenet",
           "unsupported: conv:mb64_ic256oc512_ih56oh28kh1sh2ph0_iw56ow28kw1sw2pw0 in bf16",
           "allreduce bytes:4194304: rank 1: element 7 is 3, expected 6",
           "input pipeline saturated: excluded, as on the published page",
           "",
       }) {
    EXPECT_EQ(UserMessage(message), message);
  }
}

TEST(FailureNoteTest, SaysSkippedUnlessTheReasonSaysIt) {
  EXPECT_EQ(FailureNote("bench/cases/train/train_cases.cc:56: unsupported: no GPU backend in this build"),
            "unsupported: no GPU backend in this build");
  EXPECT_EQ(FailureNote("input: no TFRecord shards under /data/imagenet"),
            "skipped: input: no TFRecord shards under /data/imagenet");
}

}  // namespace
}  // namespace cnnbench::report
