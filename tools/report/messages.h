// What a reader sees of a case's error message: the reason first and once,
// without the file:line prefixes that Status chains collect on the way up.
#ifndef CNNBENCH_TOOLS_REPORT_MESSAGES_H_
#define CNNBENCH_TOOLS_REPORT_MESSAGES_H_

#include <string>

#include "absl/strings/string_view.h"

namespace cnnbench::report {

// "bench/cases/train/train_cases.cc:56: train/trainer.cc:75: unsupported: bf16 needs
// avx512_bf16" -> "unsupported: bf16 needs avx512_bf16";
// "OOM: train/executor.cc:90: OOM: needs 32 GB" -> "OOM: needs 32 GB".
// Drops every ": "-separated part that is a source location (file.cc:NN) and
// every later repeat of the leading reason word.
std::string UserMessage(absl::string_view raw);

// A failed case's footnote: the user message, after "skipped: " unless it
// already says why it was skipped ("unsupported: ...").
std::string FailureNote(absl::string_view raw);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_MESSAGES_H_
