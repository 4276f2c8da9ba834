// Fuzzes the case-name grammar (bench/suite/names.h): any string parses to a
// name or an error; a name that parses prints back to a string that parses
// to the same name.
#include <string>

#include "bench/suite/names.h"
#include "gtest/gtest.h"
#include "tests/fuzz/fuzz_driver.h"

namespace cnnbench {
namespace {

TEST(NamesFuzzTest, ParseNeverCrashesAndRoundTrips) {
  fuzz::FuzzOptions options;
  options.dictionary = {
      "train/",         "conv/",       "pool/",   "gemm/",     "allreduce/", "allgather/",
      "reducescatter/", "broadcast/",  "reduce/", "/sum/",     "/none/",     "input/",
      "batch:",         "gpus:",       "bytes:",  "ranks:",    "threads:",   "fp32",
      "bf16",           "cpu",         "cuda",    "/repeats:", "/min_time:", "_mean",
      "_stddev",        "/manual_time"};
  int64_t parsed = 0;
  const int64_t tried = fuzz::Fuzz(
      fuzz::LoadCorpus("tests/fuzz/corpus/names"), options, [&](absl::string_view input) {
        absl::StatusOr<bench::CaseName> name = bench::ParseCaseName(input);
        if (!name.ok()) {
          ASSERT_FALSE(name.status().message().empty()) << input;
          return;
        }
        ++parsed;
        const std::string printed = name->ToString();
        absl::StatusOr<bench::CaseName> again = bench::ParseCaseName(printed);
        ASSERT_TRUE(again.ok()) << "'" << input << "' printed as '" << printed
                                << "' does not parse: " << again.status();
        EXPECT_EQ(again->ToString(), printed) << "from input '" << input << "'";
      });
  EXPECT_GT(tried, options.iterations);
  EXPECT_GT(parsed, 0) << "the corpus should hold valid names";
}

}  // namespace
}  // namespace cnnbench
