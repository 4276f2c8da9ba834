#include "tests/testing/pg_server.h"

#include <fcntl.h>
#include <grp.h>
#include <postgresql/libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace cnnbench::testing {
namespace {

constexpr char kDatabase[] = "cnnbench_test";
constexpr char kSuperuser[] = "postgres";
// Generous: the machine is shared, and a sanitized test is slow anyway.
constexpr auto kStartTimeout = std::chrono::seconds(60);
constexpr auto kStopTimeout = std::chrono::seconds(15);

// Who runs the server's programs: this process's user, or postgres as root.
struct Account {
  bool switch_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
};

absl::StatusOr<Account> ServerAccount() {
  Account account;
  if (geteuid() != 0) return account;
  const passwd* pw = getpwnam(kSuperuser);
  if (pw == nullptr)
    return absl::FailedPreconditionError(
        "running as root, and there is no `postgres` user to run a test server as (initdb "
        "refuses root; Debian's postgresql package makes that user)");
  account.switch_user = true;
  account.uid = pw->pw_uid;
  account.gid = pw->pw_gid;
  return account;
}

bool IsServerBinDir(const std::string& dir) {
  return access((dir + "/initdb").c_str(), X_OK) == 0 &&
         access((dir + "/postgres").c_str(), X_OK) == 0;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The last lines of the server's log, for an error.
std::string LogTail(const std::string& log) {
  std::vector<std::string> lines = absl::StrSplit(ReadFile(log), '\n', absl::SkipEmpty());
  if (lines.size() > 15) lines.erase(lines.begin(), lines.end() - 15);
  return absl::StrCat("; ", log, " ends:\n", absl::StrJoin(lines, "\n"));
}

// Starts `argv` as `account` in `cwd` (the server's user may not enter the
// test's own folder), stdin from /dev/null, stdout and stderr to `log`.
// With `die_with_parent` the program gets SIGQUIT when the calling thread
// ends: for the postmaster, an immediate shutdown.
absl::StatusOr<pid_t> Spawn(const std::vector<std::string>& argv, const Account& account,
                            const std::string& cwd, const std::string& log, bool die_with_parent) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (out < 0 || in < 0) return absl::InternalError(absl::StrCat("cannot open ", log));
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // The child: only async-signal-safe calls until exec.
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0) _exit(126);
    if (account.switch_user &&
        (setgroups(1, &account.gid) != 0 || setgid(account.gid) != 0 || setuid(account.uid) != 0))
      _exit(126);
    // After setuid, which clears the death signal.
    if (die_with_parent && (prctl(PR_SET_PDEATHSIG, SIGQUIT) != 0 || getppid() != parent))
      _exit(126);
    if (chdir(cwd.c_str()) != 0) _exit(126);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out);
  close(in);
  if (pid < 0) return absl::InternalError(absl::StrCat("cannot fork for ", argv[0]));
  return pid;
}

// Waits up to `limit` for `pid`; true (and its wait status) when it ended.
bool WaitFor(pid_t pid, std::chrono::milliseconds limit, int* status) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    const pid_t done = waitpid(pid, status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string DescribeExit(int status) {
  if (WIFEXITED(status)) return absl::StrCat("exit status ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return absl::StrCat("signal ", WTERMSIG(status));
  return "ended";
}

// Runs `argv` to its end; an error with the log's tail unless it succeeded.
absl::Status Run(const std::vector<std::string>& argv, const Account& account,
                 const std::string& cwd, const std::string& log) {
  absl::StatusOr<pid_t> pid = Spawn(argv, account, cwd, log, /*die_with_parent=*/false);
  if (!pid.ok()) return pid.status();
  int status = 0;
  while (waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat(absl::StrJoin(argv, " "), ": ", DescribeExit(status), LogTail(log)));
}

// A port number no other server of this machine's tests uses at the same
// time. It names the socket file (in a folder of our own) and PostgreSQL's
// shared-memory key; nothing listens on TCP.
int PortNumber() {
  static std::atomic<int> servers{0};
  return 20000 + (getpid() * 7 + servers++) % 40000;
}

}  // namespace

std::string FindPostgresBinDir() {
  // Debian keeps the server's programs out of PATH, one folder per major
  // version; elsewhere (Fedora, Homebrew) they are on PATH.
  std::string best;
  double best_version = -1;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/usr/lib/postgresql", error)) {
    double version = 0;
    const std::string bin = entry.path().string() + "/bin";
    if (absl::SimpleAtod(entry.path().filename().string(), &version) && version > best_version &&
        IsServerBinDir(bin)) {
      best = bin;
      best_version = version;
    }
  }
  if (!best.empty()) return best;
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path != nullptr ? path : "", ':', absl::SkipEmpty()))
    if (IsServerBinDir(std::string(dir))) return std::string(dir);
  return "";
}

absl::StatusOr<std::unique_ptr<PgServer>> PgServer::Start() {
  const std::string bin = FindPostgresBinDir();
  if (bin.empty())
    return absl::NotFoundError(
        "no PostgreSQL server on this machine (initdb and postgres under "
        "/usr/lib/postgresql/*/bin or on PATH; ./bazelw installs Debian's postgresql)");
  absl::StatusOr<Account> account = ServerAccount();
  if (!account.ok()) return account.status();

  // Under /tmp: TEST_TMPDIR may lie under /root, which postgres cannot
  // enter, and a socket's path must stay under 108 bytes.
  char folder[] = "/tmp/cnnbench_pg.XXXXXX";
  if (mkdtemp(folder) == nullptr) return absl::InternalError("cannot make a folder under /tmp");
  std::unique_ptr<PgServer> server(new PgServer());  // from here the destructor cleans up
  server->dir_ = folder;
  server->socket_dir_ = server->dir_ + "/socket";
  const std::string data = server->dir_ + "/data";
  const std::string log = server->dir_ + "/server.log";
  if (mkdir(server->socket_dir_.c_str(), 0700) != 0 ||
      (account->switch_user &&
       (chown(folder, account->uid, account->gid) != 0 ||
        chown(server->socket_dir_.c_str(), account->uid, account->gid) != 0)))
    return absl::InternalError(absl::StrCat("cannot prepare ", folder, " for the server"));

  if (absl::Status made = Run({bin + "/initdb", "-D", data, "-A", "trust", "-U", kSuperuser,
                               "--no-sync", "-E", "UTF8", "--locale=C"},
                              *account, server->dir_, log);
      !made.ok())
    return made;

  const int port = PortNumber();
  // The postmaster itself, not pg_ctl's detached one: as this process's
  // child it dies with the test (SIGQUIT on the parent's death).
  absl::StatusOr<pid_t> pid =
      Spawn({bin + "/postgres", "-D", data, "-k", server->socket_dir_, "-p", absl::StrCat(port),
             "-c", "listen_addresses=", "-c", "fsync=off", "-c", "full_page_writes=off", "-c",
             "synchronous_commit=off"},
            *account, server->dir_, log, /*die_with_parent=*/true);
  if (!pid.ok()) return pid.status();
  server->pid_ = *pid;

  const std::string conninfo = absl::StrCat("host=", server->socket_dir_, " port=", port,
                                            " user=", kSuperuser, " dbname=postgres");
  const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  while (PQping(conninfo.c_str()) != PQPING_OK) {
    int status = 0;
    if (waitpid(server->pid_, &status, WNOHANG) == server->pid_) {
      server->pid_ = -1;
      return absl::InternalError(
          absl::StrCat("the test's PostgreSQL server ended: ", DescribeExit(status), LogTail(log)));
    }
    if (std::chrono::steady_clock::now() > deadline)
      return absl::DeadlineExceededError(
          absl::StrCat("the test's PostgreSQL server did not start in 60 s", LogTail(log)));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  PGconn* conn = PQconnectdb(conninfo.c_str());
  PGresult* created = PQexec(conn, absl::StrCat("CREATE DATABASE ", kDatabase).c_str());
  const bool ok = PQresultStatus(created) == PGRES_COMMAND_OK;
  const std::string why = PQerrorMessage(conn);
  PQclear(created);
  PQfinish(conn);
  if (!ok) return absl::InternalError(absl::StrCat("cannot create the test database: ", why));

  server->uri_ = absl::StrCat("postgresql://", kSuperuser, "@/", kDatabase,
                              "?host=", server->socket_dir_, "&port=", port);
  return server;
}

PgServer::~PgServer() { Stop(); }

void PgServer::Stop() {
  if (pid_ > 0) {
    // Immediate shutdown (pg_ctl stop -m immediate): the postmaster ends
    // its backends, waits for them, then exits; the data is thrown away.
    kill(pid_, SIGQUIT);
    int status = 0;
    if (!WaitFor(pid_, kStopTimeout, &status)) {
      kill(pid_, SIGKILL);
      WaitFor(pid_, kStopTimeout, &status);
    }
    pid_ = -1;
  }
  if (!dir_.empty()) {
    std::error_code error;
    std::filesystem::remove_all(dir_, error);
  }
}

std::vector<pid_t> ProcessesUsing(const std::string& dir) {
  std::vector<pid_t> found;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    int pid = 0;
    if (!absl::SimpleAtoi(entry.path().filename().string(), &pid) || pid == getpid()) continue;
    std::string command = ReadFile(entry.path().string() + "/cmdline");
    for (char& c : command)
      if (c == '\0') c = ' ';
    std::error_code no_cwd;
    const std::string cwd = std::filesystem::read_symlink(entry.path() / "cwd", no_cwd).string();
    if (absl::StrContains(command, dir) || cwd == dir || absl::StartsWith(cwd, dir + "/"))
      found.push_back(pid);
  }
  return found;
}

}  // namespace cnnbench::testing
