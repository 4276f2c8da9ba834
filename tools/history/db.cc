#include "tools/history/db.h"

#include <cmath>
#include <cstdlib>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace cnnbench::history {

Value Value::Real(double v) {
  Value x;
  if (!std::isfinite(v)) return x;
  x.kind = Kind::kReal;
  x.d = v;
  return x;
}

bool IsPostgresUri(absl::string_view spec) {
  return absl::StartsWith(spec, "postgresql://") || absl::StartsWith(spec, "postgres://");
}

absl::StatusOr<std::unique_ptr<Db>> OpenDb(const std::string& spec, bool create) {
  if (IsPostgresUri(spec)) return OpenPostgres(spec);
  return OpenSqlite(spec, create);
}

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

int64_t IntAt(const Row& row, size_t column) {
  if (column >= row.size() || !row[column]) return 0;
  int64_t v = 0;
  if (absl::SimpleAtoi(*row[column], &v)) return v;
  double d = 0;
  if (absl::SimpleAtod(*row[column], &d) && std::isfinite(d)) return static_cast<int64_t>(d);
  return 0;
}

double RealAt(const Row& row, size_t column) {
  if (column >= row.size() || !row[column]) return std::numeric_limits<double>::quiet_NaN();
  double d = 0;
  if (absl::SimpleAtod(*row[column], &d)) return d;
  return std::numeric_limits<double>::quiet_NaN();
}

std::string TextAt(const Row& row, size_t column) {
  if (column >= row.size() || !row[column]) return "";
  return *row[column];
}

}  // namespace cnnbench::history
