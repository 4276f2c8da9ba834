// What a trainer says while it compiles (core/compile_log.h) and how it
// runs when a CUDA-graph capture fails: both on the CPU backends.
#include "core/compile_log.h"

#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "kernels/backends.h"
#include "tests/train/small_cnn.h"
#include "train/trainer.h"

namespace cnnbench {
namespace {

using train_test::SmallCnn;
using train_test::StepLosses;

class CompileLogTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    SetCompileLogSink([this](absl::string_view line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.emplace_back(line);
    });
  }
  void TearDown() override {
    SetCompileLogSink(nullptr);
    SetCompileLog(false);
  }
  std::vector<std::string> Lines() {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

TEST_P(CompileLogTest, OneLinePerLayerInTheDocumentedForm) {
  SetCompileLog(true);
  auto backend = CreateBackend(GetParam(), Device::Cpu());
  ASSERT_TRUE(backend.ok()) << backend.status();
  TrainOptions options;
  options.fuse_relu = false;  // every layer of the graph is a kernel
  const Graph graph = SmallCnn();
  auto trainer = Trainer::Compile(graph, backend->get(), options);
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  const std::vector<std::string> lines = Lines();
  int ops = 0;
  for (const Node& node : graph.nodes) {
    if (node.kind != Node::Kind::kOp) continue;
    ++ops;
    // The layer's line: its name first, its op, an engine and build seconds.
    int found = 0;
    for (const std::string& line : lines)
      if (absl::StrContains(line, absl::StrCat(" layer=", node.name, " op="))) ++found;
    EXPECT_EQ(found, 1) << node.name;
  }
  ASSERT_EQ(static_cast<int>(lines.size()), ops);
  for (const std::string& line : lines) {
    // compile HH:MM:SS.mmm +S.SSSs layer=... op=... pass=all engine=... build=S.SSSs
    const std::vector<std::string> words = absl::StrSplit(line, ' ');
    ASSERT_GE(words.size(), 7u) << line;
    EXPECT_EQ(words[0], "compile") << line;
    EXPECT_EQ(words[1].size(), 12u) << line;  // 20:15:16.123
    EXPECT_EQ(words[1][2], ':') << line;
    EXPECT_EQ(words[1][8], '.') << line;
    EXPECT_TRUE(absl::StartsWith(words[2], "+") && absl::EndsWith(words[2], "s")) << line;
    EXPECT_TRUE(absl::StartsWith(words[3], "layer=")) << line;
    EXPECT_TRUE(absl::StrContains(line, " pass=all ")) << line;
    EXPECT_TRUE(absl::StrContains(line, " engine=")) << line;
    EXPECT_FALSE(absl::StrContains(line, " engine=none")) << line;
    EXPECT_TRUE(absl::StrContains(line, " build=")) << line;
    EXPECT_TRUE(absl::EndsWith(line, "s")) << line;
  }
}

TEST_P(CompileLogTest, SilentUnlessAskedFor) {
  SetCompileLog(false);
  auto backend = CreateBackend(GetParam(), Device::Cpu());
  ASSERT_TRUE(backend.ok());
  auto trainer = Trainer::Compile(SmallCnn(), backend->get(), TrainOptions{});
  ASSERT_TRUE(trainer.ok()) << trainer.status();
  EXPECT_TRUE(Lines().empty());
}

TEST_P(CompileLogTest, AFailedKernelIsLoggedWithItsReason) {
  SetCompileLog(true);
  auto backend = CreateBackend(GetParam(), Device::Cpu());
  ASSERT_TRUE(backend.ok());
  TrainOptions options;
  options.precision = Precision::kFp16;  // a precision a CPU backend may not run
  auto trainer = Trainer::Compile(SmallCnn(), backend->get(), options);
  if (trainer.ok()) GTEST_SKIP() << GetParam() << " runs fp16";
  const std::vector<std::string> lines = Lines();
  ASSERT_FALSE(lines.empty());
  EXPECT_TRUE(absl::StrContains(lines.back(), " engine=none ")) << lines.back();
  EXPECT_TRUE(absl::StrContains(lines.back(), " why=")) << lines.back();
}

TEST(CompileLogFieldsTest, ValuesWithSpacesAreQuotedAndLayersNest) {
  std::vector<std::string> lines;
  SetCompileLogSink([&](absl::string_view line) { lines.emplace_back(line); });
  SetCompileLog(true);
  {
    CompileLogLayer outer("conv1");
    CompileLog({{"why", "no engine \"x\" builds"}, {"n", "3"}});
    {
      CompileLogLayer inner("conv1/bn");
      CompileLog({{"n", "4"}});
    }
    CompileLog({{"n", "5"}});
  }
  CompileLog({{"n", "6"}});
  SetCompileLogSink(nullptr);
  SetCompileLog(false);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_TRUE(absl::EndsWith(lines[0], " layer=conv1 why=\"no engine \\\"x\\\" builds\" n=3"))
      << lines[0];
  EXPECT_TRUE(absl::EndsWith(lines[1], " layer=conv1/bn n=4")) << lines[1];
  EXPECT_TRUE(absl::EndsWith(lines[2], " layer=conv1 n=5")) << lines[2];
  EXPECT_FALSE(absl::StrContains(lines[3], "layer=")) << lines[3];
}

// A capture that fails (on the CPU it always does) is not an error: the
// steps run eagerly, give the losses an eager trainer gives, and the
// trainer says why there is no CUDA graph.
TEST_P(CompileLogTest, AFailedCaptureRunsTheStepsEagerly) {
  std::vector<float> losses[2];
  for (int run = 0; run < 2; ++run) {
    auto backend = CreateBackend(GetParam(), Device::Cpu());
    ASSERT_TRUE(backend.ok());
    TrainOptions options;
    options.capture_on_cpu_for_testing = run == 1;
    auto trainer = Trainer::Compile(SmallCnn(), backend->get(), options);
    ASSERT_TRUE(trainer.ok()) << trainer.status();
    EXPECT_EQ((*trainer)->cuda_graph_active(), run == 1);
    auto run_losses = StepLosses(**trainer, 4);
    ASSERT_TRUE(run_losses.ok()) << "run " << run << ": " << run_losses.status();
    losses[run] = *run_losses;
    if (run == 1) {
      EXPECT_FALSE((*trainer)->cuda_graph_active());
      EXPECT_TRUE(
          absl::StrContains((*trainer)->cuda_graph_failure(), "capturing the step as a CUDA graph"))
          << (*trainer)->cuda_graph_failure();
      EXPECT_EQ((*trainer)->steps(), 4);
    } else {
      EXPECT_TRUE((*trainer)->cuda_graph_failure().empty());
    }
  }
  for (int step = 0; step < 4; ++step)
    EXPECT_EQ(std::memcmp(&losses[0][step], &losses[1][step], sizeof(float)), 0)
        << "step " << step << ": " << losses[0][step] << " vs " << losses[1][step];
}

// A deadline already past stops the compile at the first layer, with an
// error that names it; without one the same graph compiles.
TEST_P(CompileLogTest, APassedDeadlineStopsTheCompileAtTheFirstLayer) {
  auto backend = CreateBackend(GetParam(), Device::Cpu());
  ASSERT_TRUE(backend.ok()) << backend.status();
  const Graph graph = SmallCnn();
  std::string first;
  for (const Node& node : graph.nodes)
    if (node.kind == Node::Kind::kOp && first.empty()) first = node.name;
  SetCompileDeadline(1e-9);
  auto trainer = Trainer::Compile(graph, backend->get(), TrainOptions{});
  SetCompileDeadline(0);
  ASSERT_FALSE(trainer.ok());
  EXPECT_TRUE(IsCompileDeadline(trainer.status())) << trainer.status();
  EXPECT_TRUE(absl::StrContains(trainer.status().message(), "building layer " + first + ", pass"))
      << trainer.status();
  EXPECT_TRUE(absl::StrContains(trainer.status().message(), "0 layer(s) built before it"))
      << trainer.status();
  EXPECT_TRUE(Trainer::Compile(graph, backend->get(), TrainOptions{}).ok());
  // Far ahead: no effect.
  SetCompileDeadline(1e9);
  EXPECT_TRUE(Trainer::Compile(graph, backend->get(), TrainOptions{}).ok());
  SetCompileDeadline(0);
  EXPECT_EQ(CompileDeadlineSeconds(), 0.0);
}

INSTANTIATE_TEST_SUITE_P(Cpu, CompileLogTest, ::testing::Values("reference", "onednn"));

}  // namespace
}  // namespace cnnbench
