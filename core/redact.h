// Passwords kept out of what the suite prints and records: a database URI
// ("postgresql://user:secret@host/db") as it is shown in messages and in
// the recorded command line.
#ifndef CNNBENCH_CORE_REDACT_H_
#define CNNBENCH_CORE_REDACT_H_

#include <string>

#include "absl/strings/string_view.h"

namespace cnnbench {

// `uri` with a password in its user part or its query (password=...)
// replaced by "***"; any other text unchanged.
std::string RedactedUri(absl::string_view uri);

}  // namespace cnnbench

#endif  // CNNBENCH_CORE_REDACT_H_
