// Writes the dashboard of the test data (dashboard_fixture.h) into a folder,
// for tools/check_dashboard_html.sh to open in a browser.
//   dashboard_fixture OUT_DIR
#include <cstdio>
#include <string>
#include <vector>

#include "tests/tools/history/dashboard_fixture.h"
#include "tools/history/dashboard.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  std::vector<std::string> written;
  const absl::Status status = cnnbench::history::WriteDashboard(
      cnnbench::history::fixture::DashboardFixture(), argv[1], &written);
  if (!status.ok()) {
    std::fprintf(stderr, "dashboard_fixture: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  std::printf("dashboard_fixture: %zu files in %s\n", written.size(), argv[1]);
  return 0;
}
