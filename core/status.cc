#include "core/status.h"

#include <regex>

#include "absl/strings/match.h"

namespace cnnbench {

absl::Status AnnotateStatus(const absl::Status& status, const char* file, int line) {
  if (status.ok()) return status;
  std::string where = absl::StrCat(file, ":", line);
  // Nested RETURN_IF_ERRORs would repeat the innermost location; keep a trail.
  return absl::Status(status.code(), absl::StrCat(where, ": ", status.message()));
}

std::string WithoutSourceLocations(absl::string_view message) {
  // "bench/cases/train/train_cases.cc:73: " and the like: a source file's
  // path and line, as AnnotateStatus writes them.
  static const std::regex* const kSourceLocation =
      new std::regex(R"([A-Za-z0-9_./+-]+\.(cc|h|cu|cuh|cpp|hpp|c):[0-9]+: )");
  return std::regex_replace(std::string(message), *kSourceLocation, "");
}

absl::Status OutOfMemoryError(const std::string& what) {
  return absl::ResourceExhaustedError(absl::StrCat("OOM: ", what));
}

bool IsOutOfMemory(const absl::Status& status) {
  return status.code() == absl::StatusCode::kResourceExhausted ||
         absl::StrContains(status.message(), "OOM");
}

}  // namespace cnnbench
