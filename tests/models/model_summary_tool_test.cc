// Runs //tools:model_summary as a user would and checks what it prints.
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "models/zoo.h"

namespace cnnbench {
namespace {

int RunTool(const std::string& args, std::string* out) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string log = absl::StrCat(tmp ? tmp : "/tmp", "/model_summary.out");
  const std::string cmd = absl::StrCat(srcdir ? srcdir : ".", "/cnnbench/tools/model_summary ",
                                       args, " > ", log, " 2>&1");
  const int rc = std::system(cmd.c_str());
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return rc;
}

TEST(ModelSummaryToolTest, TableTotals) {
  std::string out;
  ASSERT_EQ(RunTool("--model=resnet50 --classes=1000", &out), 0) << out;
  EXPECT_NE(out.find("25,557,032"), std::string::npos) << out;
  EXPECT_NE(out.find("3.858 G multiply-adds"), std::string::npos) << out;
}

// A model's other name summarizes the model under its own name:
// MobileNetV2 as torchvision counts it (3,504,872 at 1000 classes).
TEST(ModelSummaryToolTest, AnotherNameIsTheModelUnderItsOwnName) {
  std::string out;
  ASSERT_EQ(RunTool("--model=mobilenet_v2 --classes=1000", &out), 0) << out;
  EXPECT_EQ(out.rfind("mobilenet: MobileNetV2", 0), 0u) << out;
  EXPECT_NE(out.find("3,504,872"), std::string::npos) << out;
}

TEST(ModelSummaryToolTest, ShapesAreCanonicalAndCountEveryLayer) {
  std::string out;
  ASSERT_EQ(RunTool("--model=googlenet --format=shapes", &out), 0) << out;
  std::map<std::string, int> printed;
  int total = 0;
  for (absl::string_view line : absl::StrSplit(out, '\n', absl::SkipEmpty())) {
    std::vector<std::string> parts = absl::StrSplit(line, '\t');
    ASSERT_EQ(parts.size(), 2u) << line;
    auto desc = ParseOpDesc(parts[0]);
    ASSERT_TRUE(desc.ok()) << desc.status();
    EXPECT_EQ(OpDescToString(*desc), parts[0]);  // canonical: prints back identically
    int count = 0;
    ASSERT_TRUE(absl::SimpleAtoi(parts[1], &count)) << line;
    EXPECT_TRUE(printed.emplace(parts[0], count).second) << "repeated line " << parts[0];
    total += count;
  }
  // The counts add up to the graph's op nodes.
  auto graph = BuildModel("googlenet");
  ASSERT_TRUE(graph.ok());
  int ops = 0;
  for (const Node& n : graph->nodes) ops += n.kind == Node::Kind::kOp;
  EXPECT_EQ(total, ops);
}

TEST(ModelSummaryToolTest, UnknownModelListsKnownNames) {
  std::string out;
  EXPECT_NE(RunTool("--model=resnet9000", &out), 0);
  EXPECT_NE(out.find("resnet9000"), std::string::npos) << out;
  EXPECT_NE(out.find("inception3"), std::string::npos) << out;
}

}  // namespace
}  // namespace cnnbench
