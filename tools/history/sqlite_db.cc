// The SQLite store: one file, WAL mode (readers never block the writer),
// foreign keys on, a busy timeout so two runs ending at once queue rather
// than fail, and prepared statements cached by their SQL.
#include <sqlite3.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <map>

#include "absl/strings/str_cat.h"
#include "tools/history/db.h"

namespace cnnbench::history {
namespace {

// How long a writer waits for another's transaction before giving up.
constexpr int kBusyTimeoutMs = 60000;

// `db`: the connection whose message says what failed; null: `doing`
// already holds the database's message.
absl::Status SqliteError(sqlite3* db, const std::string& where, int code,
                         absl::string_view doing) {
  const std::string message =
      db != nullptr ? absl::StrCat("results store ", where, ": ", doing, ": ", sqlite3_errmsg(db))
                    : absl::StrCat("results store ", where, ": ", doing);
  switch (code & 0xff) {
    case SQLITE_FULL:
      return absl::ResourceExhaustedError(absl::StrCat(message, " (the disk is full)"));
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(
          absl::StrCat(message, " (another process held the store for ", kBusyTimeoutMs / 1000,
                       " s)"));
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return absl::DataLossError(
          absl::StrCat(message, " (not a cnnbench store, or a damaged one; it was left as it is)"));
    case SQLITE_CONSTRAINT:
      return absl::AlreadyExistsError(message);
    case SQLITE_INTERRUPT:
      return absl::CancelledError(message);
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_CANTOPEN:
      return absl::PermissionDeniedError(message);
    case SQLITE_ERROR:
      return absl::InvalidArgumentError(message);
    default:
      return absl::InternalError(message);
  }
}

class SqliteDb : public Db {
 public:
  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  ~SqliteDb() override {
    for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
    sqlite3_close_v2(db_);
  }

  Dialect dialect() const override { return Dialect::kSqlite; }
  const std::string& where() const override { return path_; }

  absl::StatusOr<std::vector<Row>> Query(absl::string_view sql,
                                         const std::vector<Value>& params) override {
    sqlite3_stmt* stmt = nullptr;
    const std::string key(sql);
    if (auto it = statements_.find(key); it != statements_.end()) {
      stmt = it->second;
    } else {
      const int rc = sqlite3_prepare_v2(db_, key.c_str(), static_cast<int>(key.size()), &stmt,
                                        nullptr);
      if (rc != SQLITE_OK) return SqliteError(db_, path_, rc, "preparing a statement");
      statements_.emplace(key, stmt);
    }
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
    if (static_cast<int>(params.size()) != sqlite3_bind_parameter_count(stmt))
      return absl::InternalError(absl::StrCat("results store ", path_, ": ", params.size(),
                                              " value(s) for ",
                                              sqlite3_bind_parameter_count(stmt),
                                              " placeholder(s)"));
    for (size_t i = 0; i < params.size(); ++i) {
      const Value& v = params[i];
      const int at = static_cast<int>(i) + 1;
      int rc = SQLITE_OK;
      switch (v.kind) {
        case Value::Kind::kNull: rc = sqlite3_bind_null(stmt, at); break;
        case Value::Kind::kInt: rc = sqlite3_bind_int64(stmt, at, v.i); break;
        case Value::Kind::kReal: rc = sqlite3_bind_double(stmt, at, v.d); break;
        case Value::Kind::kText:
          rc = sqlite3_bind_text(stmt, at, v.s.data(), static_cast<int>(v.s.size()),
                                 SQLITE_TRANSIENT);
          break;
      }
      if (rc != SQLITE_OK) return SqliteError(db_, path_, rc, "binding a value");
    }
    std::vector<Row> rows;
    for (;;) {
      const int rc = sqlite3_step(stmt);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) {
        absl::Status error = SqliteError(db_, path_, rc, "running a statement");
        sqlite3_reset(stmt);
        return error;
      }
      const int n = sqlite3_column_count(stmt);
      Row row(n);
      for (int c = 0; c < n; ++c) {
        switch (sqlite3_column_type(stmt, c)) {
          case SQLITE_NULL: break;
          case SQLITE_FLOAT: {
            char text[40];
            std::snprintf(text, sizeof(text), "%.17g", sqlite3_column_double(stmt, c));
            row[c] = text;
            break;
          }
          default: {
            const unsigned char* text = sqlite3_column_text(stmt, c);
            row[c] = std::string(reinterpret_cast<const char*>(text),
                                 static_cast<size_t>(sqlite3_column_bytes(stmt, c)));
          }
        }
      }
      rows.push_back(std::move(row));
    }
    sqlite3_reset(stmt);
    return rows;
  }

  absl::Status ExecScript(absl::string_view sql) override {
    char* error = nullptr;
    const std::string text(sql);
    const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
    if (rc == SQLITE_OK) return absl::OkStatus();
    std::string message = error != nullptr ? error : sqlite3_errstr(rc);
    sqlite3_free(error);
    return SqliteError(nullptr, path_, rc, message);
  }

  absl::Status Begin() override { return ExecScript("BEGIN IMMEDIATE"); }
  absl::Status Commit() override { return ExecScript("COMMIT"); }
  absl::Status Rollback() override {
    if (sqlite3_get_autocommit(db_)) return absl::OkStatus();  // nothing open
    return ExecScript("ROLLBACK");
  }

 private:
  sqlite3* db_;
  std::string path_;
  std::map<std::string, sqlite3_stmt*> statements_;
};

}  // namespace

absl::Status UseWal(Db& db) {
  if (db.dialect() != Db::Dialect::kSqlite) return absl::OkStatus();
  absl::StatusOr<std::vector<Row>> mode = db.Query("PRAGMA journal_mode=WAL");
  if (!mode.ok()) return mode.status();
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Db>> OpenSqlite(const std::string& path, bool create) {
  struct stat st;
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode))
    return absl::InvalidArgumentError(
        absl::StrCat("results store ", path, ": a folder, not a database file"));
  if (!exists && !create)
    return absl::NotFoundError(absl::StrCat("results store ", path, ": no such file"));
  sqlite3* db = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) |
                    SQLITE_OPEN_NOMUTEX;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    absl::Status error =
        db != nullptr ? SqliteError(db, path, rc, "opening")
                      : SqliteError(nullptr, path, rc, absl::StrCat("opening: ", sqlite3_errstr(rc)));
    sqlite3_close_v2(db);
    return error;
  }
  auto store = std::make_unique<SqliteDb>(db, path);
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  sqlite3_extended_result_codes(db, 0);
  // A 64 MiB page cache: an import touches each series' place in the
  // by-series indexes, which the default 2 MiB cache keeps rereading.
  // Reading the schema first tells a foreign file (SQLITE_NOTADB) before
  // anything would be written to it. These settings are the connection's
  // own; WAL, which the file keeps, is switched on by Store::Open once the
  // file is known to be a store (UseWal).
  if (absl::Status read = store->ExecScript("SELECT count(*) FROM sqlite_master"); !read.ok())
    return read;
  if (absl::Status pragmas =
          store->ExecScript("PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL; "
                            "PRAGMA cache_size=-65536");
      !pragmas.ok())
    return pragmas;
  return std::unique_ptr<Db>(std::move(store));
}

}  // namespace cnnbench::history
