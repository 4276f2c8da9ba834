// The tables that describe a platform's runs before any result: environment
// (machine, software, commit, date), options (batch size, optimizer,
// precision per model) and configuration (variable update, all-reduce).
#ifndef CNNBENCH_TOOLS_REPORT_ENVIRONMENT_TABLES_H_
#define CNNBENCH_TOOLS_REPORT_ENVIRONMENT_TABLES_H_

#include "tools/report/results.h"
#include "tools/report/table.h"

namespace cnnbench::report {

Table EnvironmentTable(const PlatformResults& platform);
Table OptionsTable(const PlatformResults& platform);
Table ConfigurationTable(const PlatformResults& platform);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_ENVIRONMENT_TABLES_H_
