// Status helpers: absl::Status all the way up, with the file:line of the
// failing call attached so a benchmark's skip message says where it failed.
#ifndef CNNBENCH_CORE_STATUS_H_
#define CNNBENCH_CORE_STATUS_H_

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace cnnbench {

// Prefixes `status`'s message with "file:line: " (keeps the code).
absl::Status AnnotateStatus(const absl::Status& status, const char* file, int line);

// `message` without the "file:line: " trail AnnotateStatus put in it (one
// per RETURN_IF_ERROR it passed through): what a user reads in a program's
// messages. The trail is for --verbose and the JSON's error_full.
std::string WithoutSourceLocations(absl::string_view message);

// Builds an error whose message starts with "OOM": the tables print failed
// cases whose reason starts with it as OOM.
absl::Status OutOfMemoryError(const std::string& what);
bool IsOutOfMemory(const absl::Status& status);

}  // namespace cnnbench

#define CNNBENCH_CONCAT_INNER_(a, b) a##b
#define CNNBENCH_CONCAT_(a, b) CNNBENCH_CONCAT_INNER_(a, b)

// Returns from the enclosing function when `expr` is not OK, adding file:line.
#define RETURN_IF_ERROR(expr)                                                   \
  do {                                                                          \
    ::absl::Status cnnbench_status_ = (expr);                                   \
    if (!cnnbench_status_.ok())                                                 \
      return ::cnnbench::AnnotateStatus(cnnbench_status_, __FILE__, __LINE__);  \
  } while (0)

#define CNNBENCH_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr)                     \
  auto statusor = (rexpr);                                                        \
  if (!statusor.ok())                                                             \
    return ::cnnbench::AnnotateStatus(statusor.status(), __FILE__, __LINE__);     \
  lhs = std::move(statusor).value()

// `ASSIGN_OR_RETURN(auto x, MakeX());` assigns the value or returns the error.
#define ASSIGN_OR_RETURN(lhs, rexpr) \
  CNNBENCH_ASSIGN_OR_RETURN_IMPL_(CNNBENCH_CONCAT_(cnnbench_statusor_, __LINE__), lhs, rexpr)

// The same two without the file:line prefix, where the error goes to the user
// as it is (a descriptor string's field, a results file's path and key) and a
// source location would only be noise in it.
#define RETURN_IF_ERROR_AS_IS(expr)                                 \
  do {                                                              \
    ::absl::Status cnnbench_status_ = (expr);                       \
    if (!cnnbench_status_.ok()) return cnnbench_status_;            \
  } while (0)

#define CNNBENCH_ASSIGN_OR_RETURN_AS_IS_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                          \
  if (!statusor.ok()) return std::move(statusor).status();          \
  lhs = std::move(statusor).value()

#define ASSIGN_OR_RETURN_AS_IS(lhs, rexpr)                                                  \
  CNNBENCH_ASSIGN_OR_RETURN_AS_IS_IMPL_(CNNBENCH_CONCAT_(cnnbench_statusor_, __LINE__), lhs, \
                                        rexpr)

#endif  // CNNBENCH_CORE_STATUS_H_
