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
