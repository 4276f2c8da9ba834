// A deterministic mutation fuzzer for the parsers that read outside input
// (case names, descriptor strings, the report's JSON). Built with the
// project's compiler (no libFuzzer needed): from a seed corpus it derives
// inputs by byte flips, inserts, deletes, duplications, splices and
// interesting tokens, with a fixed seed, and calls the target on each. The
// target must return (any status) without crashing; under --config=asan
// memory errors and undefined behaviour abort the test.
#ifndef CNNBENCH_TESTS_FUZZ_FUZZ_DRIVER_H_
#define CNNBENCH_TESTS_FUZZ_FUZZ_DRIVER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace cnnbench::fuzz {

struct FuzzOptions {
  uint64_t seed = 1;
  int64_t iterations = 20000;
  size_t max_length = 4096;
  // Tokens worth splicing in (separators, numbers at type limits, ...).
  std::vector<std::string> dictionary;
};

// Files under `dir` (the saved corpus, a runfiles path), one input each.
std::vector<std::string> LoadCorpus(const std::string& dir);

// Runs `target` on every corpus entry, then on `iterations` mutants.
// Returns the number of inputs tried.
int64_t Fuzz(const std::vector<std::string>& corpus, const FuzzOptions& options,
             const std::function<void(absl::string_view)>& target);

}  // namespace cnnbench::fuzz

#endif  // CNNBENCH_TESTS_FUZZ_FUZZ_DRIVER_H_
