#include "core/status.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace cnnbench {
namespace {

absl::Status Fails() { return absl::InvalidArgumentError("bad stride"); }
absl::Status Succeeds() { return absl::OkStatus(); }
absl::StatusOr<int> Seven() { return 7; }
absl::StatusOr<int> NoValue() { return absl::NotFoundError("no such model"); }

absl::Status CallsFails() {
  RETURN_IF_ERROR(Succeeds());
  RETURN_IF_ERROR(Fails());
  return absl::InternalError("not reached");
}

absl::StatusOr<int> AddsOne(bool fail) {
  ASSIGN_OR_RETURN(int v, fail ? NoValue() : Seven());
  return v + 1;
}

TEST(StatusTest, ReturnIfErrorKeepsCodeAndAddsLocation) {
  absl::Status s = CallsFails();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("status_test.cc:"), absl::string_view::npos) << s.message();
  EXPECT_NE(s.message().find("bad stride"), absl::string_view::npos);
}

// The trail RETURN_IF_ERROR adds is for --verbose; a user's message is
// the reason alone, however many calls it passed through.
TEST(StatusTest, WithoutSourceLocationsLeavesTheReasonAlone) {
  const absl::Status nested = AnnotateStatus(CallsFails(), "tools/convergence/convergence.cc", 166);
  ASSERT_TRUE(absl::StrContains(nested.message(), "status_test.cc:")) << nested;
  EXPECT_EQ(WithoutSourceLocations(nested.message()), "bad stride");
  EXPECT_EQ(WithoutSourceLocations("train/step_plan.cc:450: kernels/cuda/x.cu:7: OOM: 8 GiB"),
            "OOM: 8 GiB");
  // Text that only looks alike stays: no line number, no ": " after it.
  for (const char* kept : {"--trace_file=/tmp/x.json: its folder cannot be used",
                           "model.cc is not a model", "a.h:12 without a colon after"})
    EXPECT_EQ(WithoutSourceLocations(kept), kept);
}

TEST(StatusTest, AssignOrReturn) {
  EXPECT_EQ(*AddsOne(false), 8);
  auto failed = AddsOne(true);
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(failed.status().message().find("no such model"), absl::string_view::npos);
}

TEST(StatusTest, OutOfMemory) {
  absl::Status oom = OutOfMemoryError("cudaMalloc of 8 GiB");
  EXPECT_TRUE(IsOutOfMemory(oom));
  EXPECT_TRUE(absl::StartsWith(oom.message(), "OOM"));
  EXPECT_FALSE(IsOutOfMemory(absl::InvalidArgumentError("bad")));
}

}  // namespace
}  // namespace cnnbench
