// A default run's ending (bench/output/run_summary.h): the results path by platform
// and time, and the report's headline sections kept in its order.
#include "bench/output/run_summary.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace cnnbench::bench {
namespace {

std::string TempDir() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return tmp != nullptr ? tmp : "/tmp";
}

TEST(RunSummaryTest, TheResultsPathNamesThePlatformAndTheTimeAndMakesTheFolder) {
  const std::string folder = TempDir() + "/results_made";
  std::remove(folder.c_str());
  // 2026-12-03 22:15:30 UTC.
  absl::StatusOr<std::string> path = DefaultResultsPath(folder, "cpu-AMD EPYC/2c", 1796336130);
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path, folder + "/cpu-AMD_EPYC_2c-20261203-221530.json");
  struct stat st;
  ASSERT_EQ(::stat(folder.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  // Again: the folder is there, fine.
  EXPECT_TRUE(DefaultResultsPath(folder, "x", 0).ok());
  // A file where the folder goes is an error naming it.
  const std::string file = TempDir() + "/results_file";
  std::ofstream(file) << "x";
  absl::StatusOr<std::string> bad = DefaultResultsPath(file, "x", 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), file)) << bad.status();
}

// `./bazelw run` reads relative paths at the repository root, not where
// the suite ran: the file and the closing command name it absolutely.
TEST(RunSummaryTest, TheClosingLinesNameTheFileAbsolutely) {
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof(cwd)), nullptr);
  const std::string before = cwd;
  ASSERT_EQ(::chdir(TempDir().c_str()), 0);
  ASSERT_NE(::getcwd(cwd, sizeof(cwd)), nullptr);
  const std::string here = cwd;
  EXPECT_EQ(AbsolutePath("results/x.json"), here + "/results/x.json");
  EXPECT_EQ(AbsolutePath("./results/x.json"), here + "/results/x.json");
  EXPECT_EQ(AbsolutePath("/abs/x.json"), "/abs/x.json");
  EXPECT_EQ(ClosingLines("results/x.json"),
            absl::StrCat("results: ", here, "/results/x.json\nthe full report: ./bazelw run "
                         "//tools:report -- ", here, "/results/x.json > report.md\n"));
  // A default run's path is absolute from the start, its folder relative.
  const std::string folder = "run_summary_relative_results";
  absl::StatusOr<std::string> path = DefaultResultsPath(folder, "box", 0);
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path, absl::StrCat(here, "/", folder, "/box-19700101-000000.json"));
  std::remove(folder.c_str());
  ASSERT_EQ(::chdir(before.c_str()), 0);
}

TEST(RunSummaryTest, HeadlineSectionsKeepTrainingPeakAndInferenceOnly) {
  const std::string markdown =
      "# cnnbench results\n\n## cpu-x\n\n### Environment\n\n| a | b |\n\n"
      "### Results\n\n#### Training synthetic data\n\n| GPUs | ResNet-50 |\n| CPU | 9 |\n\n"
      "### Training step vs the CPU's peak\n\n| Model | % of peak |\n\n"
      "### Training accuracy\n\nnot wanted\n\n"
      "### Inference\n\n#### Inference, ResNet-50\n\n| batch | images/sec |\n\n"
      "### Kernels\n\n#### conv\n\nnot wanted either\n";
  const std::string kept = HeadlineSections(markdown);
  EXPECT_TRUE(absl::StartsWith(kept, "### Results\n")) << kept;
  for (const char* wanted : {"| CPU | 9 |", "% of peak", "#### Inference, ResNet-50"})
    EXPECT_TRUE(absl::StrContains(kept, wanted)) << wanted << "\n" << kept;
  for (const char* unwanted : {"Environment", "not wanted", "Kernels", "# cnnbench"})
    EXPECT_FALSE(absl::StrContains(kept, unwanted)) << unwanted << "\n" << kept;
  EXPECT_LT(kept.find("### Results"), kept.find("### Inference"));
  EXPECT_EQ(HeadlineSections("### Kernels\n\n| a |\n"), "");
}

}  // namespace
}  // namespace cnnbench::bench
