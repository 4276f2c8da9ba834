// //tools:make_dataset run as a user runs it: it writes a complete shard set
// (or a folder per class) of valid tf.Examples and JPEGs of varied sizes,
// some grayscale; the same flags give the same bytes; bad flags are a clear
// error and exit code 2. Bazel passes the binary as the argument.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "input/example.h"
#include "input/image/jpeg.h"
#include "input/pipeline/sources.h"
#include "input/shards.h"
#include "input/tfrecord.h"

namespace cnnbench::input {
namespace {

std::string g_tool;  // absolute path of //tools:make_dataset

struct ToolRun {
  int exit_code = -1;
  std::string out, err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string Scratch(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = absl::StrCat(tmp ? tmp : "/tmp", "/", name);
  EXPECT_EQ(std::system(absl::StrCat("rm -rf '", dir, "'").c_str()), 0);
  return dir;
}

ToolRun Tool(const std::string& args) {
  const std::string log = Scratch("log");
  EXPECT_EQ(std::system(absl::StrCat("mkdir -p '", log, "'").c_str()), 0);
  const int status =
      std::system(absl::StrCat("'", g_tool, "' ", args, " >", log, "/out 2>", log, "/err").c_str());
  ToolRun run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = ReadFile(log + "/out");
  run.err = ReadFile(log + "/err");
  return run;
}

TEST(MakeDatasetTest, WritesACompleteTFRecordSetOfValidExamples) {
  const std::string out = Scratch("tfrecord");
  const ToolRun run = Tool(absl::StrCat("--out=", out,
                                        " --images=30 --classes=4 --shards=3 "
                                        "--min_side=40 --max_side=120 --seed=9"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(absl::StrContains(run.out, "wrote 30 train images of 4 classes")) << run.out;
  for (const auto& [subset, count, shards] :
       {std::tuple{"train", 30, 3}, std::tuple{"validation", 8, 3}}) {
    absl::StatusOr<std::vector<std::string>> paths = FindShards(out, subset);
    ASSERT_TRUE(paths.ok()) << paths.status();
    EXPECT_EQ(paths->size(), static_cast<size_t>(shards));
    std::set<std::string> names;
    std::set<std::pair<int, int>> sizes;
    int gray = 0;
    for (const std::string& path : *paths) {
      absl::StatusOr<TFRecordReader> reader = TFRecordReader::Open(path);
      ASSERT_TRUE(reader.ok()) << reader.status();
      std::string bytes;
      for (;;) {
        absl::StatusOr<bool> more = reader->Next(&bytes);
        ASSERT_TRUE(more.ok()) << more.status();
        if (!*more) break;
        absl::StatusOr<ImageRecord> r = ParseImageExample(bytes);
        ASSERT_TRUE(r.ok()) << r.status();
        EXPECT_GE(r->label, 1);
        EXPECT_LE(r->label, 4);
        EXPECT_TRUE(absl::StartsWith(r->file_name, absl::StrFormat("n%08d_", r->label)))
            << r->file_name;
        ASSERT_EQ(r->boxes.size(), 1u);
        EXPECT_LT(r->boxes[0].xmin, r->boxes[0].xmax);
        EXPECT_LT(r->boxes[0].ymin, r->boxes[0].ymax);
        absl::StatusOr<JpegDecoder> decoder = JpegDecoder::Create();
        ASSERT_TRUE(decoder.ok());
        absl::StatusOr<JpegHeader> header = decoder->ReadHeader(r->jpeg);
        ASSERT_TRUE(header.ok()) << header.status();
        EXPECT_EQ(header->height, r->height);
        EXPECT_EQ(header->width, r->width);
        EXPECT_GE(header->height, 40);
        EXPECT_LE(header->width, 120);
        absl::StatusOr<Image> image = DecodeJpeg(r->jpeg);
        ASSERT_TRUE(image.ok()) << image.status();
        // Gray images decode to R = G = B everywhere.
        bool all_gray = true;
        for (size_t i = 0; i + 2 < image->pixels.size() && all_gray; i += 3)
          all_gray =
              image->pixels[i] == image->pixels[i + 1] && image->pixels[i] == image->pixels[i + 2];
        gray += all_gray;
        sizes.insert({r->height, r->width});
        EXPECT_TRUE(names.insert(r->file_name).second) << "duplicate " << r->file_name;
      }
    }
    EXPECT_EQ(names.size(), static_cast<size_t>(count)) << subset;
    EXPECT_GT(sizes.size(), static_cast<size_t>(count / 2)) << "sizes do not vary";
    EXPECT_GT(gray, 0) << "no grayscale image in " << subset;
  }
}

TEST(MakeDatasetTest, TheSameFlagsGiveTheSameBytesInBothFormats) {
  const std::string a = Scratch("same_a"), b = Scratch("same_b"), f = Scratch("same_f");
  const std::string flags = "--images=12 --classes=3 --shards=2 --min_side=30 --max_side=60";
  ASSERT_EQ(Tool(absl::StrCat("--out=", a, " ", flags)).exit_code, 0);
  ASSERT_EQ(Tool(absl::StrCat("--out=", b, " ", flags)).exit_code, 0);
  ASSERT_EQ(Tool(absl::StrCat("--out=", f, " --format=folder ", flags)).exit_code, 0);
  EXPECT_EQ(std::system(absl::StrCat("diff -r '", a, "' '", b, "' >/dev/null").c_str()), 0);
  absl::StatusOr<ImageFolderIndex> index = IndexImageFolder(f + "/train");
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_EQ(index->images.size(), 12u);
  EXPECT_EQ(index->classes, (std::vector<std::string>{"n00000001", "n00000002", "n00000003"}));
  const ToolRun other = Tool(absl::StrCat("--out=", Scratch("same_c"), " --seed=2 ", flags));
  ASSERT_EQ(other.exit_code, 0);
  EXPECT_NE(
      std::system(absl::StrCat("diff -r '", a, "' '", Scratch("same_c"), "' >/dev/null").c_str()),
      0);
}

TEST(MakeDatasetTest, BadFlagsAreAClearErrorWithExitCodeTwo) {
  const std::string out = Scratch("bad");
  const struct {
    std::string args, message;
  } cases[] = {
      {"--images=3 --classes=2", "--out is required"},
      {absl::StrCat("--out=", out, " --classes=2"), "--images is required"},
      {absl::StrCat("--out=", out, " --images=3"), "--classes is required"},
      {absl::StrCat("--out=", out, " --images=0 --classes=2"), "--images=0: must be >= 1"},
      {absl::StrCat("--out=", out, " --images=abc --classes=2"),
       "--images=abc: not a valid number"},
      {absl::StrCat("--out=", out, " --images=3 --classes=1001"),
       "--classes=1001: must be in 1..1000"},
      {absl::StrCat("--out=", out, " --images=3 --classes=2 --format=png"),
       "--format=png: must be tfrecord or folder"},
      {absl::StrCat("--out=", out, " --images=3 --classes=2 --shards=4"),
       "--shards=4: more shards than --images=3"},
      {absl::StrCat("--out=", out, " --images=3 --classes=2 --colour=1"), "unknown flag --colour"},
      {absl::StrCat("--out=", out, " --images=3 --classes=2 stray"),
       "'stray': flags are --name=value"},
  };
  for (const auto& c : cases) {
    const ToolRun run = Tool(c.args);
    EXPECT_EQ(run.exit_code, 2) << c.args << ": " << run.err;
    EXPECT_TRUE(absl::StrContains(run.err, c.message)) << c.args << ": " << run.err;
    EXPECT_TRUE(absl::StrContains(run.err, "usage: make_dataset")) << c.args;
  }
  // Nothing was written by a refused command.
  EXPECT_NE(std::system(absl::StrCat("test -e '", out, "'").c_str()), 0);

  // A folder in use is never written into.
  ASSERT_EQ(Tool(absl::StrCat("--out=", out, " --images=2 --classes=2 --max_side=50 --min_side=20"))
                .exit_code,
            0);
  const ToolRun again = Tool(absl::StrCat("--out=", out, " --images=2 --classes=2"));
  EXPECT_EQ(again.exit_code, 2) << again.err;
  EXPECT_TRUE(absl::StrContains(again.err, "is not empty")) << again.err;
  EXPECT_FALSE(absl::StrContains(again.err, ".cc:")) << "no source trail: " << again.err;
  EXPECT_EQ(Tool("--help").exit_code, 0);
}

}  // namespace
}  // namespace cnnbench::input

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_dataset_test MAKE_DATASET (from BUILD's args)\n");
    return 2;
  }
  char* tool = realpath(argv[1], nullptr);
  if (tool == nullptr) {
    std::fprintf(stderr, "make_dataset_test: cannot find %s\n", argv[1]);
    return 2;
  }
  cnnbench::input::g_tool = tool;
  std::free(tool);
  return RUN_ALL_TESTS();
}
