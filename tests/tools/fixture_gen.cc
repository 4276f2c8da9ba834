// Writes report fixtures in Google Benchmark's real JSON format: it registers
// the cases a spec file lists and lets the library run and report them, so
// the fixtures carry the library's own layout (repetitions, aggregates,
// skipped cases, name suffixes) while the counter values come from the spec.
//
// Usage: fixture_gen SPEC --benchmark_out=OUT.json --benchmark_out_format=json
//            [--benchmark_repetitions=N] [other --benchmark_* flags]
//
// Spec lines ('#' starts a comment):
//   context KEY VALUE...             AddCustomContext(KEY, VALUE)
//   case NAME COUNTER=V1,V2,... [time=SECONDS] [timing=manual|real] [repeats=N]
//                                    one value per repetition
//   fail NAME MESSAGE...             SkipWithError(MESSAGE)
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "benchmark/benchmark.h"

namespace {

struct CaseSpec {
  std::string name;
  std::map<std::string, std::vector<double>> counters;  // one value per repetition
  double seconds = 0.001;
  bool manual_time = true;
  int repeats = 0;  // 0: the --benchmark_repetitions flag decides
  std::string error;
  int calls = 0;  // each repetition is exactly one call (Iterations(1))
};

void Run(benchmark::State& state, CaseSpec* spec) {
  if (!spec->error.empty()) {
    state.SkipWithError(spec->error.c_str());
    return;
  }
  const int repetition = spec->calls++;
  for (auto _ : state) {
    if (spec->manual_time) state.SetIterationTime(spec->seconds);
  }
  for (const auto& [counter, values] : spec->counters) {
    state.counters[counter] = values[repetition % values.size()];
  }
}

bool ParseCase(const std::vector<std::string>& words, CaseSpec& spec) {
  spec.name = words[1];
  for (size_t i = 2; i < words.size(); ++i) {
    std::pair<std::string, std::string> kv = absl::StrSplit(words[i], absl::MaxSplits('=', 1));
    if (kv.first == "time") {
      if (!absl::SimpleAtod(kv.second, &spec.seconds)) return false;
    } else if (kv.first == "timing") {
      spec.manual_time = kv.second == "manual";
    } else if (kv.first == "repeats") {
      if (!absl::SimpleAtoi(kv.second, &spec.repeats)) return false;
    } else {
      std::vector<double>& values = spec.counters[kv.first];
      for (absl::string_view v : absl::StrSplit(kv.second, ',')) {
        double value;
        if (!absl::SimpleAtod(v, &value)) return false;
        values.push_back(value);
      }
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: fixture_gen SPEC --benchmark_out=OUT.json ...\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "fixture_gen: cannot read %s\n", argv[1]);
    return 2;
  }
  std::vector<std::unique_ptr<CaseSpec>> specs;  // owned here; benchmarks keep pointers
  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    absl::string_view text = absl::StripAsciiWhitespace(line);
    if (text.empty() || text[0] == '#') continue;
    std::vector<std::string> words = absl::StrSplit(text, ' ', absl::SkipEmpty());
    auto spec = std::make_unique<CaseSpec>();
    bool ok = words.size() >= 3;
    if (ok && words[0] == "context") {
      std::vector<std::string> rest(words.begin() + 2, words.end());
      benchmark::AddCustomContext(words[1], absl::StrJoin(rest, " "));
      continue;
    } else if (ok && words[0] == "case") {
      ok = ParseCase(words, *spec);
    } else if (ok && words[0] == "fail") {
      spec->name = words[1];
      std::vector<std::string> rest(words.begin() + 2, words.end());
      spec->error = absl::StrJoin(rest, " ");
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr, "fixture_gen: %s:%d: cannot parse: %s\n", argv[1], line_number,
                   line.c_str());
      return 2;
    }
    auto* b = benchmark::RegisterBenchmark(spec->name.c_str(), Run, spec.get());
    b->Iterations(1);
    if (spec->manual_time) b->UseManualTime();
    if (spec->repeats > 0) b->Repetitions(spec->repeats);
    specs.push_back(std::move(spec));
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
