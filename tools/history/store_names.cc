// What the store says of runs: their identity hash, the environment keys'
// names, commits (and how many lie between two, from git).
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "tools/history/store.h"
#include "tools/history/store_series.h"

namespace cnnbench::history {
namespace {

bool IsHexCommit(const std::string& commit) {
  if (commit.size() < 7 || commit.size() > 40) return false;
  for (char ch : commit)
    if (!std::isxdigit(static_cast<unsigned char>(ch))) return false;
  return true;
}

// Commits from `a` to `b` in the work tree `dir` (git rev-list --count
// a..b); nullopt when git cannot say (not a repository, unknown commits).
std::optional<int> CountCommits(const std::string& dir, const std::string& a,
                                const std::string& b) {
  if (dir.empty() || !IsHexCommit(a) || !IsHexCommit(b)) return std::nullopt;
  // Both commits are checked to be hex digits above: nothing else reaches the shell.
  std::string quoted_dir;
  for (char ch : dir) {
    if (ch == '\'') quoted_dir += "'\\''";
    else quoted_dir += ch;
  }
  const std::string command = absl::StrCat("git -C '", quoted_dir, "' rev-list --count ", a, "..",
                                           b, " 2>/dev/null");
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  char buffer[64] = {0};
  const bool read = std::fgets(buffer, sizeof(buffer), pipe) != nullptr;
  const int status = ::pclose(pipe);
  int n = 0;
  if (!read || status != 0 || !absl::SimpleAtoi(absl::StripAsciiWhitespace(buffer), &n))
    return std::nullopt;
  return n;
}

}  // namespace

namespace internal {
std::optional<int> CountCommitsInRepo(const std::string& dir, const std::string& a,
                                      const std::string& b) {
  return CountCommits(dir, a, b);
}
}  // namespace internal

std::string ContentHash(absl::string_view bytes) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char ch : bytes) {
    h ^= ch;
    h *= 1099511628211ULL;
  }
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(h));
  return text;
}

std::string EnvironmentKeyName(absl::string_view key) {
  static const std::map<std::string, std::string, std::less<>> names = {
      {"onednn_version", "oneDNN"},
      {"cudnn_version", "cuDNN"},
      {"cublas_version", "cuBLAS"},
      {"nccl_version", "NCCL"},
      {"driver_version", "driver"},
      {"cuda_runtime_version", "CUDA runtime"},
      {"cuda_toolkit_version", "CUDA toolkit"},
      {"mpi_version", "MPI"},
      {"library_build_type", "Google Benchmark build"},
      {"os", "OS"},
      {"kernel", "kernel"},
      {"torch_version", "PyTorch"},
      {"cpu_governor", "CPU governor"},
      {"gpu_sm_clock_max_mhz", "GPU SM clock limit (MHz)"},
      {"gpu_memory_clock_max_mhz", "GPU memory clock limit (MHz)"},
      {"gpu_power_limit_w", "GPU power limit (W)"}};
  auto it = names.find(key);
  return it != names.end() ? it->second : std::string(key);
}

std::pair<std::string, bool> SplitCommit(absl::string_view commit) {
  std::string c(commit);
  bool dirty = false;
  for (const char* suffix : {"-dirty", "+dirty"}) {
    if (absl::EndsWith(c, suffix)) {
      c.resize(c.size() - std::string(suffix).size());
      dirty = true;
    }
  }
  if (c == "unknown") c.clear();
  return {c, dirty};
}


}  // namespace cnnbench::history
