// Fuzzes the report's reader of Google Benchmark JSON (tools/report): any
// text is a RunFile or an error naming the file; every RunFile that parses
// goes through the whole report (tables in every format) without crashing.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/fuzz/fuzz_driver.h"
#include "tools/report/formats.h"
#include "tools/report/report.h"
#include "tools/report/run_file.h"

namespace cnnbench {
namespace {

TEST(ReportFuzzTest, ReaderNeverCrashesAndParsedFilesReport) {
  fuzz::FuzzOptions options;
  options.iterations = 4000;  // each input may build a whole report
  options.max_length = 1 << 16;
  options.dictionary = {"\"benchmarks\"", "\"context\"", "\"name\"", "\"run_type\"",
                        "\"aggregate\"", "\"iteration\"", "\"images_per_second\"", "\"flops\"",
                        "\"error_occurred\"", "\"error_message\"", "\"repetitions\"",
                        "\"platform\"", "train/resnet50/fp32/synthetic/batch:32/gpus:1",
                        "NaN", "-Infinity", "1e400"};
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/fuzz.json";
  int64_t parsed = 0;
  const int64_t tried = fuzz::Fuzz(
      fuzz::LoadCorpus("tests/fuzz/corpus/report"), options, [&](absl::string_view input) {
        std::vector<std::string> warnings;
        absl::StatusOr<report::RunFile> file = report::ParseRunFile("fuzz.json", input, &warnings);
        if (!file.ok()) {
          ASSERT_NE(file.status().message().find("fuzz.json"), absl::string_view::npos)
              << file.status();
          return;
        }
        ++parsed;
        {
          std::ofstream out(path, std::ios::binary | std::ios::trunc);
          out.write(input.data(), static_cast<std::streamsize>(input.size()));
        }
        std::vector<std::string> errors;
        warnings.clear();
        report::Results results = report::LoadResults({path}, &warnings, &errors);
        report::Report built = report::BuildReport(results, "fuzz", 0.05);
        report::RenderMarkdown(built);
        report::RenderCsv(built);
        report::RenderHtml(
            built,
            [](const report::Chart&, const std::string&) -> absl::StatusOr<std::string> {
              return std::string("<svg/>");
            },
            &warnings);
      });
  EXPECT_GT(tried, options.iterations);
  EXPECT_GT(parsed, 0) << "the corpus should hold valid run files";
}

}  // namespace
}  // namespace cnnbench
