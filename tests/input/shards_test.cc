// Finding ImageNet shards (<subset>-NNNNN-of-NNNNN) and the per-epoch shard
// order: the complete set in index order, or an error saying what is wrong.
#include "input/shards.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"

namespace cnnbench::input {
namespace {

std::string Scratch(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = absl::StrCat(tmp ? tmp : "/tmp", "/shards_test_", name);
  EXPECT_EQ(std::system(absl::StrCat("rm -rf '", dir, "' && mkdir -p '", dir, "'").c_str()), 0);
  return dir;
}

void Touch(const std::string& path) { std::ofstream(path) << "x"; }

std::string ShardName(const char* subset, int index, int count) {
  return absl::StrFormat("%s-%05d-of-%05d", subset, index, count);
}

std::string Error(const std::string& dir, const std::string& subset = "train") {
  absl::StatusOr<std::vector<std::string>> shards = FindShards(dir, subset);
  EXPECT_FALSE(shards.ok()) << "found " << (shards.ok() ? shards->size() : 0) << " shards";
  return shards.ok() ? "" : std::string(shards.status().message());
}

TEST(FindShardsTest, FindsTheCompleteSetInIndexOrder) {
  const std::string dir = Scratch("complete");
  // Created out of order, beside the other subset and unrelated files.
  for (int i : {3, 0, 11, 2, 1, 10, 4, 5, 9, 6, 8, 7}) Touch(dir + "/" + ShardName("train", i, 12));
  for (int i = 0; i < 2; ++i) Touch(dir + "/" + ShardName("validation", i, 2));
  Touch(dir + "/labels.txt");
  Touch(dir + "/train-00000-of-00012.tmp");
  Touch(dir + "/train-x-of-00012");

  absl::StatusOr<std::vector<std::string>> train = FindShards(dir, "train");
  ASSERT_TRUE(train.ok()) << train.status();
  ASSERT_EQ(train->size(), 12u);
  for (int i = 0; i < 12; ++i) EXPECT_EQ((*train)[i], dir + "/" + ShardName("train", i, 12));

  absl::StatusOr<std::vector<std::string>> validation = FindShards(dir + "/", "validation");
  ASSERT_TRUE(validation.ok()) << validation.status();
  EXPECT_EQ(*validation, (std::vector<std::string>{dir + "/validation-00000-of-00002",
                                                   dir + "/validation-00001-of-00002"}));
}

TEST(FindShardsTest, FolderErrors) {
  const std::string dir = Scratch("folders");
  absl::StatusOr<std::vector<std::string>> missing = FindShards(dir + "/none", "train");
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
  EXPECT_EQ(missing.status().message(),
            absl::StrCat("data folder ", dir, "/none: No such file or directory"));

  Touch(dir + "/file");
  EXPECT_EQ(Error(dir + "/file"), absl::StrCat("data folder ", dir, "/file is not a folder"));

  const std::string empty = Scratch("empty");
  EXPECT_EQ(Error(empty),
            absl::StrCat("data folder ", empty, " is empty (no train-NNNNN-of-NNNNN TFRecord shards)"));

  EXPECT_EQ(Error(dir, "test"), "unknown subset 'test': expected 'train' or 'validation'");
  EXPECT_EQ(Error(""), "the data folder is not set (empty path)");
}

TEST(FindShardsTest, NoMatchingShardsListsWhatIsThere) {
  const std::string dir = Scratch("no_match");
  for (const char* name : {"b.jpg", "a.jpg", "validation-00000-of-00001", "f", "e", "d", "c"})
    Touch(dir + "/" + name);
  EXPECT_EQ(Error(dir), absl::StrCat("no train-NNNNN-of-NNNNN shards in ", dir,
                                     ": found 7 other entries (a.jpg, b.jpg, c, d, e, ...)"));
}

TEST(FindShardsTest, IncompleteOrInconsistentSets) {
  const std::string gap = Scratch("gap");
  for (int i : {0, 2, 5}) Touch(gap + "/" + ShardName("train", i, 6));
  EXPECT_EQ(Error(gap), absl::StrCat("train shards in ", gap,
                                     " are incomplete: 3 of 6 present; missing index 1, 3, 4"));

  const std::string many = Scratch("many_missing");
  Touch(many + "/" + ShardName("train", 0, 1024));
  EXPECT_EQ(Error(many),
            absl::StrCat("train shards in ", many,
                         " are incomplete: 1 of 1024 present; missing index 1, 2, 3, 4, 5, ..."));

  const std::string mixed = Scratch("mixed");
  Touch(mixed + "/" + ShardName("train", 0, 2));
  Touch(mixed + "/" + ShardName("train", 1, 2));
  Touch(mixed + "/" + ShardName("train", 2, 3));
  EXPECT_EQ(Error(mixed), absl::StrCat("train shards in ", mixed,
                                       " disagree on their count: -of- 2 (e.g. "
                                       "train-00000-of-00002), 3 (e.g. train-00002-of-00003)"));

  const std::string beyond = Scratch("beyond");
  Touch(beyond + "/" + ShardName("train", 0, 2));
  Touch(beyond + "/" + ShardName("train", 1, 2));
  Touch(beyond + "/" + ShardName("train", 2, 2));
  EXPECT_EQ(Error(beyond), absl::StrCat("train shards in ", beyond,
                                        " have an index not below their count 2: "
                                        "train-00002-of-00002"));

  const std::string repeated = Scratch("repeated");
  Touch(repeated + "/train-00000-of-00002");
  Touch(repeated + "/train-00001-of-00002");
  Touch(repeated + "/train-1-of-00002");
  const std::string message = Error(repeated);
  EXPECT_NE(message.find("repeat an index"), std::string::npos) << message;

  const std::string folder = Scratch("folder_shard");
  Touch(folder + "/train-00000-of-00002");
  ASSERT_EQ(std::system(absl::StrCat("mkdir '", folder, "/train-00001-of-00002'").c_str()), 0);
  EXPECT_EQ(Error(folder),
            absl::StrCat("shard ", folder, "/train-00001-of-00002 is not a readable regular file"));
}

TEST(EpochShardOrderTest, APermutationFixedBySeedAndEpoch) {
  const size_t n = 100;
  const std::vector<size_t> a = EpochShardOrder(n, 42, 0);
  std::vector<size_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(sorted[i], i);
  EXPECT_EQ(EpochShardOrder(n, 42, 0), a);       // deterministic
  EXPECT_NE(EpochShardOrder(n, 42, 1), a);       // a new order each epoch
  EXPECT_NE(EpochShardOrder(n, 43, 0), a);       // and per seed
  std::vector<size_t> identity(n);
  for (size_t i = 0; i < n; ++i) identity[i] = i;
  EXPECT_NE(a, identity);
  EXPECT_EQ(EpochShardOrder(n, 42, 3, /*shuffle=*/false), identity);
  EXPECT_TRUE(EpochShardOrder(0, 42, 0).empty());
  EXPECT_EQ(EpochShardOrder(1, 42, 7), std::vector<size_t>{0});

  // Over many epochs every shard visits every position of a small set.
  std::set<std::vector<size_t>> seen;
  for (int64_t epoch = 0; epoch < 200; ++epoch) seen.insert(EpochShardOrder(3, 9, epoch));
  EXPECT_EQ(seen.size(), 6u);
}

TEST(InterleaveShardsTest, DealsRoundRobin) {
  const std::vector<size_t> order = {4, 0, 3, 1, 2};
  EXPECT_EQ(InterleaveShards(order, 2),
            (std::vector<std::vector<size_t>>{{4, 3, 2}, {0, 1}}));
  EXPECT_EQ(InterleaveShards(order, 1), (std::vector<std::vector<size_t>>{order}));
  const auto seven = InterleaveShards(order, 7);
  ASSERT_EQ(seven.size(), 7u);
  EXPECT_EQ(seven[4], std::vector<size_t>{2});
  EXPECT_TRUE(seven[5].empty());
  EXPECT_TRUE(InterleaveShards(order, 0).empty());
}

}  // namespace
}  // namespace cnnbench::input
