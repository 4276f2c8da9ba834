// The multi-host table: for each training case run across several hosts,
// each host's mean time to arrive at a step's all-reduce (the suite's
// host<i>_arrival_ms counters: from the step's start until the host's ranks
// had handed their last gradients over), so the slowest host shows.
#ifndef CNNBENCH_TOOLS_REPORT_HOST_TABLES_H_
#define CNNBENCH_TOOLS_REPORT_HOST_TABLES_H_

#include <optional>
#include <string>
#include <vector>

#include "tools/report/results.h"
#include "tools/report/table.h"

namespace cnnbench::report {

// The hosts' names in the order of their first rank, from the context's
// host_facts ("a (ranks 0, 1; ...) | b (...)"); empty without it.
std::vector<std::string> HostNames(const std::string& host_facts);

// Null when no train case of the platform ran on more than one host.
std::optional<Section> HostSection(const PlatformResults& p);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_HOST_TABLES_H_
