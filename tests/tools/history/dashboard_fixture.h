// A DashboardData for the dashboard's tests and its browser check
// (tools/check_dashboard_html.sh): two machines, train series per model and
// precision with 60 runs each, a 10% regression with its environment diff,
// an annotation, failed runs, and hostile strings (a machine platform, a
// case name, context values) that must show as text.
#ifndef CNNBENCH_TESTS_TOOLS_HISTORY_DASHBOARD_FIXTURE_H_
#define CNNBENCH_TESTS_TOOLS_HISTORY_DASHBOARD_FIXTURE_H_

#include "tools/history/dashboard.h"

namespace cnnbench::history::fixture {

// Strings an imported file could hold; none may reach a page unescaped.
inline constexpr char kHostileSql[] = "<script>alert(1)</script>\"'; DROP TABLE runs;--";
inline constexpr char kHostileTag[] = "</script><img src=x onerror=alert(2)>";

// The regressed series (cpu-box, train/resnet50/fp32): its id, the index of
// its first run after the change and of its failed run.
inline constexpr int64_t kRegressedSeries = 1;
inline constexpr int kRegressionAt = 40;
inline constexpr int kFailedAt = 45;

DashboardData DashboardFixture();

}  // namespace cnnbench::history::fixture

#endif  // CNNBENCH_TESTS_TOOLS_HISTORY_DASHBOARD_FIXTURE_H_
