#include "bench/output/context.h"

#include <glob.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "bench/suite/names.h"
#include "benchmark/benchmark.h"
#include "core/redact.h"
#include "models/zoo.h"
#include "tools/report/context_keys.h"

namespace cnnbench::bench {

const char kLibraryBuildTypeNote[] =
    "library_build_type is that of the Google Benchmark library (Debian's package is built "
    "without NDEBUG), not of cnnbench (cnnbench_build); every case times itself (manual time), "
    "so the library's code runs outside the measured interval";

namespace {

std::string LoadAverage() {
  double load[3];
  if (getloadavg(load, 3) != 3) return "not available";
  return absl::StrFormat("%.2f %.2f %.2f", load[0], load[1], load[2]);
}

// The first line of `path`, empty when it cannot be read.
std::string ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return std::string(absl::StripAsciiWhitespace(line));
}

std::vector<std::string> CpuFreqFolders() {
  std::vector<std::string> folders;
  glob_t found;
  if (glob("/sys/devices/system/cpu/cpu[0-9]*/cpufreq", 0, nullptr, &found) == 0) {
    for (size_t i = 0; i < found.gl_pathc; ++i) folders.push_back(found.gl_pathv[i]);
  }
  globfree(&found);
  return folders;
}

// "performance" when every CPU agrees, else "powersave:2,performance:6".
std::string Governors(const std::vector<std::string>& folders) {
  std::map<std::string, int> count;
  for (const auto& folder : folders) {
    const std::string governor = ReadLine(folder + "/scaling_governor");
    if (!governor.empty()) ++count[governor];
  }
  if (count.empty()) return "not available";
  if (count.size() == 1) return count.begin()->first;
  std::vector<std::string> parts;
  for (const auto& [governor, n] : count) parts.push_back(absl::StrCat(governor, ":", n));
  return absl::StrJoin(parts, ",");
}

// The range of a cpufreq file (kHz) over the CPUs, in MHz: "800-3500" or "2400".
std::string MhzRange(const std::vector<std::string>& folders, const std::string& file) {
  int64_t low = -1, high = -1;
  for (const auto& folder : folders) {
    int64_t khz = 0;
    if (!absl::SimpleAtoi(ReadLine(folder + "/" + file), &khz)) continue;
    low = low < 0 ? khz : std::min(low, khz);
    high = std::max(high, khz);
  }
  if (low < 0) return "not available";
  if (low / 1000 == high / 1000) return absl::StrCat(low / 1000);
  return absl::StrCat(low / 1000, "-", high / 1000);
}

bool NeedsQuotes(const std::string& arg) {
  if (arg.empty()) return true;
  for (char c : arg)
    if (!(absl::ascii_isalnum(c) ||
          absl::string_view("-_=./,:+@%").find(c) != absl::string_view::npos))
      return true;
  return false;
}

}  // namespace

std::string RunUuid() {
  std::random_device device;
  std::seed_seq seed{
      device(),
      device(),
      device(),
      device(),
      static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count()),
      static_cast<unsigned>(::getpid())};
  std::mt19937_64 bits(seed);
  return absl::StrFormat("%016x%016x", bits(), bits());
}

PlatformInfo AddPlatformContext(const std::string& platform_override, int hosts) {
  PlatformInfo info = CollectPlatformInfo();
  info.platform =
      platform_override.empty() ? MultiHostPlatformName(info.platform, hosts) : platform_override;
  for (const auto& [key, value] : info.ToKeyValues()) benchmark::AddCustomContext(key, value);
  return info;
}

void AddRunContext(const std::string& command_line) {
  benchmark::AddCustomContext("command_line", command_line);
  benchmark::AddCustomContext("run_uuid", RunUuid());
  benchmark::AddCustomContext("cnnbench_build", BuildCompilationMode());
#ifdef NDEBUG
  benchmark::AddCustomContext("cnnbench_assertions", "off");
#else
  benchmark::AddCustomContext("cnnbench_assertions", "on");
#endif
  benchmark::AddCustomContext("library_build_type_note", kLibraryBuildTypeNote);
  benchmark::AddCustomContext("load_average_start", LoadAverage());
  const std::vector<std::string> folders = CpuFreqFolders();
  benchmark::AddCustomContext("cpu_governor", Governors(folders));
  benchmark::AddCustomContext("cpu_mhz_start", MhzRange(folders, "scaling_cur_freq"));
  benchmark::AddCustomContext("cpu_mhz_min", MhzRange(folders, "scaling_min_freq"));
  benchmark::AddCustomContext("cpu_mhz_max", MhzRange(folders, "scaling_max_freq"));
  AddSlurmContext();
}

void AddSlurmContext() {
  // The job as Slurm knows it (srun's tasks, or salloc's allocation that
  // mpirun runs in): which job, on which nodes, how many tasks.
  for (const char* name : {"SLURM_JOB_ID", "SLURM_JOB_NODELIST", "SLURM_JOB_NUM_NODES",
                           "SLURM_NTASKS", "SLURM_JOB_PARTITION", "SLURM_CLUSTER_NAME"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0')
      benchmark::AddCustomContext(absl::AsciiStrToLower(name), value);
  }
}

void AddModelDefinitionContext(const std::vector<std::string>& case_names) {
  std::map<std::string, int> versions;  // by model, in name order
  for (const std::string& name : case_names) {
    const absl::StatusOr<CaseName> parsed = ParseCaseName(name);
    if (!parsed.ok() || parsed->model.empty()) continue;
    const absl::StatusOr<ModelInfo> info = FindModel(parsed->model);
    if (info.ok()) versions[info->name] = info->definition_version;
  }
  for (const auto& [model, version] : versions)
    benchmark::AddCustomContext(report::ModelDefinitionKey(model), absl::StrCat(version));
}

std::vector<std::pair<std::string, std::string>> EndOfRunContext() {
  return {{"load_average_end", LoadAverage()},
          {"cpu_mhz_end", MhzRange(CpuFreqFolders(), "scaling_cur_freq")}};
}

std::string CommandLine(int argc, const char* const* argv) {
  std::vector<std::string> args;
  for (int i = 0; i < argc; ++i) {
    // A store's password is not recorded (--store=postgresql://u:pw@...).
    std::string arg = RedactedUri(argv[i]);
    if (NeedsQuotes(arg)) {
      std::string quoted = "'";
      for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
      arg = quoted + "'";
    }
    args.push_back(arg);
  }
  return absl::StrJoin(args, " ");
}

}  // namespace cnnbench::bench
