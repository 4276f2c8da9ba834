// The store's schema (docs/history.md "Schema"), the same on SQLite and
// PostgreSQL, versioned in its `meta` table: a store written by a newer
// schema is refused, untouched; an older one is upgraded in a transaction.
#ifndef CNNBENCH_TOOLS_HISTORY_SCHEMA_H_
#define CNNBENCH_TOOLS_HISTORY_SCHEMA_H_

#include "absl/status/status.h"
#include "tools/history/db.h"

namespace cnnbench::history {

// The version this build writes and reads.
inline constexpr int kSchemaVersion = 1;

// Makes the schema in an empty database, or checks that a database holds a
// cnnbench store of a version this build reads (FailedPrecondition naming
// the store and both versions for a newer one; InvalidArgument for a
// database of someone else's tables, which is left as it is).
absl::Status EnsureSchema(Db& db);

// The statements that make schema version kSchemaVersion (for the docs'
// test, which checks docs/history.md lists every table).
std::string SchemaSql(const Db& db);

}  // namespace cnnbench::history

#endif  // CNNBENCH_TOOLS_HISTORY_SCHEMA_H_
