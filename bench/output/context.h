// Adds the platform (host, CPU, GPUs, library versions, commit, build) and
// the run's conditions (command line, build mode, load, CPU clocks) to a
// benchmark run's JSON context, where tools/report groups runs by it.
#ifndef CNNBENCH_BENCH_CONTEXT_H_
#define CNNBENCH_BENCH_CONTEXT_H_

#include <string>
#include <utility>
#include <vector>

#include "core/platform.h"

namespace cnnbench::bench {

// Google Benchmark's library_build_type and its "built as DEBUG" warning
// explained in one line (context and console).
extern const char kLibraryBuildTypeNote[];

// `platform_override`, when not empty, replaces the default platform name;
// else a job across several `hosts` is named so (MultiHostPlatformName).
PlatformInfo AddPlatformContext(const std::string& platform_override, int hosts = 1);

// What the run was started with and under: `command_line` (as typed, before
// any flag is consumed), run_uuid (RunUuid: what tells two runs of one
// command in one second apart in the results store), cnnbench_build (the suite's compilation mode),
// cnnbench_assertions, a note on Google Benchmark's library_build_type,
// load_average_start, and the CPU frequency governor and clocks where
// /sys/devices/system/cpu/cpu*/cpufreq/ is readable.
void AddRunContext(const std::string& command_line);
// Under Slurm (srun, or salloc with mpirun inside): slurm_job_id,
// slurm_job_nodelist, slurm_job_num_nodes, slurm_ntasks,
// slurm_job_partition and slurm_cluster_name, from the SLURM_* variables
// that are set. Part of AddRunContext.
void AddSlurmContext();

// One measurement setting per model that `case_names` run (train, infer,
// grads): model_definition.<model> = the zoo's definition version of the
// network behind the name (tools/report/context_keys.h), with which the
// report and the history keep an older network's results apart.
void AddModelDefinitionContext(const std::vector<std::string>& case_names);

// 128 random bits as 32 hex digits, new for every run.
std::string RunUuid();

// The entries known when the run ends: load_average_end.
std::vector<std::pair<std::string, std::string>> EndOfRunContext();

// argv as one shell-quoted line, a database URI's password as "***".
std::string CommandLine(int argc, const char* const* argv);

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_CONTEXT_H_
