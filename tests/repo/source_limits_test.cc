// The size limits of docs/architecture.md, held by a test: no source file
// outside tests/ and third_party/ over 600 lines, and no function in bench/
// or tools/report/ over 80 lines. The files are every package's `:source_files`
// filegroup (this test's data), read from the test's runfiles.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"

namespace cnnbench {
namespace {

constexpr int kMaxFileLines = 600;
constexpr int kMaxFunctionLines = 80;

struct Function {
  int first_line = 0;  // 1-based: the signature's first line
  int lines = 0;       // signature to closing brace
  std::string signature;
};

bool StartsAtColumnZero(absl::string_view line) {
  return !line.empty() && line[0] != ' ' && line[0] != '\t';
}

// The functions defined at namespace scope in `text`, found as the sources'
// style writes them (clang-format): a signature starting at column 0 with a
// '(' whose body opens at the end of a line and closes at the next line
// starting at column 0 ("}"). Declarations (ending in ';'), flags, tables and
// type definitions are not functions.
std::vector<Function> FunctionsOf(const std::string& text) {
  const std::vector<std::string> lines = absl::StrSplit(text, '\n');
  static constexpr absl::string_view kNotFunctions[] = {
      "#",      "//",   "}",     "namespace", "class ",     "struct ",     "enum ", "union ",
      "using ", "typedef", "extern ", "static_assert", "ABSL_FLAG", "ABSL_DECLARE", "template"};
  std::vector<Function> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const absl::string_view line = lines[i];
    if (!StartsAtColumnZero(line)) continue;
    bool skip = false;
    for (absl::string_view prefix : kNotFunctions) skip = skip || absl::StartsWith(line, prefix);
    if (skip || !absl::StrContains(line, '(')) continue;
    // Where the signature ends: a body's '{', a declaration's ';' or a
    // one-line function's '}'.
    size_t open = i;
    while (open < lines.size()) {
      const absl::string_view end = absl::StripTrailingAsciiWhitespace(lines[open]);
      if (absl::EndsWith(end, "{") || absl::EndsWith(end, ";") || absl::EndsWith(end, "}")) break;
      ++open;
    }
    if (open == lines.size() ||
        !absl::EndsWith(absl::StripTrailingAsciiWhitespace(lines[open]), "{"))
      continue;
    size_t close = open + 1;
    while (close < lines.size() &&
           (!StartsAtColumnZero(lines[close]) || absl::StartsWith(lines[close], "#")))
      ++close;
    if (close == lines.size() || !absl::StartsWith(lines[close], "}")) continue;
    out.push_back({static_cast<int>(i) + 1, static_cast<int>(close - i) + 1, lines[i]});
    i = close;
  }
  return out;
}

int LineCount(const std::string& text) {
  int lines = 0;
  for (char c : text) lines += c == '\n';
  return lines + (!text.empty() && text.back() != '\n');
}

struct SourceFile {
  std::string path;  // relative to the workspace: "bench/cli/main.cc"
  std::string text;
};

// Every file the `:source_files` filegroups bring into the runfiles.
std::vector<SourceFile> SourceFiles() {
  std::vector<SourceFile> files;
  for (const char* top : {"bench", "core", "input", "kernels", "models", "tools", "train"}) {
    if (!std::filesystem::is_directory(top)) continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(top)) {
      if (!entry.is_regular_file()) continue;
      const std::string path = entry.path().generic_string();
      if (!(absl::EndsWith(path, ".cc") || absl::EndsWith(path, ".h") ||
            absl::EndsWith(path, ".cu") || absl::EndsWith(path, ".py") ||
            absl::EndsWith(path, ".sh")))
        continue;
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      files.push_back({path, text.str()});
    }
  }
  return files;
}

TEST(SourceLimitsTest, TheScannerFindsFunctionsAndNothingElse) {
  std::string text = "namespace x {\n// A comment (with parentheses) {\nint Short(int a) {\n";
  text += "  return a;\n}\n\nabsl::Status Long(\n    int a,\n    int b) {\n";
  for (int i = 0; i < 90; ++i) text += "  ++a;\n";
  text += "#if 0\n  x();\n#endif\n  return b;\n}\n";
  text += "double B(int i) { return i; }\n";
  text += "int Declared(int a);\nABSL_FLAG(int, steps, -1,\n          \"help {\");\n";
  text += "constexpr Entry kTable[] = {\n    {1, Make(2)},\n};\n";
  text += "template <typename T>\nT Twice(T v) {\n  return v + v;\n}\n}  // namespace x\n";
  const std::vector<Function> functions = FunctionsOf(text);
  ASSERT_EQ(functions.size(), 3u);
  EXPECT_EQ(functions[0].signature, "int Short(int a) {");
  EXPECT_EQ(functions[0].lines, 3);
  EXPECT_EQ(functions[1].signature, "absl::Status Long(");
  EXPECT_EQ(functions[1].first_line, 7);
  EXPECT_EQ(functions[1].lines, 3 + 90 + 3 + 2);
  EXPECT_EQ(functions[2].signature, "T Twice(T v) {");
  EXPECT_EQ(LineCount("a\nb\n"), 2);
  EXPECT_EQ(LineCount("a\nb"), 2);
}

TEST(SourceLimitsTest, NoSourceFileIsOver600Lines) {
  const std::vector<SourceFile> files = SourceFiles();
  // Every top folder's sources are here (a package without its :sources
  // filegroup in this test's data would pass unseen).
  for (const char* top : {"bench/", "core/", "input/", "kernels/", "models/", "tools/", "train/"}) {
    int count = 0;
    for (const SourceFile& f : files) count += absl::StartsWith(f.path, top);
    EXPECT_GT(count, 0) << top;
  }
  EXPECT_GT(files.size(), 200u);
  std::vector<std::string> over;
  for (const SourceFile& f : files)
    if (const int lines = LineCount(f.text); lines > kMaxFileLines)
      over.push_back(absl::StrCat(f.path, ": ", lines, " lines"));
  EXPECT_TRUE(over.empty()) << "over " << kMaxFileLines << " lines (split by concern):\n  "
                            << absl::StrJoin(over, "\n  ");
}

TEST(SourceLimitsTest, NoFunctionInBenchOrTheReportIsOver80Lines) {
  std::vector<std::string> over;
  int functions = 0;
  for (const SourceFile& f : SourceFiles()) {
    if (!absl::StartsWith(f.path, "bench/") && !absl::StartsWith(f.path, "tools/report/")) continue;
    if (!absl::EndsWith(f.path, ".cc") && !absl::EndsWith(f.path, ".h")) continue;
    for (const Function& fn : FunctionsOf(f.text)) {
      ++functions;
      if (fn.lines > kMaxFunctionLines)
        over.push_back(absl::StrCat(f.path, ":", fn.first_line, ": ", fn.lines, " lines: ",
                                    fn.signature));
    }
  }
  EXPECT_GT(functions, 500);
  EXPECT_TRUE(over.empty()) << "over " << kMaxFunctionLines << " lines (split into steps):\n  "
                            << absl::StrJoin(over, "\n  ");
}

}  // namespace
}  // namespace cnnbench
