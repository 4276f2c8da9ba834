// A throwaway PostgreSQL server for a test: a fresh cluster under /tmp,
// its postmaster this process's child on a Unix socket only (no TCP), and
// an empty database to connect to; stopped and removed by the destructor.
#ifndef CNNBENCH_TESTS_TESTING_PG_SERVER_H_
#define CNNBENCH_TESTS_TESTING_PG_SERVER_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace cnnbench::testing {

// The newest installed PostgreSQL's server programs (initdb, postgres),
// e.g. "/usr/lib/postgresql/15/bin", or "" when there are none.
std::string FindPostgresBinDir();

class PgServer {
 public:
  // Makes a cluster and starts it. NotFound when this machine has no
  // PostgreSQL server (the test skips with that message); any other error
  // is a failure. As root the server runs as Debian's `postgres` user
  // (initdb refuses root). The postmaster gets SIGQUIT (immediate
  // shutdown) if the thread that called Start ends first, so a crashed or
  // killed test leaves no server behind.
  static absl::StatusOr<std::unique_ptr<PgServer>> Start();
  // Stops the server (immediate shutdown) and removes its folder.
  ~PgServer();
  PgServer(const PgServer&) = delete;
  PgServer& operator=(const PgServer&) = delete;

  // "postgresql://postgres@/cnnbench_test?host=<socket_dir>&port=<port>".
  const std::string& uri() const { return uri_; }
  // The temporary folder: the cluster, the socket and the server's log.
  const std::string& dir() const { return dir_; }
  const std::string& socket_dir() const { return socket_dir_; }
  pid_t postmaster_pid() const { return pid_; }

 private:
  PgServer() = default;
  void Stop();

  std::string dir_;
  std::string socket_dir_;
  std::string uri_;
  pid_t pid_ = -1;
};

// The processes whose command line names `dir` or whose working folder is
// inside it (a server's backends rename themselves but work in its data
// folder): none should be left once a PgServer is gone.
std::vector<pid_t> ProcessesUsing(const std::string& dir);

}  // namespace cnnbench::testing

#endif  // CNNBENCH_TESTS_TESTING_PG_SERVER_H_
