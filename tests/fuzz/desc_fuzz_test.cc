// Fuzzes the descriptor strings (kernels/desc.h): any string parses to a
// descriptor or an error naming the string; a parsed descriptor prints back
// to its canonical string, which parses to the same descriptor.
#include <string>

#include "gtest/gtest.h"
#include "kernels/desc.h"
#include "tests/fuzz/fuzz_driver.h"

namespace cnnbench {
namespace {

TEST(DescFuzzTest, ParseNeverCrashesAndRoundTrips) {
  fuzz::FuzzOptions options;
  options.dictionary = {"conv:", "pool:", "fc:", "bn:", "relu:", "lrn:", "dropout:", "concat:",
                        "add:", "softmax_xent:", "gemm:", "mb", "ic", "oc", "ih", "oh", "kh",
                        "sh", "ph", "dh", "g", "_nobias", "_ta", "_tb", "_p", "_eps", "mom",
                        "SAME", "VALID"};
  int64_t parsed = 0;
  const int64_t tried = fuzz::Fuzz(
      fuzz::LoadCorpus("tests/fuzz/corpus/desc"), options, [&](absl::string_view input) {
        absl::StatusOr<OpDesc> desc = ParseOpDesc(input);
        if (!desc.ok()) {
          ASSERT_FALSE(desc.status().message().empty()) << input;
          return;
        }
        ++parsed;
        const std::string canonical = OpDescToString(*desc);
        absl::StatusOr<OpDesc> again = ParseOpDesc(canonical);
        ASSERT_TRUE(again.ok()) << "'" << input << "' printed as '" << canonical
                                << "' does not parse: " << again.status();
        EXPECT_EQ(OpDescToString(*again), canonical);
        EXPECT_TRUE(*again == *desc) << canonical;
      });
  EXPECT_GT(tried, options.iterations);
  EXPECT_GT(parsed, 0) << "the corpus should hold valid descriptors";
}

}  // namespace
}  // namespace cnnbench
