// A default run's ending (bench/output/run_summary.h): the results path by platform
// and time, and the report's headline sections kept in its order.
#include "bench/output/run_summary.h"

#include <sys/stat.h>

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
