#include "core/status.h"

#include "absl/strings/match.h"

namespace cnnbench {

absl::Status AnnotateStatus(const absl::Status& status, const char* file, int line) {
  if (status.ok()) return status;
  std::string where = absl::StrCat(file, ":", line);
  // Nested RETURN_IF_ERRORs would repeat the innermost location; keep a trail.
  return absl::Status(status.code(), absl::StrCat(where, ": ", status.message()));
}

absl::Status OutOfMemoryError(const std::string& what) {
  return absl::ResourceExhaustedError(absl::StrCat("OOM: ", what));
}

bool IsOutOfMemory(const absl::Status& status) {
  return status.code() == absl::StatusCode::kResourceExhausted ||
         absl::StrContains(status.message(), "OOM");
}

}  // namespace cnnbench
