// The PostgreSQL store (a team's machines sharing one history): libpq, each
// `?` turned into $n, values sent as text, statements prepared once per
// connection and cached by their SQL, and SQLSTATEs turned into absl codes.
//
// libpq is loaded at run time (dlopen), when a postgresql:// store is first
// opened: binaries that store results neither link it nor need it (nor its
// ~24 libraries: OpenSSL, Kerberos, LDAP...) unless PostgreSQL is used. The
// header gives the types and constants only; every PQ* call goes through
// LibPq's pointers.
#include <dlfcn.h>
#include <postgresql/libpq-fe.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "tools/history/db.h"

namespace cnnbench::history {
namespace {

constexpr Oid kBoolOid = 16;  // pg_type.oid of boolean (catalog/pg_type_d.h)
// A server that cannot answer in this long is unreachable for our purposes.
constexpr char kConnectTimeoutSeconds[] = "10";
// GENERATED ... AS IDENTITY (Db::IdColumn) is PostgreSQL 10's.
constexpr int kOldestServer = 100000;

// The libpq functions used here.
// clang-format off
#define CNNBENCH_LIBPQ_FUNCTIONS(X)                                                     \
  X(PQclear) X(PQcmdStatus) X(PQconnectdbParams) X(PQconninfoFree)                      \
  X(PQconninfoParse) X(PQerrorMessage) X(PQexec) X(PQexecParams) X(PQexecPrepared)      \
  X(PQfinish) X(PQfreemem) X(PQftype) X(PQgetisnull) X(PQgetlength) X(PQgetvalue)       \
  X(PQnfields) X(PQntuples) X(PQparameterStatus) X(PQprepare) X(PQresultErrorField)     \
  X(PQresultErrorMessage) X(PQresultStatus) X(PQserverVersion) X(PQsetNoticeProcessor)  \
  X(PQstatus) X(PQtransactionStatus)
// clang-format on

// libpq's functions, looked up in the loaded library (decltype only names
// their types: nothing here refers to libpq's symbols at link time).
struct LibPq {
#define CNNBENCH_LIBPQ_POINTER(name) decltype(&::name) name = nullptr;
  CNNBENCH_LIBPQ_FUNCTIONS(CNNBENCH_LIBPQ_POINTER)
#undef CNNBENCH_LIBPQ_POINTER
};

// The library's name: $CNNBENCH_LIBPQ when set (tests name a missing one),
// else Debian's libpq5 (libpq.so.5 since PostgreSQL 8.2).
std::string LibPqName() {
  const char* name = std::getenv("CNNBENCH_LIBPQ");
  return name != nullptr && *name != '\0' ? name : "libpq.so.5";
}

// libpq's functions from the library `name`, loaded once per name (and per
// process; never unloaded), or dlerror()'s reason why not. Thread-safe.
absl::StatusOr<const LibPq*> LoadLibPq(const std::string& name) {
  struct Loaded {
    std::unique_ptr<LibPq> pq;  // null when loading failed
    std::string error;
  };
  static std::mutex* const mutex = new std::mutex;
  static auto* const loaded = new std::map<std::string, Loaded>;
  std::lock_guard<std::mutex> lock(*mutex);
  auto [it, added] = loaded->try_emplace(name);
  Loaded& entry = it->second;
  if (added) {
    auto DlError = [] {
      const char* error = dlerror();
      return std::string(error != nullptr ? error : "unknown dlopen error");
    };
    dlerror();  // clear any earlier error
    if (void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL); library == nullptr) {
      entry.error = DlError();
    } else {
      auto pq = std::make_unique<LibPq>();
      // A function's address is never null, so null means the symbol is missing.
#define CNNBENCH_LIBPQ_LOOKUP(name)                                        \
  if (entry.error.empty()) {                                               \
    pq->name = reinterpret_cast<decltype(&::name)>(dlsym(library, #name)); \
    if (pq->name == nullptr) entry.error = DlError();                      \
  }
      CNNBENCH_LIBPQ_FUNCTIONS(CNNBENCH_LIBPQ_LOOKUP)
#undef CNNBENCH_LIBPQ_LOOKUP
      if (entry.error.empty()) {
        entry.pq = std::move(pq);
      } else {
        dlclose(library);
      }
    }
  }
  if (entry.pq == nullptr) return absl::FailedPreconditionError(entry.error);
  return entry.pq.get();
}

using Result = std::unique_ptr<PGresult, void (*)(PGresult*)>;

// libpq's messages end in a newline and continue on tab-indented lines.
std::string OneLine(absl::string_view message) {
  return absl::StrReplaceAll(absl::StripTrailingAsciiWhitespace(message),
                             {{"\n\t", " "}, {"\n", " "}});
}

bool IsIdentifierChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         static_cast<unsigned char>(c) >= 0x80;
}

// Where the quoted text starting at `sql[i]` (a quote character) ends: one
// past its closing quote, or the end of `sql` when it is not closed (the
// server then reports the error). A doubled quote inside is one character,
// which scanning two quoted texts in a row gives for free; `backslashes`
// (E'...') makes a backslash escape the next character.
size_t SkipQuoted(absl::string_view sql, size_t i, bool backslashes) {
  const char quote = sql[i];
  for (++i; i < sql.size(); ++i) {
    if (backslashes && sql[i] == '\\') {
      ++i;
    } else if (sql[i] == quote) {
      return i + 1;
    }
  }
  return sql.size();
}

// The length of a dollar quote's tag ("$$", "$body$") at `sql[i]`, or 0.
size_t DollarTag(absl::string_view sql, size_t i) {
  if (i > 0 && IsIdentifierChar(sql[i - 1])) return 0;  // part of a name
  size_t j = i + 1;
  if (j < sql.size() && absl::ascii_isdigit(static_cast<unsigned char>(sql[j]))) return 0;  // $1
  while (j < sql.size() && IsIdentifierChar(sql[j]) && sql[j] != '$') ++j;
  return j < sql.size() && sql[j] == '$' ? j + 1 - i : 0;
}

// One past the end of the literal, quoted name or comment starting at
// `sql[i]`, or `i` when none starts there.
size_t SkipNonCode(absl::string_view sql, size_t i) {
  const char c = sql[i];
  const char next = i + 1 < sql.size() ? sql[i + 1] : '\0';
  if (c == '\'') {
    const bool escape = i > 0 && (sql[i - 1] == 'E' || sql[i - 1] == 'e') &&
                        (i < 2 || !IsIdentifierChar(sql[i - 2]));
    return SkipQuoted(sql, i, escape);
  }
  if (c == '"') return SkipQuoted(sql, i, false);
  if (c == '-' && next == '-') {
    const size_t end = sql.find('\n', i);
    return end == absl::string_view::npos ? sql.size() : end + 1;
  }
  if (c == '/' && next == '*') {  // PostgreSQL's block comments nest
    int depth = 0;
    for (size_t j = i; j + 1 < sql.size(); ++j) {
      if (sql[j] == '/' && sql[j + 1] == '*') {
        ++depth;
        ++j;
      } else if (sql[j] == '*' && sql[j + 1] == '/') {
        ++j;
        if (--depth == 0) return j + 1;
      }
    }
    return sql.size();
  }
  if (c == '$') {
    if (const size_t tag = DollarTag(sql, i); tag > 0) {
      const size_t end = sql.find(sql.substr(i, tag), i + tag);
      return end == absl::string_view::npos ? sql.size() : end + tag;
    }
  }
  return i;
}

// A statement in PostgreSQL's words: each `?` outside literals, quoted
// names and comments numbered $1, $2, ...
struct Statement {
  std::string sql;
  int placeholders = 0;
  bool reads_or_writes_rows = false;  // DML, worth preparing; else DDL and such
};

Statement Translate(absl::string_view sql) {
  Statement out;
  out.sql.reserve(sql.size() + 8);
  std::string first_word;
  for (size_t i = 0; i < sql.size();) {
    if (const size_t end = SkipNonCode(sql, i); end != i) {
      out.sql.append(sql.data() + i, end - i);
      i = end;
      continue;
    }
    if (first_word.empty() && absl::ascii_isalpha(static_cast<unsigned char>(sql[i]))) {
      size_t j = i;
      while (j < sql.size() && absl::ascii_isalpha(static_cast<unsigned char>(sql[j]))) ++j;
      first_word = absl::AsciiStrToUpper(sql.substr(i, j - i));
    }
    if (sql[i] == '?') {
      absl::StrAppend(&out.sql, "$", ++out.placeholders);
    } else {
      out.sql += sql[i];
    }
    ++i;
  }
  for (const char* dml : {"SELECT", "INSERT", "UPDATE", "DELETE", "WITH", "VALUES"})
    out.reads_or_writes_rows = out.reads_or_writes_rows || first_word == dml;
  return out;
}

// The absl code for a SQLSTATE (PostgreSQL's appendix A).
absl::StatusCode CodeOf(absl::string_view state) {
  const absl::string_view kind = state.substr(0, 2);
  if (state == "23505") return absl::StatusCode::kAlreadyExists;  // unique_violation
  if (state == "57014") return absl::StatusCode::kCancelled;      // query_canceled
  if (state == "42501") return absl::StatusCode::kPermissionDenied;
  if (state == "25P02") return absl::StatusCode::kAborted;  // in_failed_sql_transaction
  if (kind == "08" || absl::StartsWith(state, "57P")) return absl::StatusCode::kUnavailable;
  if (kind == "53") return absl::StatusCode::kResourceExhausted;   // 53100 disk_full, memory
  if (kind == "40") return absl::StatusCode::kAborted;             // serialization, deadlock: retry
  if (kind == "23") return absl::StatusCode::kFailedPrecondition;  // other constraints
  if (kind == "28") return absl::StatusCode::kPermissionDenied;
  if (kind == "42" || kind == "22") return absl::StatusCode::kInvalidArgument;  // syntax, data
  return absl::StatusCode::kInternal;
}

class PostgresDb : public Db {
 public:
  PostgresDb(const LibPq& pq, PGconn* conn, std::string where)
      : pq_(pq), conn_(conn), where_(std::move(where)) {}
  ~PostgresDb() override { pq_.PQfinish(conn_); }

  Dialect dialect() const override { return Dialect::kPostgres; }
  const std::string& where() const override { return where_; }

  absl::StatusOr<std::vector<Row>> Query(absl::string_view sql,
                                         const std::vector<Value>& params) override;
  absl::Status ExecScript(absl::string_view sql) override;

  absl::Status Begin() override {
    if (pq_.PQtransactionStatus(conn_) != PQTRANS_IDLE)
      return Error(absl::StatusCode::kFailedPrecondition, "BEGIN: a transaction is already open");
    return Command("BEGIN");
  }
  absl::Status Commit() override;
  absl::Status Rollback() override {
    if (pq_.PQtransactionStatus(conn_) == PQTRANS_IDLE) return absl::OkStatus();  // nothing open
    return Command("ROLLBACK");
  }

  // Sets the session up: no notices on stderr, doubles printed exactly.
  absl::Status Configure() {
    pq_.PQsetNoticeProcessor(
        conn_, [](void*, const char*) {}, nullptr);
    if (pq_.PQserverVersion(conn_) < kOldestServer)
      return Error(
          absl::StatusCode::kFailedPrecondition,
          absl::StrCat("the server is PostgreSQL ", pq_.PQparameterStatus(conn_, "server_version"),
                       "; the store needs 10 or newer"));
    // 3 (the most): 17 significant digits before PostgreSQL 12, the
    // shortest exact text since; either reads back to the same double.
    return Command("SET extra_float_digits = 3");
  }

 private:
  struct Prepared {
    std::string name;
    int placeholders = 0;
  };

  absl::Status Error(absl::StatusCode code, absl::string_view message) const {
    return absl::Status(code, absl::StrCat("results store ", where_, ": ", message));
  }
  // The error of a failed `result` (nullptr: libpq's own, on the connection).
  absl::Status ResultError(const PGresult* result, absl::string_view sql) const;
  // Runs a statement without parameters or results.
  absl::Status Command(const char* sql) {
    Result result = Wrap(pq_.PQexec(conn_, sql));
    if (pq_.PQresultStatus(result.get()) == PGRES_COMMAND_OK) return absl::OkStatus();
    return ResultError(result.get(), sql);
  }
  absl::StatusOr<const Prepared*> Prepare(absl::string_view sql, const Statement& statement);
  // A statement other than DML may change what a prepared one returns (a
  // column added or dropped): prepare them all again.
  void ForgetPrepared() {
    if (statements_.empty()) return;
    statements_.clear();
    Wrap(pq_.PQexec(conn_,
                    "DEALLOCATE ALL"));  // names are never reused, so failing here is harmless
  }
  absl::StatusOr<std::vector<Row>> Rows(Result result, absl::string_view sql) const;
  Result Wrap(PGresult* result) const { return Result(result, pq_.PQclear); }

  const LibPq& pq_;
  PGconn* conn_;
  std::string where_;
  std::map<std::string, Prepared, std::less<>> statements_;  // by the caller's SQL
  int next_name_ = 0;
};

absl::Status PostgresDb::ResultError(const PGresult* result, absl::string_view sql) const {
  if (pq_.PQstatus(conn_) == CONNECTION_BAD)
    return Error(absl::StatusCode::kUnavailable, absl::StrCat("lost the connection to the server: ",
                                                              OneLine(pq_.PQerrorMessage(conn_))));
  const char* state =
      result != nullptr ? pq_.PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  const char* primary =
      result != nullptr ? pq_.PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
  std::string message = primary != nullptr ? primary
                        : result != nullptr && *pq_.PQresultErrorMessage(result) != '\0'
                            ? OneLine(pq_.PQresultErrorMessage(result))
                            : OneLine(pq_.PQerrorMessage(conn_));
  if (const char* detail =
          result ? pq_.PQresultErrorField(result, PG_DIAG_MESSAGE_DETAIL) : nullptr)
    absl::StrAppend(&message, " (", OneLine(detail), ")");
  if (state != nullptr) absl::StrAppend(&message, " [SQLSTATE ", state, "]");
  if (state != nullptr && absl::string_view(state) == "53100")
    absl::StrAppend(&message, " (the server's disk is full)");
  constexpr size_t kShownSql = 200;
  absl::StrAppend(&message, " in: ", OneLine(sql.substr(0, kShownSql)),
                  sql.size() > kShownSql ? "..." : "");
  return Error(state != nullptr ? CodeOf(state) : absl::StatusCode::kInternal, message);
}

absl::StatusOr<const PostgresDb::Prepared*> PostgresDb::Prepare(absl::string_view sql,
                                                                const Statement& statement) {
  Prepared prepared{absl::StrCat("cnnbench_", next_name_++), statement.placeholders};
  Result result = Wrap(pq_.PQprepare(conn_, prepared.name.c_str(), statement.sql.c_str(),
                                     statement.placeholders, nullptr));
  if (pq_.PQresultStatus(result.get()) != PGRES_COMMAND_OK) return ResultError(result.get(), sql);
  return &statements_.emplace(std::string(sql), std::move(prepared)).first->second;
}

absl::StatusOr<std::vector<Row>> PostgresDb::Query(absl::string_view sql,
                                                   const std::vector<Value>& params) {
  // Parameters the server infers from the SQL (type 0): the same text goes
  // into an integer, a double or a text column as it would in SQLite.
  const Prepared* prepared = nullptr;
  std::optional<Statement> unprepared;
  if (auto it = statements_.find(sql); it != statements_.end()) {
    prepared = &it->second;
  } else if (Statement statement = Translate(sql); statement.reads_or_writes_rows) {
    absl::StatusOr<const Prepared*> made = Prepare(sql, statement);
    if (!made.ok()) return made.status();
    prepared = *made;
  } else {
    unprepared = std::move(statement);
  }
  const int placeholders = prepared != nullptr ? prepared->placeholders : unprepared->placeholders;
  if (static_cast<int>(params.size()) != placeholders)
    return Error(absl::StatusCode::kInternal,
                 absl::StrCat(params.size(), " value(s) for ", placeholders,
                              " placeholder(s) in: ", OneLine(sql)));
  std::vector<std::string> text(params.size());
  std::vector<const char*> values(params.size(), nullptr);
  for (size_t i = 0; i < params.size(); ++i) {
    const Value& v = params[i];
    switch (v.kind) {
      case Value::Kind::kNull:
        break;
      case Value::Kind::kInt:
        text[i] = absl::StrCat(v.i);
        break;
      case Value::Kind::kReal: {
        if (!std::isfinite(v.d)) break;  // NULL, as Value::Real makes it
        char digits[32];
        std::snprintf(digits, sizeof(digits), "%.17g", v.d);
        text[i] = digits;
        break;
      }
      case Value::Kind::kText:
        if (v.s.find('\0') != std::string::npos)
          return Error(absl::StatusCode::kInvalidArgument,
                       "a text value holds a NUL byte, which PostgreSQL cannot store");
        text[i] = v.s;
        break;
    }
    if (v.kind != Value::Kind::kNull && !(v.kind == Value::Kind::kReal && !std::isfinite(v.d)))
      values[i] = text[i].c_str();
  }
  const int n = static_cast<int>(values.size());
  if (prepared != nullptr)
    return Rows(Wrap(pq_.PQexecPrepared(conn_, prepared->name.c_str(), n, values.data(), nullptr,
                                        nullptr, 0)),
                sql);
  absl::StatusOr<std::vector<Row>> rows =
      Rows(Wrap(pq_.PQexecParams(conn_, unprepared->sql.c_str(), n, nullptr, values.data(), nullptr,
                                 nullptr, 0)),
           sql);
  if (rows.ok()) ForgetPrepared();
  return rows;
}

absl::StatusOr<std::vector<Row>> PostgresDb::Rows(Result result, absl::string_view sql) const {
  const ExecStatusType status = pq_.PQresultStatus(result.get());
  if (status == PGRES_COMMAND_OK || status == PGRES_EMPTY_QUERY) return std::vector<Row>();
  if (status != PGRES_TUPLES_OK) return ResultError(result.get(), sql);
  const int rows = pq_.PQntuples(result.get());
  const int columns = pq_.PQnfields(result.get());
  std::vector<Row> out(rows, Row(columns));
  for (int c = 0; c < columns; ++c) {
    // A boolean reads as SQLite's 1 or 0, not 't' or 'f' (IntAt reads it).
    const bool boolean = pq_.PQftype(result.get(), c) == kBoolOid;
    for (int r = 0; r < rows; ++r) {
      if (pq_.PQgetisnull(result.get(), r, c)) continue;
      const char* value = pq_.PQgetvalue(result.get(), r, c);
      if (boolean) {
        out[r][c] = *value == 't' ? "1" : "0";
      } else {
        out[r][c] = std::string(value, pq_.PQgetlength(result.get(), r, c));
      }
    }
  }
  return out;
}

absl::Status PostgresDb::ExecScript(absl::string_view sql) {
  const std::string text(sql);
  Result result = Wrap(pq_.PQexec(conn_, text.c_str()));
  const ExecStatusType status = pq_.PQresultStatus(result.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK && status != PGRES_EMPTY_QUERY)
    return ResultError(result.get(), sql);
  ForgetPrepared();
  return absl::OkStatus();
}

absl::Status PostgresDb::Commit() {
  switch (pq_.PQtransactionStatus(conn_)) {
    case PQTRANS_IDLE:
      return Error(absl::StatusCode::kFailedPrecondition, "COMMIT: no transaction is open");
    case PQTRANS_INERROR:
      // PostgreSQL would answer COMMIT with a silent ROLLBACK.
      if (absl::Status rolled_back = Command("ROLLBACK"); !rolled_back.ok()) return rolled_back;
      return Error(absl::StatusCode::kAborted,
                   "COMMIT: a statement in the transaction had failed, so it was rolled back");
    default:
      break;
  }
  Result result = Wrap(pq_.PQexec(conn_, "COMMIT"));
  if (pq_.PQresultStatus(result.get()) != PGRES_COMMAND_OK)
    return ResultError(result.get(), "COMMIT");
  if (absl::string_view(pq_.PQcmdStatus(result.get())) == "ROLLBACK")
    return Error(absl::StatusCode::kAborted, "COMMIT: the server rolled the transaction back");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Db>> OpenPostgres(const std::string& uri) {
  const std::string where = RedactedUri(uri);
  absl::StatusOr<const LibPq*> loaded = LoadLibPq(LibPqName());
  if (!loaded.ok())
    return absl::FailedPreconditionError(
        absl::StrCat("the PostgreSQL store (", where,
                     ") needs libpq (Debian: apt install libpq5): ", loaded.status().message()));
  const LibPq& pq = **loaded;
  char* parse_error = nullptr;
  if (PQconninfoOption* options = pq.PQconninfoParse(uri.c_str(), &parse_error);
      options != nullptr) {
    pq.PQconninfoFree(options);
  } else {
    const std::string why = parse_error != nullptr ? OneLine(parse_error) : "out of memory";
    pq.PQfreemem(parse_error);
    return absl::InvalidArgumentError(
        absl::StrCat("results store ", where, ": not a PostgreSQL URI: ", why));
  }
  // Later entries override earlier ones: the URI may set its own timeout,
  // but not the encoding, which must be UTF-8 to hand the text back as-is.
  const char* keys[] = {"connect_timeout", "fallback_application_name", "dbname", "client_encoding",
                        nullptr};
  const char* values[] = {kConnectTimeoutSeconds, "cnnbench", uri.c_str(), "UTF8", nullptr};
  PGconn* conn = pq.PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (conn == nullptr)
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot connect to the results store ", where, ": out of memory"));
  if (pq.PQstatus(conn) != CONNECTION_OK) {
    const std::string why = OneLine(pq.PQerrorMessage(conn));
    pq.PQfinish(conn);
    return absl::UnavailableError(
        absl::StrCat("cannot connect to the results store ", where, ": ", why));
  }
  auto db = std::make_unique<PostgresDb>(pq, conn, where);
  if (absl::Status configured = db->Configure(); !configured.ok()) return configured;
  return db;
}

}  // namespace cnnbench::history
