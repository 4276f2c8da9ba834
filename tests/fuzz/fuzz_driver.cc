#include "tests/fuzz/fuzz_driver.h"

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/random.h"

namespace cnnbench::fuzz {
namespace {

const char* const kDefaultTokens[] = {
    "0", "-1", "1", "2147483647", "2147483648", "9223372036854775807", "-9223372036854775808",
    "18446744073709551616", "1e308", "1e-320", "nan", "inf", "-0", "0x10", ".", ":", "/", "_",
    "\"", "\\", "{", "}", "[", "]", ",", "null", "true", "NaN", "Infinity", "\xff", "\x01",
};

std::string Mutate(const std::string& input, const std::vector<std::string>& corpus,
                   const FuzzOptions& options, Rng& rng) {
  std::string s = input;
  const int rounds = 1 + static_cast<int>(rng.Next() % 4);
  for (int r = 0; r < rounds; ++r) {
    const size_t pos = s.empty() ? 0 : rng.Next() % (s.size() + 1);
    switch (rng.Next() % 8) {
      case 0:  // flip a bit
        if (!s.empty()) s[pos % s.size()] ^= static_cast<char>(1u << (rng.Next() % 8));
        break;
      case 1:  // random byte
        s.insert(s.begin() + pos, static_cast<char>(rng.Next() & 0xff));
        break;
      case 2:  // delete a run
        if (!s.empty()) s.erase(pos % s.size(), 1 + rng.Next() % 8);
        break;
      case 3: {  // duplicate a run
        if (s.empty()) break;
        const size_t from = rng.Next() % s.size();
        const size_t len = std::min<size_t>(1 + rng.Next() % 16, s.size() - from);
        s.insert(pos, s.substr(from, len));
        break;
      }
      case 4: {  // splice from another corpus entry
        const std::string& other = corpus[rng.Next() % corpus.size()];
        if (other.empty()) break;
        const size_t from = rng.Next() % other.size();
        s = s.substr(0, pos) + other.substr(from);
        break;
      }
      case 5: {  // a dictionary token
        const bool own = !options.dictionary.empty() && rng.Next() % 2 == 0;
        const std::string token =
            own ? options.dictionary[rng.Next() % options.dictionary.size()]
                : std::string(kDefaultTokens[rng.Next() % (sizeof(kDefaultTokens) / sizeof(kDefaultTokens[0]))]);
        s.insert(pos, token);
        break;
      }
      case 6:  // replace a digit run with a big number
        for (size_t i = pos; i < s.size(); ++i)
          if (s[i] >= '0' && s[i] <= '9') {
            s.insert(i, "99999999999999999999");
            break;
          }
        break;
      default:  // truncate
        s.resize(pos);
        break;
    }
  }
  if (s.size() > options.max_length) s.resize(options.max_length);
  return s;
}

}  // namespace

std::vector<std::string> LoadCorpus(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    closedir(d);
  }
  std::sort(names.begin(), names.end());  // the order readdir gives is not fixed
  std::vector<std::string> corpus;
  for (const std::string& name : names) {
    std::ifstream in(dir + "/" + name, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    corpus.push_back(buffer.str());
  }
  return corpus;
}

int64_t Fuzz(const std::vector<std::string>& corpus, const FuzzOptions& options,
             const std::function<void(absl::string_view)>& target) {
  std::vector<std::string> pool = corpus;
  if (pool.empty()) pool.push_back("");
  int64_t tried = 0;
  for (const std::string& input : pool) {
    target(input);
    ++tried;
  }
  Rng rng(options.seed);
  for (int64_t i = 0; i < options.iterations; ++i) {
    const std::string& base = pool[rng.Next() % pool.size()];
    target(Mutate(base, pool, options, rng));
    ++tried;
  }
  return tried;
}

}  // namespace cnnbench::fuzz
