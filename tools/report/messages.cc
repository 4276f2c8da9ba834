#include "tools/report/messages.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace cnnbench::report {
namespace {

bool IsSourceChar(char c) {
  return absl::ascii_isalnum(c) || c == '_' || c == '.' || c == '/' || c == '-' || c == '+';
}

// "bench/cases/train/train_cases.cc:56" (or with a column, "x.cu:12:7"): a path with a
// source file's extension, then one or two line/column numbers.
bool IsSourceLocation(absl::string_view part) {
  std::vector<absl::string_view> fields = absl::StrSplit(part, ':');
  if (fields.size() < 2 || fields.size() > 3) return false;
  for (size_t i = 1; i < fields.size(); ++i) {
    if (fields[i].empty()) return false;
    for (char c : fields[i]) {
      if (!absl::ascii_isdigit(c)) return false;
    }
  }
  absl::string_view path = fields[0];
  for (char c : path) {
    if (!IsSourceChar(c)) return false;
  }
  for (const char* extension : {".cc", ".h", ".cu", ".cuh", ".cpp", ".hpp", ".cxx", ".c"}) {
    if (absl::EndsWith(path, extension) && path.size() > std::string(extension).size()) {
      return true;
    }
  }
  return false;
}

// "OOM", "unsupported", "input": a single word that names why a case failed.
bool IsReasonWord(absl::string_view part) {
  if (part.empty() || !absl::ascii_isalpha(part[0])) return false;
  for (char c : part) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

}  // namespace

std::string UserMessage(absl::string_view raw) {
  std::vector<absl::string_view> kept;
  for (absl::string_view part : absl::StrSplit(raw, ": ")) {
    if (IsSourceLocation(part)) continue;
    if (!kept.empty() && IsReasonWord(kept.front()) && part == kept.front()) continue;
    kept.push_back(part);
  }
  return absl::StrJoin(kept, ": ");
}

std::string FailureNote(absl::string_view raw) {
  std::string message = UserMessage(raw);
  if (absl::StartsWith(message, "unsupported")) return message;
  return absl::StrCat("skipped: ", message);
}

}  // namespace cnnbench::report
