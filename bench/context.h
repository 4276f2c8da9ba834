// Adds the platform (host, CPU, GPUs, library versions, commit, build) to a
// benchmark run's JSON context, where tools/report groups runs by it.
#ifndef CNNBENCH_BENCH_CONTEXT_H_
#define CNNBENCH_BENCH_CONTEXT_H_

#include <string>

#include "core/platform.h"

namespace cnnbench::bench {

// `platform_override`, when not empty, replaces the default platform name.
PlatformInfo AddPlatformContext(const std::string& platform_override);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_CONTEXT_H_
