// The PostgreSQL store (tools/history/postgres_db.cc) against a real
// server: one throwaway server for the suite (tests/testing/pg_server.h),
// a fresh connection and tables per test.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "tests/testing/pg_server.h"
#include "tools/history/db.h"

namespace cnnbench::history {
namespace {

using ::cnnbench::testing::FindPostgresBinDir;
using ::cnnbench::testing::PgServer;
using ::cnnbench::testing::ProcessesUsing;

uint64_t Bits(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof(bits));
  return bits;
}

class PostgresDbTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::unique_ptr<PgServer>> started = PgServer::Start();
    if (started.ok()) {
      server_ = std::move(started).value().release();
      std::printf("server started in %.2f s\n",
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    } else {
      start_error_ = new absl::Status(started.status());
    }
  }
  static void TearDownTestSuite() {
    if (server_ != nullptr) {
      const std::string dir = server_->dir();
      delete server_;
      server_ = nullptr;
      EXPECT_TRUE(ProcessesUsing(dir).empty()) << "the server outlived its PgServer: " << dir;
    }
    delete start_error_;
    start_error_ = nullptr;
  }

  void SetUp() override {
    if (start_error_ != nullptr) {
      if (absl::IsNotFound(*start_error_)) GTEST_SKIP() << start_error_->message();
      FAIL() << *start_error_;
    }
    absl::StatusOr<std::unique_ptr<Db>> db = OpenPostgres(server_->uri());
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    ASSERT_TRUE(db_->ExecScript("DROP SCHEMA public CASCADE; CREATE SCHEMA public").ok());
  }

  std::vector<Row> Rows(absl::string_view sql, const std::vector<Value>& params = {}) {
    absl::StatusOr<std::vector<Row>> rows = db_->Query(sql, params);
    EXPECT_TRUE(rows.ok()) << rows.status();
    return rows.ok() ? *rows : std::vector<Row>();
  }
  int64_t Count(absl::string_view table) {
    const std::vector<Row> rows = Rows(absl::StrCat("SELECT count(*) FROM ", table));
    return rows.empty() ? -1 : IntAt(rows[0], 0);
  }

  static PgServer* server_;
  static absl::Status* start_error_;
  std::unique_ptr<Db> db_;
};

PgServer* PostgresDbTest::server_ = nullptr;
absl::Status* PostgresDbTest::start_error_ = nullptr;

TEST_F(PostgresDbTest, SaysItsDialectAndWhereItIs) {
  EXPECT_EQ(db_->dialect(), Db::Dialect::kPostgres);
  EXPECT_EQ(db_->where(), server_->uri());
  EXPECT_EQ(db_->RealType(), "DOUBLE PRECISION");
}

TEST_F(PostgresDbTest, NumbersOnlyThePlaceholdersOutsideLiteralsNamesAndComments) {
  const std::vector<Row> rows = Rows(
      "SELECT '?', ?, 'it''s ?' AS \"a ?\", E'\\'?', $$ ? $$, $t$?$t$, ? -- ?\n"
      " /* ? /* nested ? */ ? */ , CAST(? AS BIGINT) + 1",
      {Value::Text("one"), Value::Int(2), Value::Int(41)});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0], (Row{"?", "one", "it's ?", "'?", " ? ", "?", "2", "42"}));
}

TEST_F(PostgresDbTest, TooFewOrTooManyValuesAreAnError) {
  EXPECT_FALSE(db_->Query("SELECT CAST(? AS BIGINT)", {}).ok());
  EXPECT_FALSE(db_->Query("SELECT CAST(? AS BIGINT)", {Value::Int(1), Value::Int(2)}).ok());
  EXPECT_EQ(Rows("SELECT CAST(? AS BIGINT)", {Value::Int(3)}), (std::vector<Row>{{"3"}}));
}

TEST_F(PostgresDbTest, NumbersComeBackExactly) {
  ASSERT_TRUE(db_->Exec("CREATE TABLE t (k BIGINT, i BIGINT, d DOUBLE PRECISION)").ok());
  const double reals[] = {1.0 / 3,
                          1e-300,
                          123456789.123456789,
                          -0.0,
                          5e-324,  // the smallest denormal
                          std::numeric_limits<double>::max(),
                          0.1 + 0.2};
  const int64_t ints[] = {0, -1, std::numeric_limits<int64_t>::min(),
                          std::numeric_limits<int64_t>::max(), 1234567890123};
  for (int k = 0; k < 7; ++k)
    ASSERT_TRUE(db_->Exec("INSERT INTO t (k, i, d) VALUES (?, ?, ?)",
                          {Value::Int(k), Value::Int(ints[k % 5]), Value::Real(reals[k])})
                    .ok());
  const std::vector<Row> rows = Rows("SELECT i, d FROM t ORDER BY k");
  ASSERT_EQ(rows.size(), 7u);
  for (int k = 0; k < 7; ++k) {
    EXPECT_EQ(IntAt(rows[k], 0), ints[k % 5]) << k;
    EXPECT_EQ(Bits(RealAt(rows[k], 1)), Bits(reals[k])) << k << ": " << TextAt(rows[k], 1);
  }
  // A double compared on the server matches the one sent.
  EXPECT_EQ(Rows("SELECT k FROM t WHERE d = ?", {Value::Real(1.0 / 3)}), (std::vector<Row>{{"0"}}));
}

TEST_F(PostgresDbTest, NullsComeBackAsNull) {
  ASSERT_TRUE(db_->Exec("CREATE TABLE t (i BIGINT, d DOUBLE PRECISION, s TEXT)").ok());
  ASSERT_TRUE(db_->Exec("INSERT INTO t VALUES (?, ?, ?)",
                        {Value::Null(), Value::Real(std::nan("")), Value::OptText(std::nullopt)})
                  .ok());
  ASSERT_TRUE(
      db_->Exec("INSERT INTO t VALUES (?, ?, ?)", {Value::Int(0), Value::Real(0), Value::Text("")})
          .ok());
  const std::vector<Row> rows = Rows("SELECT i, d, s FROM t ORDER BY i NULLS FIRST");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (Row{std::nullopt, std::nullopt, std::nullopt}));
  EXPECT_EQ(rows[1], (Row{"0", "0", ""}));  // an empty text is not NULL
  EXPECT_TRUE(std::isnan(RealAt(rows[0], 1)));
}

TEST_F(PostgresDbTest, TextIsStoredAsItIs) {
  ASSERT_TRUE(db_->Exec("CREATE TABLE t (k BIGINT, s TEXT)").ok());
  const std::vector<std::string> texts = {
      "it's \"quoted\"",         "x'); DROP TABLE t; --",   "<script>alert('x&y')</script>",
      "résumé Ünïcödé 日本語 🚀", "back\\slash \\' $1 ? $$", "tab\tnew\nline\r",
      std::string(100000, 'x'),
  };
  for (size_t k = 0; k < texts.size(); ++k)
    ASSERT_TRUE(db_->Exec("INSERT INTO t VALUES (?, ?)",
                          {Value::Int(static_cast<int64_t>(k)), Value::Text(texts[k])})
                    .ok());
  const std::vector<Row> rows = Rows("SELECT s FROM t ORDER BY k");
  ASSERT_EQ(rows.size(), texts.size());
  for (size_t k = 0; k < texts.size(); ++k) EXPECT_EQ(TextAt(rows[k], 0), texts[k]) << k;
  EXPECT_EQ(Rows("SELECT k FROM t WHERE s = ?", {Value::Text(texts[1])}),
            (std::vector<Row>{{"1"}}));
  EXPECT_EQ(Rows("SELECT length(s) FROM t WHERE k = 3"), (std::vector<Row>{{"20"}}));  // characters

  const absl::Status nul = db_->Exec("INSERT INTO t VALUES (9, ?)", {Value::Text({"a\0b", 3})});
  EXPECT_TRUE(absl::IsInvalidArgument(nul)) << nul;
}

TEST_F(PostgresDbTest, BooleansReadAsOneOrZeroAsInSqlite) {
  EXPECT_EQ(Rows("SELECT 1 = 1, 1 = 2, CAST(NULL AS BOOLEAN)"),
            (std::vector<Row>{{"1", "0", std::nullopt}}));
}

TEST_F(PostgresDbTest, ARolledBackTransactionLeavesNothing) {
  ASSERT_TRUE(db_->Exec(absl::StrCat("CREATE TABLE t (id ", db_->IdColumn(), ", s TEXT)")).ok());
  ASSERT_TRUE(db_->Begin().ok());
  ASSERT_TRUE(db_->Exec("INSERT INTO t (s) VALUES (?)", {Value::Text("gone")}).ok());
  EXPECT_EQ(Count("t"), 1);
  ASSERT_TRUE(db_->Rollback().ok());
  EXPECT_EQ(Count("t"), 0);
  EXPECT_TRUE(db_->Rollback().ok());  // nothing open: nothing to do, as in SQLite

  ASSERT_TRUE(db_->Begin().ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(db_->Begin()));
  const std::vector<Row> ids =
      Rows("INSERT INTO t (s) VALUES (?) RETURNING id", {Value::Text("kept")});
  ASSERT_TRUE(db_->Commit().ok());
  EXPECT_EQ(Rows("SELECT id, s FROM t"), (std::vector<Row>{{TextAt(ids.at(0), 0), "kept"}}));
  EXPECT_TRUE(absl::IsFailedPrecondition(db_->Commit()));
}

TEST_F(PostgresDbTest, AUniqueViolationIsAlreadyExists) {
  ASSERT_TRUE(db_->Exec("CREATE TABLE t (name TEXT UNIQUE, n BIGINT)").ok());
  ASSERT_TRUE(db_->Exec("INSERT INTO t VALUES (?, 1)", {Value::Text("a")}).ok());
  const absl::Status twice = db_->Exec("INSERT INTO t VALUES (?, 2)", {Value::Text("a")});
  EXPECT_TRUE(absl::IsAlreadyExists(twice)) << twice;
  EXPECT_TRUE(absl::StrContains(twice.message(), db_->where())) << twice;
  EXPECT_TRUE(absl::StrContains(twice.message(), "23505")) << twice;
  // What concurrent writers use instead.
  EXPECT_TRUE(
      db_->Exec("INSERT INTO t VALUES (?, 3) ON CONFLICT DO NOTHING", {Value::Text("a")}).ok());
  EXPECT_EQ(Rows("SELECT n FROM t"), (std::vector<Row>{{"1"}}));
}

TEST_F(PostgresDbTest, ACommitAfterAFailedStatementSaysItRolledBack) {
  ASSERT_TRUE(db_->Exec("CREATE TABLE t (name TEXT UNIQUE)").ok());
  ASSERT_TRUE(db_->Begin().ok());
  ASSERT_TRUE(db_->Exec("INSERT INTO t VALUES ('a')").ok());
  EXPECT_FALSE(db_->Exec("INSERT INTO t VALUES ('a')").ok());
  const absl::Status later = db_->Exec("INSERT INTO t VALUES ('b')");
  EXPECT_TRUE(absl::IsAborted(later)) << later;  // the transaction is spoilt
  const absl::Status commit = db_->Commit();
  EXPECT_TRUE(absl::IsAborted(commit)) << commit;
  EXPECT_EQ(Count("t"), 0);
}

TEST_F(PostgresDbTest, ASyntaxErrorIsAnErrorAndTheConnectionGoesOn) {
  const absl::Status bad = db_->Exec("SELEC 1");
  EXPECT_TRUE(absl::IsInvalidArgument(bad)) << bad;
  EXPECT_TRUE(absl::StrContains(bad.message(), "syntax error")) << bad;
  EXPECT_TRUE(absl::StrContains(bad.message(), "SELEC 1")) << bad;
  const absl::Status no_table = db_->Exec("SELECT * FROM no_such_table");
  EXPECT_TRUE(absl::IsInvalidArgument(no_table)) << no_table;
  EXPECT_FALSE(db_->ExecScript("CREATE TABLE u (a INT); CREATE TABL v (b INT)").ok());
  EXPECT_EQ(Rows("SELECT 1"), (std::vector<Row>{{"1"}}));
  // A failed script runs as one transaction: u was not made either.
  EXPECT_FALSE(db_->Exec("SELECT * FROM u").ok());
}

TEST_F(PostgresDbTest, ACancelledStatementIsCancelled) {
  ASSERT_TRUE(db_->ExecScript("SET statement_timeout = 50").ok());
  const absl::Status slow = db_->Exec("SELECT pg_sleep(5)");
  EXPECT_TRUE(absl::IsCancelled(slow)) << slow;
}

TEST_F(PostgresDbTest, AScriptRunsEveryStatementAndKeepsPreparedOnesValid) {
  ASSERT_TRUE(db_->ExecScript("CREATE TABLE t (a BIGINT); INSERT INTO t VALUES (1);"
                              "INSERT INTO t VALUES (2)")
                  .ok());
  EXPECT_EQ(Rows("SELECT * FROM t ORDER BY a"), (std::vector<Row>{{"1"}, {"2"}}));
  // The cached statement's result changes shape with the table.
  ASSERT_TRUE(db_->ExecScript("ALTER TABLE t ADD COLUMN b TEXT DEFAULT 'x'").ok());
  EXPECT_EQ(Rows("SELECT * FROM t ORDER BY a"), (std::vector<Row>{{"1", "x"}, {"2", "x"}}));
  ASSERT_TRUE(db_->Exec("ALTER TABLE t DROP COLUMN b").ok());
  EXPECT_EQ(Rows("SELECT * FROM t ORDER BY a"), (std::vector<Row>{{"1"}, {"2"}}));
}

TEST_F(PostgresDbTest, ManyStatementsInOneTransaction) {
  ASSERT_TRUE(db_->Exec("CREATE TABLE t (k BIGINT PRIMARY KEY, d DOUBLE PRECISION)").ok());
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(db_->Begin().ok());
  constexpr int kRows = 5000;
  for (int k = 0; k < kRows; ++k)
    ASSERT_TRUE(
        db_->Exec("INSERT INTO t VALUES (?, ?)", {Value::Int(k), Value::Real(k / 7.0)}).ok());
  ASSERT_TRUE(db_->Commit().ok());
  std::printf("%d inserts in %.2f s\n", kRows,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  EXPECT_EQ(Count("t"), kRows);
}

TEST_F(PostgresDbTest, TheSameStoreTwiceSeesCommittedRows) {
  ASSERT_TRUE(db_->Exec("CREATE TABLE t (name TEXT PRIMARY KEY)").ok());
  absl::StatusOr<std::unique_ptr<Db>> other = OpenPostgres(server_->uri());
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_TRUE(db_->Begin().ok());
  ASSERT_TRUE(db_->Exec("INSERT INTO t VALUES ('a')").ok());
  EXPECT_EQ((*other)->Query("SELECT count(*) FROM t")->at(0), (Row{"0"}));
  ASSERT_TRUE(db_->Commit().ok());
  EXPECT_EQ((*other)->Query("SELECT count(*) FROM t")->at(0), (Row{"1"}));
  EXPECT_TRUE((*other)->Exec("INSERT INTO t VALUES ('a') ON CONFLICT DO NOTHING").ok());
}

TEST_F(PostgresDbTest, ALostConnectionIsUnavailable) {
  const std::vector<Row> pid = Rows("SELECT pg_backend_pid()");
  ASSERT_EQ(pid.size(), 1u);
  absl::StatusOr<std::unique_ptr<Db>> other = OpenPostgres(server_->uri());
  ASSERT_TRUE(other.ok()) << other.status();
  ASSERT_TRUE(
      (*other)
          ->Exec("SELECT pg_terminate_backend(CAST(? AS INTEGER))", {Value::Int(IntAt(pid[0], 0))})
          .ok());
  const absl::Status lost = db_->Exec("SELECT 1");
  EXPECT_TRUE(absl::IsUnavailable(lost)) << lost;
  EXPECT_TRUE(absl::IsUnavailable(db_->Exec("SELECT 2"))) << lost;
}

TEST_F(PostgresDbTest, AnEmptyStatementDoesNothing) {
  EXPECT_TRUE(db_->Query("").ok());
  EXPECT_TRUE(db_->ExecScript("-- nothing\n").ok());
}

TEST_F(PostgresDbTest, APasswordNeverShows) {
  // Trust authentication ignores the password; the messages must not show it.
  const std::string uri = absl::StrReplaceAll(server_->uri(), {{"postgres@", "postgres:s3cret@"}});
  absl::StatusOr<std::unique_ptr<Db>> db = OpenPostgres(uri);
  ASSERT_TRUE(db.ok()) << db.status();
  EXPECT_EQ((*db)->where(), absl::StrReplaceAll(uri, {{"s3cret", "***"}}));
  const absl::Status bad = (*db)->Exec("SELEC 1");
  EXPECT_FALSE(absl::StrContains(bad.message(), "s3cret")) << bad;
  EXPECT_TRUE(absl::StrContains(bad.message(), "postgres:***@")) << bad;

  absl::StatusOr<std::unique_ptr<Db>> in_query =
      OpenPostgres(absl::StrCat(server_->uri(), "&password=s3cret&dbname=no_such_db"));
  ASSERT_FALSE(in_query.ok());
  EXPECT_FALSE(absl::StrContains(in_query.status().message(), "s3cret")) << in_query.status();
}

TEST(PostgresDbConnectTest, NoServerGivesAClearMessage) {
  char folder[] = "/tmp/cnnbench_pg_none.XXXXXX";
  ASSERT_NE(mkdtemp(folder), nullptr);
  const std::string uri = absl::StrCat("postgresql://me:s3cret@/store?host=", folder, "&port=5");
  absl::StatusOr<std::unique_ptr<Db>> db = OpenPostgres(uri);
  rmdir(folder);
  ASSERT_FALSE(db.ok());
  EXPECT_TRUE(absl::IsUnavailable(db.status())) << db.status();
  const std::string expected = absl::StrCat(
      "cannot connect to the results store postgresql://me:***@/store?host=", folder, "&port=5: ");
  EXPECT_TRUE(absl::StartsWith(db.status().message(), expected)) << db.status();
  EXPECT_TRUE(absl::StrContains(db.status().message(), "No such file or directory")) << db.status();
  EXPECT_FALSE(absl::StrContains(db.status().message(), "s3cret")) << db.status();
}

TEST(PostgresDbConnectTest, AMalformedUriIsInvalid) {  // sslmode misspelt
  absl::StatusOr<std::unique_ptr<Db>> db = OpenPostgres("postgresql://u:pw@host/db?sslmod=require");
  ASSERT_FALSE(db.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(db.status())) << db.status();
  EXPECT_TRUE(absl::StrContains(db.status().message(), "not a PostgreSQL URI")) << db.status();
  EXPECT_FALSE(absl::StrContains(db.status().message(), "pw")) << db.status();
}

// Without libpq (dlopen()ed only when a postgresql:// store is opened) the
// store says what is missing and how to get it. CNNBENCH_LIBPQ names the
// library; the loader caches per name, so the other tests still get libpq.
TEST(PostgresDbConnectTest, AMissingLibpqGivesAClearMessage) {
  const char* before = std::getenv("CNNBENCH_LIBPQ");
  const std::string saved = before != nullptr ? before : "";
  ASSERT_EQ(setenv("CNNBENCH_LIBPQ", "libpq_cnnbench_missing.so.5", 1), 0);
  absl::StatusOr<std::unique_ptr<Db>> db = OpenPostgres("postgresql://me:s3cret@/store?port=5");
  absl::StatusOr<std::unique_ptr<Db>> again = OpenPostgres("postgresql:///store");
  if (before != nullptr) {
    setenv("CNNBENCH_LIBPQ", saved.c_str(), 1);
  } else {
    unsetenv("CNNBENCH_LIBPQ");
  }
  ASSERT_FALSE(db.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(db.status())) << db.status();
  EXPECT_TRUE(absl::StartsWith(db.status().message(),
                               "the PostgreSQL store (postgresql://me:***@/store?port=5) needs "
                               "libpq (Debian: apt install libpq5): "))
      << db.status();
  EXPECT_TRUE(absl::StrContains(db.status().message(), "libpq_cnnbench_missing.so.5"))
      << db.status();  // dlerror()'s reason
  EXPECT_FALSE(absl::StrContains(db.status().message(), "s3cret")) << db.status();
  // The failure is remembered, and says the same the second time.
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(again.status())) << again.status();
  EXPECT_TRUE(absl::StrContains(again.status().message(), "libpq_cnnbench_missing.so.5"))
      << again.status();
}

// The helper itself: a server's start and stop leave no process and no
// folder, also when the test process dies without stopping it.
TEST(PgServerTest, LeavesNothingBehind) {
  absl::StatusOr<std::unique_ptr<PgServer>> server = PgServer::Start();
  if (absl::IsNotFound(server.status())) GTEST_SKIP() << server.status().message();
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string dir = (*server)->dir();
  EXPECT_FALSE(ProcessesUsing(dir).empty());
  const auto start = std::chrono::steady_clock::now();
  server->reset();
  std::printf("server stopped in %.2f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  EXPECT_TRUE(ProcessesUsing(dir).empty());
  EXPECT_NE(access(dir.c_str(), F_OK), 0) << dir;
}

TEST(PgServerTest, DiesWithTheProcessThatStartedIt) {
  if (FindPostgresBinDir().empty()) GTEST_SKIP() << "no PostgreSQL server";
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // starts a server, then dies without stopping it
    absl::StatusOr<std::unique_ptr<PgServer>> server = PgServer::Start();
    const std::string dir = server.ok() ? (*server)->dir() : "";
    (void)!write(pipe_fds[1], dir.data(), dir.size());
    _exit(server.ok() ? 0 : 1);
  }
  close(pipe_fds[1]);
  char buffer[256] = {};
  const ssize_t got = read(pipe_fds[0], buffer, sizeof(buffer) - 1);
  close(pipe_fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const std::string dir(buffer, got > 0 ? got : 0);
  ASSERT_TRUE(absl::StartsWith(dir, "/tmp/cnnbench_pg.")) << dir;
  std::vector<pid_t> left = ProcessesUsing(dir);
  for (int tries = 0; tries < 500 && !left.empty(); ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    left = ProcessesUsing(dir);
  }
  EXPECT_TRUE(left.empty()) << left.size() << " processes still use " << dir;
  for (pid_t pid : left) kill(pid, SIGKILL);
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

}  // namespace
}  // namespace cnnbench::history
