#include "tools/report/output_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace cnnbench::report {
namespace {

std::string Scratch(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = absl::StrCat(tmp ? tmp : "/tmp", "/", name);
  EXPECT_EQ(std::system(absl::StrCat("rm -rf '", dir, "' && mkdir -p '", dir, "'").c_str()), 0);
  return dir;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(WriteOutputFileTest, ErrorsSayWhy) {
  absl::Status full = WriteOutputFile("/dev/full", "report\n");
  EXPECT_FALSE(full.ok());
  EXPECT_EQ(full.message(), "cannot write /dev/full: No space left on device (the disk is full)");

  const std::string dir = Scratch("errors");
  absl::Status missing = WriteOutputFile(dir + "/none/r.md", "report\n");
  EXPECT_TRUE(absl::IsNotFound(missing)) << missing;
  EXPECT_EQ(missing.message(), absl::StrCat("cannot write ", dir, "/none/r.md: the folder ", dir,
                                            "/none/ does not exist"));

  absl::Status folder = WriteOutputFile(dir, "report\n");
  EXPECT_FALSE(folder.ok());
  EXPECT_NE(folder.message().find("Is a directory"), absl::string_view::npos) << folder;
}

TEST(WriteOutputFileTest, ANewFileGetsTheUsualPermissions) {
  const std::string dir = Scratch("new");
  const mode_t mask = umask(022);
  ASSERT_TRUE(WriteOutputFile(dir + "/r.md", "report\n").ok());
  umask(mask);
  struct stat st;
  ASSERT_EQ(stat((dir + "/r.md").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  EXPECT_EQ(ReadFile(dir + "/r.md"), "report\n");
}

TEST(WriteOutputFileTest, AFifoIsWrittenNotReplaced) {
  const std::string dir = Scratch("fifo");
  const std::string fifo = dir + "/pipe";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = ReadFile(fifo); });
  absl::Status status = WriteOutputFile(fifo, "through the pipe\n");
  reader.join();
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(received, "through the pipe\n");
  struct stat st;
  ASSERT_EQ(lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(WriteOutputFileTest, ALinkToAFileYetToBeMadeCreatesIt) {
  const std::string dir = Scratch("dangling");
  ASSERT_EQ(symlink("made.md", (dir + "/link.md").c_str()), 0);
  ASSERT_TRUE(WriteOutputFile(dir + "/link.md", "made\n").ok());
  EXPECT_EQ(ReadFile(dir + "/made.md"), "made\n");
  struct stat st;
  ASSERT_EQ(lstat((dir + "/link.md").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
}

TEST(CheckNotAnInputTest, ComparesFilesNotStrings) {
  const std::string dir = Scratch("identity");
  std::ofstream(dir + "/a.json") << "{}";
  std::ofstream(dir + "/b.json") << "{}";
  ASSERT_EQ(symlink("a.json", (dir + "/link.json").c_str()), 0);
  const std::vector<std::string> inputs = {dir + "/b.json", dir + "/a.json"};
  EXPECT_FALSE(CheckNotAnInput(dir + "/a.json", inputs).ok());
  EXPECT_FALSE(CheckNotAnInput(dir + "/./a.json", inputs).ok());
  EXPECT_FALSE(CheckNotAnInput(dir + "/link.json", inputs).ok());
  absl::Status refused = CheckNotAnInput(dir + "/link.json", {dir + "/a.json"});
  EXPECT_EQ(refused.message(),
            absl::StrCat("--output=", dir, "/link.json is the input ", dir,
                         "/a.json; refusing to overwrite it (write the report to another file)"));
  EXPECT_TRUE(CheckNotAnInput(dir + "/c.json", inputs).ok());  // does not exist yet
  EXPECT_TRUE(CheckNotAnInput(dir + "/b.json", {dir + "/a.json"}).ok());
}

}  // namespace
}  // namespace cnnbench::report
