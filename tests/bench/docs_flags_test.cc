// docs/benchmarks.md's "Presets and flags" section against //bench:all's
// --help: every flag --help lists is named there, every suite flag named
// there exists, the preset table has exactly --help's presets, and the
// --families list is every registered family.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/suite/names.h"
#include "bench/suite/suite.h"
#include "gtest/gtest.h"

namespace cnnbench::bench {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string Help() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string out = absl::StrCat(tmp ? tmp : "/tmp", "/help.txt");
  const int rc = std::system(absl::StrCat("bench/all --help > ", out, " 2>&1").c_str());
  EXPECT_EQ(rc, 0);
  return Read(out);
}

// The "## Presets and flags" section.
std::string FlagsSection() {
  const std::string doc = Read("docs/benchmarks.md");
  const size_t start = doc.find("## Presets and flags");
  EXPECT_NE(start, std::string::npos);
  const size_t end = doc.find("\n## ", start + 1);
  return doc.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

std::set<std::string> Matches(const std::string& text, const std::string& pattern) {
  std::set<std::string> out;
  const std::regex re(pattern);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it)
    out.insert((*it)[1]);
  return out;
}

TEST(DocsFlagsTest, EveryHelpFlagIsDocumentedAndEveryDocumentedFlagExists) {
  const std::string help = Help();
  const size_t presets = help.find("\nPresets (--preset");
  ASSERT_NE(presets, std::string::npos) << help;
  const std::set<std::string> listed =
      Matches(help.substr(0, presets), R"(\n  --([a-z0-9_]+) \(default)");
  ASSERT_GT(listed.size(), 50u) << help;
  // Every suite flag is in one of --help's groups (SuiteFlagGroups): a flag
  // a family adds without placing it would be listed under "Other".
  EXPECT_FALSE(absl::StrContains(help, "\nOther:\n")) << help;
  const std::string section = FlagsSection();
  const std::set<std::string> named = Matches(section, R"(`--([a-z][a-z0-9_]*))");
  for (const std::string& flag : listed)
    EXPECT_TRUE(named.count(flag)) << "--" << flag << " is in --help but not in docs/benchmarks.md";
  for (const std::string& flag : named) {
    if (absl::StartsWith(flag, "benchmark_") || flag == "help") continue;  // Google Benchmark's
    EXPECT_TRUE(listed.count(flag)) << "--" << flag << " is in the docs but not in --help";
  }
}

TEST(DocsFlagsTest, ThePresetTableIsTheHelpsPresets) {
  const std::string help = Help();
  const std::set<std::string> in_help = Matches(help, R"(\n  ([a-z]+): families )");
  const std::set<std::string> in_docs = Matches(FlagsSection(), R"(\n\| `([a-z]+)`)");
  std::set<std::string> named(std::begin(kPresetNames), std::end(kPresetNames));
  EXPECT_EQ(in_help, named);
  EXPECT_EQ(in_docs, named);
}

TEST(DocsFlagsTest, TheFamiliesListIsEveryRegisteredFamily) {
  const std::set<std::string> lists = Matches(FlagsSection(), R"(`--families=([a-z,]+)`)");
  ASSERT_EQ(lists.size(), 1u);
  EXPECT_EQ(absl::StrJoin(absl::StrSplit(*lists.begin(), ','), ", "), RegisteredFamilyList());
}

}  // namespace
}  // namespace cnnbench::bench
