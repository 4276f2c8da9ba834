#include "tools/history/schema.h"

#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace cnnbench::history {
namespace {

// {id}: the dialect's auto-numbered key; {real}: its double type. Every
// text written by the suite is TEXT; times are ISO 8601 as the run wrote
// them; JSON columns hold an object as text.
constexpr const char* kSchema = R"sql(
CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE machines (
  id {id},
  fingerprint TEXT NOT NULL UNIQUE,
  platform TEXT NOT NULL,
  cpu_model TEXT,
  cpu_isa TEXT,
  host_cpus TEXT,
  memory_bytes TEXT,
  gpu_model TEXT,
  gpu_count TEXT,
  hosts TEXT,
  identity TEXT NOT NULL
);
CREATE TABLE runs (
  id {id},
  machine_id BIGINT NOT NULL REFERENCES machines(id),
  run_key TEXT NOT NULL UNIQUE,
  content_hash TEXT NOT NULL UNIQUE,
  date TEXT NOT NULL,
  unix_time BIGINT NOT NULL,
  imported_at TEXT NOT NULL,
  git_commit TEXT,
  dirty INTEGER NOT NULL,
  command_line TEXT,
  build TEXT,
  framework TEXT NOT NULL,
  settings_hash TEXT NOT NULL,
  interrupted TEXT,
  source TEXT NOT NULL,
  cases INTEGER NOT NULL
);
CREATE INDEX runs_by_machine ON runs (machine_id, unix_time);
CREATE TABLE run_context (
  run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  key_class TEXT NOT NULL,
  PRIMARY KEY (run_id, key)
);
CREATE TABLE cases (
  id {id},
  name TEXT NOT NULL UNIQUE,
  family TEXT NOT NULL,
  model TEXT,
  precision TEXT,
  data TEXT,
  batch BIGINT,
  gpus INTEGER,
  device TEXT,
  fields TEXT NOT NULL
);
CREATE TABLE series (
  id {id},
  machine_id BIGINT NOT NULL REFERENCES machines(id),
  case_id BIGINT NOT NULL REFERENCES cases(id),
  settings_hash TEXT NOT NULL,
  settings TEXT NOT NULL,
  counter TEXT NOT NULL,
  higher_is_better INTEGER NOT NULL,
  UNIQUE (machine_id, case_id, settings_hash)
);
CREATE TABLE results (
  run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  series_id BIGINT NOT NULL REFERENCES series(id),
  status TEXT NOT NULL,
  message TEXT,
  repetitions INTEGER NOT NULL,
  value {real},
  best {real},
  min_value {real},
  max_value {real},
  stddev {real},
  pruned INTEGER NOT NULL,
  PRIMARY KEY (run_id, series_id)
);
CREATE INDEX results_by_series ON results (series_id, run_id);
CREATE TABLE repetitions (
  run_id BIGINT NOT NULL,
  series_id BIGINT NOT NULL,
  kind TEXT NOT NULL,
  repetition INTEGER NOT NULL,
  value {real},
  counters TEXT NOT NULL,
  other TEXT NOT NULL,
  PRIMARY KEY (run_id, series_id, kind, repetition),
  FOREIGN KEY (run_id, series_id) REFERENCES results (run_id, series_id) ON DELETE CASCADE
);
CREATE INDEX repetitions_by_series ON repetitions (series_id, run_id);
CREATE TABLE annotations (
  id {id},
  machine_id BIGINT NOT NULL REFERENCES machines(id),
  series_id BIGINT REFERENCES series(id),
  run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  created_at TEXT NOT NULL,
  note TEXT NOT NULL
);
CREATE TABLE changes (
  id {id},
  series_id BIGINT NOT NULL REFERENCES series(id),
  before_run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  after_run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  ratio {real} NOT NULL,
  low {real} NOT NULL,
  high {real} NOT NULL,
  z {real} NOT NULL,
  regression INTEGER NOT NULL,
  method TEXT NOT NULL,
  cause TEXT NOT NULL,
  environment_diff TEXT NOT NULL,
  found_at TEXT NOT NULL,
  UNIQUE (series_id, after_run_id)
)
)sql";

absl::StatusOr<bool> HasTable(Db& db, const std::string& table) {
  const char* sql = db.dialect() == Db::Dialect::kSqlite
                        ? "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
                        : "SELECT count(*) FROM information_schema.tables WHERE table_name = ? "
                          "AND table_schema = current_schema()";
  absl::StatusOr<std::vector<Row>> rows = db.Query(sql, {Value::Text(table)});
  if (!rows.ok()) return rows.status();
  return !rows->empty() && IntAt(rows->front(), 0) > 0;
}

absl::StatusOr<int> TableCount(Db& db) {
  const char* sql = db.dialect() == Db::Dialect::kSqlite
                        ? "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
                        : "SELECT count(*) FROM information_schema.tables WHERE "
                          "table_schema = current_schema()";
  absl::StatusOr<std::vector<Row>> rows = db.Query(sql);
  if (!rows.ok()) return rows.status();
  return rows->empty() ? 0 : static_cast<int>(IntAt(rows->front(), 0));
}

}  // namespace

std::string SchemaSql(const Db& db) {
  return absl::StrReplaceAll(kSchema, {{"{id}", db.IdColumn()}, {"{real}", db.RealType()}});
}

absl::Status EnsureSchema(Db& db) {
  absl::StatusOr<bool> has_meta = HasTable(db, "meta");
  if (!has_meta.ok()) return has_meta.status();
  if (!*has_meta) {
    // Made in one transaction: a store is whole or absent. Two processes
    // making it at once: the second finds the first's.
    if (absl::Status begun = db.Begin(); !begun.ok()) return begun;
    // PostgreSQL's writers do not queue on BEGIN as SQLite's do: the first
    // to take this lock makes the schema, the others then find it. The
    // tables are counted only under the lock: a count taken while another
    // writer was making the schema found its tables without 'meta' and
    // called the store foreign (seen under ASan in store_test).
    if (db.dialect() == Db::Dialect::kPostgres) {
      if (absl::Status locked = db.Exec("SELECT pg_advisory_xact_lock(4707001)"); !locked.ok()) {
        db.Rollback().IgnoreError();
        return locked;
      }
    }
    absl::StatusOr<bool> raced = HasTable(db, "meta");
    if (raced.ok() && *raced) {
      if (absl::Status committed = db.Commit(); !committed.ok()) return committed;
      return EnsureSchema(db);  // the other writer's store: its version checked
    }
    absl::StatusOr<int> tables = TableCount(db);
    if (!tables.ok() || *tables > 0) {
      db.Rollback().IgnoreError();
      if (!tables.ok()) return tables.status();
      return absl::InvalidArgumentError(absl::StrCat(
          "results store ", db.where(), ": a database of ", *tables,
          " other table(s), not a cnnbench store; left as it is (give --store another file)"));
    }
    absl::Status made = db.ExecScript(SchemaSql(db));
    if (made.ok())
      made = db.Exec("INSERT INTO meta (key, value) VALUES ('schema_version', ?), "
                     "('created_by', 'cnnbench')",
                     {Value::Text(absl::StrCat(kSchemaVersion))});
    if (!made.ok()) {
      db.Rollback().IgnoreError();
      return made;
    }
    return db.Commit();
  }
  absl::StatusOr<std::vector<Row>> rows =
      db.Query("SELECT value FROM meta WHERE key = 'schema_version'");
  if (!rows.ok()) return rows.status();
  int version = 0;
  if (rows->empty() || !absl::SimpleAtoi(TextAt(rows->front(), 0), &version))
    return absl::InvalidArgumentError(absl::StrCat(
        "results store ", db.where(),
        ": has a 'meta' table without a schema version: not a cnnbench store; left as it is"));
  if (version > kSchemaVersion)
    return absl::FailedPreconditionError(absl::StrCat(
        "results store ", db.where(), ": written by a newer cnnbench (schema version ", version,
        "; this build reads up to ", kSchemaVersion,
        "); left as it is: update cnnbench, or give --store another file"));
  if (version < 1)
    return absl::InvalidArgumentError(absl::StrCat("results store ", db.where(),
                                                   ": schema version ", version, " is unknown"));
  return absl::OkStatus();
}

}  // namespace cnnbench::history
