#include "core/redact.h"

#include "absl/strings/str_cat.h"

namespace cnnbench {

std::string RedactedUri(absl::string_view uri) {
  // scheme://user:password@host... -> scheme://user:***@host...
  const size_t scheme = uri.find("://");
  if (scheme == absl::string_view::npos) return std::string(uri);
  const size_t start = scheme + 3;
  const size_t at = uri.find('@', start);
  const size_t slash = uri.find('/', start);
  std::string out(uri);
  if (at != absl::string_view::npos && (slash == absl::string_view::npos || at < slash)) {
    const size_t colon = uri.find(':', start);
    if (colon != absl::string_view::npos && colon < at)
      out = absl::StrCat(uri.substr(0, colon + 1), "***", uri.substr(at));
  }
  // A password given as a query parameter.
  const size_t q = out.find("password=");
  if (q != std::string::npos && q > 0 && (out[q - 1] == '?' || out[q - 1] == '&')) {
    const size_t end = out.find('&', q);
    out = absl::StrCat(out.substr(0, q), "password=***",
                       end == std::string::npos ? "" : out.substr(end));
  }
  return out;
}

}  // namespace cnnbench
