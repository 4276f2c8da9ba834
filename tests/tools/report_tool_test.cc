// //tools:report as a user runs it: every write is checked (a full disk, a
// missing folder), a regular file is replaced whole, an input is never
// overwritten whatever path names it, a file given twice is read once, and
// --fail_on_regression does not pass a comparison that compared nothing.
// Bazel passes the binary ($(rootpath //tools:report)) as the argument.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace {

std::string g_report;  // absolute path of //tools:report
std::string g_data;    // absolute path of tests/tools/testdata

struct ToolRun {
  int exit_code = -1;
  std::string out;  // stdout, unless the command redirects it
  std::string err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// A fresh folder for one test.
std::string Scratch(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = absl::StrCat(tmp ? tmp : "/tmp", "/", name);
  EXPECT_EQ(std::system(absl::StrCat("rm -rf '", dir, "' && mkdir -p '", dir, "'").c_str()), 0);
  return dir;
}

// Runs the shell script `script`, where $REPORT is the tool and $DATA the fixtures.
ToolRun Shell(const std::string& script) {
  const std::string dir = Scratch("shell");
  WriteFile(dir + "/script.sh", script);
  const std::string command = absl::StrCat("REPORT='", g_report, "' DATA='", g_data, "' sh ", dir,
                                           "/script.sh >", dir, "/out 2>", dir, "/err");
  ToolRun run;
  const int status = std::system(command.c_str());
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = ReadFile(dir + "/out");
  run.err = ReadFile(dir + "/err");
  return run;
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ReportToolTest, AFullDiskIsAnErrorWithItsReason) {
  // A small report: written at close, where an unchecked stream loses the error.
  ToolRun run = Shell("$REPORT --format=jsonl --output=/dev/full $DATA/no_train.json");
  EXPECT_NE(run.exit_code, 0) << run.err;
  EXPECT_TRUE(Has(run.err, "cannot write /dev/full: No space left on device")) << run.err;

  run = Shell("$REPORT --format=jsonl $DATA/no_train.json >/dev/full");
  EXPECT_NE(run.exit_code, 0) << run.err;
  EXPECT_TRUE(Has(run.err, "No space left on device")) << run.err;
}

TEST(ReportToolTest, AMissingFolderIsNamed) {
  const std::string dir = Scratch("missing");
  ToolRun run =
      Shell(absl::StrCat("$REPORT --output=", dir, "/no/such/report.md $DATA/cpu_box.json"));
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_TRUE(Has(run.err, absl::StrCat("the folder ", dir, "/no/such/ does not exist")))
      << run.err;
}

TEST(ReportToolTest, ARegularFileIsReplacedWholeKeepingItsPermissions) {
  const std::string dir = Scratch("replace");
  const std::string path = dir + "/report.md";
  WriteFile(path, "old report\n");
  ASSERT_EQ(chmod(path.c_str(), 0640), 0);
  struct stat before;
  ASSERT_EQ(stat(path.c_str(), &before), 0);

  ToolRun run = Shell(absl::StrCat("$REPORT --output=", path, " $DATA/cpu_box.json"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  struct stat after;
  ASSERT_EQ(stat(path.c_str(), &after), 0);
  // A new file renamed into place: another inode, the same permissions, no leftovers.
  EXPECT_NE(after.st_ino, before.st_ino);
  EXPECT_EQ(after.st_mode & 07777, 0640u);
  EXPECT_TRUE(Has(ReadFile(path), "## cpu-epyc-2c"));
  ToolRun listing = Shell(absl::StrCat("ls -A ", dir));
  EXPECT_EQ(listing.out, "report.md\n");
}

TEST(ReportToolTest, LinksPipesAndDevicesAreWrittenThrough) {
  const std::string dir = Scratch("special");
  // A link to a file: the file gets the report, the link stays a link.
  WriteFile(dir + "/real.md", "old\n");
  ASSERT_EQ(symlink("real.md", (dir + "/link.md").c_str()), 0);
  ToolRun run = Shell(absl::StrCat("$REPORT --output=", dir, "/link.md $DATA/cpu_box.json"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  struct stat link;
  ASSERT_EQ(lstat((dir + "/link.md").c_str(), &link), 0);
  EXPECT_TRUE(S_ISLNK(link.st_mode));
  EXPECT_TRUE(Has(ReadFile(dir + "/real.md"), "## cpu-epyc-2c"));

  // A pipe is written into, not replaced.
  run = Shell(absl::StrCat("mkfifo ", dir, "/pipe && (cat ", dir, "/pipe > ", dir,
                           "/from_pipe &) && $REPORT --format=jsonl --output=", dir,
                           "/pipe $DATA/cpu_box.json; rc=$?; sleep 1; exit $rc"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  struct stat pipe;
  ASSERT_EQ(stat((dir + "/pipe").c_str(), &pipe), 0);
  EXPECT_TRUE(S_ISFIFO(pipe.st_mode));
  EXPECT_TRUE(Has(ReadFile(dir + "/from_pipe"), "\"platform\":\"cpu-epyc-2c\""));

  // /dev/stdout is the standard output.
  run = Shell("$REPORT --format=jsonl --output=/dev/stdout $DATA/cpu_box.json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(Has(run.out, "\"platform\":\"cpu-epyc-2c\"")) << run.out;
}

TEST(ReportToolTest, RefusesToOverwriteAnInputWhateverPathNamesIt) {
  const std::string dir = Scratch("inputs");
  const std::string input = ReadFile(g_data + "/cpu_box.json");
  ASSERT_FALSE(input.empty());
  WriteFile(dir + "/run.json", input);
  ASSERT_EQ(symlink("run.json", (dir + "/link.json").c_str()), 0);
  const std::string in = absl::StrCat("cd ", dir, " && $REPORT ");
  for (const std::string& args : {
           std::string("--output=run.json run.json"),
           absl::StrCat("--output=./run.json ", dir, "/run.json"),  // relative and absolute
           absl::StrCat("--output=", dir, "/../inputs/run.json run.json"),
           std::string("--output=link.json run.json"),  // a link to it
           absl::StrCat("--output=run.json --compare=link.json $DATA/gpu_box.json"),  // a base
       }) {
    ToolRun run = Shell(in + args);
    EXPECT_EQ(run.exit_code, 2) << args << ": " << run.err;
    EXPECT_TRUE(Has(run.err, "is the input")) << args << ": " << run.err;
    EXPECT_EQ(ReadFile(dir + "/run.json"), input) << args << " overwrote its input";
  }
}

TEST(ReportToolTest, AFileGivenTwiceIsReadOnceWithAWarning) {
  ToolRun once = Shell("$REPORT $DATA/cpu_box.json");
  ASSERT_EQ(once.exit_code, 0) << once.err;
  ToolRun twice = Shell("cd $DATA && $REPORT cpu_box.json $DATA/cpu_box.json ./cpu_box.json");
  ASSERT_EQ(twice.exit_code, 0) << twice.err;
  EXPECT_TRUE(Has(twice.err, "the same file as cpu_box.json; read once")) << twice.err;
  EXPECT_EQ(twice.out, once.out);
}

TEST(ReportToolTest, BaselineFrameworkFlag) {
  ToolRun run = Shell(
      "$REPORT --baseline_framework=pytorch $DATA/cpu_box.json $DATA/peer_pytorch.json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(Has(run.out, "Frameworks side by side")) << run.out;
  EXPECT_TRUE(Has(run.out, "cnnbench / pytorch 2.15.0")) << run.out;
  run = Shell("$REPORT --baseline_framework=nosuch $DATA/cpu_box.json $DATA/peer_pytorch.json");
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_TRUE(Has(run.err, "--baseline_framework=nosuch")) << run.err;
}

TEST(ReportToolTest, FailOnRegressionFailsWhenNothingWasCompared) {
  // One platform on each side, different ones, no case in common.
  ToolRun run =
      Shell("$REPORT --compare=$DATA/gpu_box_base.json --fail_on_regression $DATA/cpu_box.json");
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_TRUE(Has(run.err, "report: error: nothing compared")) << run.err;
  EXPECT_TRUE(Has(run.err, "comparing platform 'cpu-epyc-2c' with base platform 'h200x2'"))
      << run.err;
  // Two platforms, neither in the base.
  run = Shell(
      "$REPORT --compare=$DATA/gpu_box_base.json --fail_on_regression $DATA/cpu_box.json "
      "$DATA/no_train.json");
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_TRUE(Has(run.err, "platform 'cpu-epyc-2c' not compared")) << run.err;
  // A real comparison still passes or fails on its regressions.
  run = Shell("$REPORT --compare=$DATA/gpu_box.json --fail_on_regression $DATA/gpu_box.json");
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

TEST(ReportToolTest, ComparingAnotherPlatformWarns) {
  const std::string dir = Scratch("renamed");
  // gpu_box.json as measured on a platform of another name.
  ToolRun run = Shell(absl::StrCat(
      "sed 's/\"platform\": \"h200x2\"/\"platform\": \"h200x2-b\"/' $DATA/gpu_box.json > ", dir,
      "/b.json && $REPORT --compare=$DATA/gpu_box_base.json ", dir, "/b.json"));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(Has(run.err,
                  "report: warning: comparing platform 'h200x2-b' with base platform 'h200x2': "
                  "a different platform"))
      << run.err;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: report_tool_test REPORT (from BUILD's args)\n");
    return 2;
  }
  char* report = realpath(argv[1], nullptr);
  char* data = realpath("tests/tools/testdata", nullptr);
  if (report == nullptr || data == nullptr) {
    std::fprintf(stderr, "report_tool_test: cannot find %s or tests/tools/testdata\n", argv[1]);
    return 2;
  }
  g_report = report;
  g_data = data;
  std::free(report);
  std::free(data);
  return RUN_ALL_TESTS();
}
