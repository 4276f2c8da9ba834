#include "input/shards.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "core/random.h"

namespace cnnbench::input {
namespace {

constexpr size_t kNamesShown = 5;

bool AllDigits(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return absl::ascii_isdigit(c); });
}

// Parses "<subset>-<index>-of-<count>" (decimal digits, usually five).
bool ParseShardName(absl::string_view name, absl::string_view subset, int64_t* index,
                    int64_t* count) {
  if (!absl::ConsumePrefix(&name, subset) || !absl::ConsumePrefix(&name, "-")) return false;
  const size_t of = name.find("-of-");
  if (of == absl::string_view::npos) return false;
  const absl::string_view index_text = name.substr(0, of);
  const absl::string_view count_text = name.substr(of + 4);
  if (!AllDigits(index_text) || !AllDigits(count_text) || index_text.size() > 9 ||
      count_text.size() > 9)
    return false;
  return absl::SimpleAtoi(index_text, index) && absl::SimpleAtoi(count_text, count);
}

std::string FirstNames(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  std::string shown =
      absl::StrJoin(names.begin(), names.begin() + std::min(kNamesShown, names.size()), ", ");
  if (names.size() > kNamesShown) absl::StrAppend(&shown, ", ...");
  return shown;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> FindShards(const std::string& data_dir,
                                                    const std::string& subset) {
  if (subset != "train" && subset != "validation") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown subset '", subset, "': expected 'train' or 'validation'"));
  }
  if (data_dir.empty()) return absl::InvalidArgumentError("the data folder is not set (empty path)");
  struct stat st;
  if (::stat(data_dir.c_str(), &st) != 0) {
    const int error = errno;
    return absl::Status(absl::ErrnoToStatusCode(error),
                        absl::StrCat("data folder ", data_dir, ": ", std::strerror(error)));
  }
  if (!S_ISDIR(st.st_mode))
    return absl::InvalidArgumentError(absl::StrCat("data folder ", data_dir, " is not a folder"));

  DIR* dir = ::opendir(data_dir.c_str());
  if (dir == nullptr) {
    const int error = errno;
    return absl::Status(absl::ErrnoToStatusCode(error), absl::StrCat("cannot list data folder ",
                                                                     data_dir, ": ",
                                                                     std::strerror(error)));
  }
  std::vector<std::string> entries;
  std::map<int64_t, std::vector<std::string>> by_count;  // "of" count -> names
  std::map<int64_t, std::string> by_index;
  std::vector<std::string> duplicates;
  errno = 0;
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    entries.push_back(name);
    int64_t index, count;
    if (!ParseShardName(name, subset, &index, &count)) continue;
    by_count[count].push_back(name);
    if (!by_index.emplace(index, name).second) duplicates.push_back(name);
  }
  const int read_error = errno;
  ::closedir(dir);
  if (read_error != 0) {
    return absl::Status(absl::ErrnoToStatusCode(read_error),
                        absl::StrCat("cannot list data folder ", data_dir, ": ",
                                     std::strerror(read_error)));
  }

  const std::string pattern = absl::StrCat(subset, "-NNNNN-of-NNNNN");
  if (entries.empty())
    return absl::NotFoundError(absl::StrCat("data folder ", data_dir, " is empty (no ", pattern,
                                            " TFRecord shards)"));
  if (by_index.empty()) {
    return absl::NotFoundError(absl::StrCat("no ", pattern, " shards in ", data_dir, ": found ",
                                            entries.size(), " other entries (",
                                            FirstNames(entries), ")"));
  }
  if (by_count.size() > 1) {
    std::vector<std::string> counts;
    for (const auto& [count, names] : by_count)
      counts.push_back(absl::StrCat(count, " (e.g. ", names.front(), ")"));
    return absl::FailedPreconditionError(
        absl::StrCat(subset, " shards in ", data_dir, " disagree on their count: -of- ",
                     absl::StrJoin(counts, ", ")));
  }
  if (!duplicates.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        subset, " shards in ", data_dir, " repeat an index: ", FirstNames(duplicates)));
  }
  const int64_t count = by_count.begin()->first;
  std::vector<std::string> beyond;
  for (const auto& [index, name] : by_index)
    if (index >= count) beyond.push_back(name);
  if (!beyond.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(subset, " shards in ", data_dir, " have an index not below their count ",
                     count, ": ", FirstNames(beyond)));
  }
  if (static_cast<int64_t>(by_index.size()) != count) {
    std::vector<std::string> missing;
    for (int64_t i = 0; i < count && missing.size() < kNamesShown; ++i)
      if (by_index.count(i) == 0) missing.push_back(absl::StrCat(i));
    return absl::FailedPreconditionError(absl::StrCat(
        subset, " shards in ", data_dir, " are incomplete: ", by_index.size(), " of ", count,
        " present; missing index ", absl::StrJoin(missing, ", "),
        count - static_cast<int64_t>(by_index.size()) > static_cast<int64_t>(missing.size())
            ? ", ..."
            : ""));
  }

  std::vector<std::string> paths;
  paths.reserve(by_index.size());
  for (const auto& [index, name] : by_index) {
    std::string path = absl::StrCat(data_dir, absl::EndsWith(data_dir, "/") ? "" : "/", name);
    struct stat shard;
    if (::stat(path.c_str(), &shard) != 0 || !S_ISREG(shard.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat("shard ", path, " is not a readable regular file"));
    }
    paths.push_back(std::move(path));
  }
  return paths;
}

std::vector<size_t> EpochShardOrder(size_t num_shards, uint64_t seed, int64_t epoch,
                                    bool shuffle) {
  std::vector<size_t> order(num_shards);
  for (size_t i = 0; i < num_shards; ++i) order[i] = i;
  if (!shuffle) return order;
  // Fisher-Yates with the project's generator, keyed by (seed, epoch).
  Rng rng(MixBits64(MixBits64(seed) ^ static_cast<uint64_t>(epoch)));
  for (size_t i = num_shards; i > 1; --i) std::swap(order[i - 1], order[rng.Next() % i]);
  return order;
}

std::vector<std::vector<size_t>> InterleaveShards(const std::vector<size_t>& order,
                                                  size_t readers) {
  std::vector<std::vector<size_t>> dealt(readers);
  if (readers == 0) return dealt;
  for (size_t i = 0; i < order.size(); ++i) dealt[i % readers].push_back(order[i]);
  return dealt;
}

}  // namespace cnnbench::input
