#include "tools/report/results.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cnnbench::report {
namespace {

void AddSamples(const FileCase& c, const RunFile& file, Measurement& m) {
  auto add = [&m](const Counters& counters, int weight) {
    for (const auto& [name, value] : counters) {
      m.sum[name] += value * weight;
      m.count[name] += weight;
    }
  };
  // Individual repetitions when the file has them; the mean aggregate
  // weighted by its repetitions when only aggregates were written.
  if (!c.iterations.empty()) {
    for (const Counters& counters : c.iterations) add(counters, 1);
    m.samples += static_cast<int>(c.iterations.size());
  } else if (c.mean_repetitions > 0) {
    add(c.mean, c.mean_repetitions);
    m.samples += c.mean_repetitions;
  }
  if (!c.error.empty()) AddDistinct(c.error, m.errors);
  AddDistinct(file.Context("git_commit"), m.commits);
  AddDistinct(file.Context("date"), m.dates);
}

std::string FileBaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

void AddDistinct(const std::string& value, std::vector<std::string>& values) {
  if (!value.empty() && std::find(values.begin(), values.end(), value) == values.end()) {
    values.push_back(value);
  }
}

bool Measurement::oom() const {
  return !ok() && !errors.empty() && absl::StartsWith(errors.front(), "OOM");
}

std::optional<double> Measurement::Mean(absl::string_view counter) const {
  auto sum_it = sum.find(std::string(counter));
  if (sum_it == sum.end()) return std::nullopt;
  return sum_it->second / count.at(std::string(counter));
}

std::vector<std::string> PlatformResults::ContextValues(absl::string_view key) const {
  for (const auto& [k, values] : context) {
    if (k == key) return values;
  }
  return {};
}

std::string PlatformResults::Context(absl::string_view key) const {
  return absl::StrJoin(ContextValues(key), ", ");
}

const PlatformResults* Results::Find(absl::string_view platform) const {
  for (const PlatformResults& p : platforms) {
    if (p.name == platform) return &p;
  }
  return nullptr;
}

std::string PlatformOf(const RunFile& file, std::vector<std::string>* warnings) {
  std::string name = file.Context("platform");
  if (!name.empty()) return name;
  name = file.Context("host_name");
  if (name.empty()) name = FileBaseName(file.path);
  warnings->push_back(
      absl::StrCat(file.path, ": context has no \"platform\"; reported as platform '", name, "'"));
  return name;
}

void AddRunFile(const RunFile& file, Results& results, std::vector<std::string>* warnings) {
  std::string name = PlatformOf(file, warnings);
  auto it = std::find_if(results.platforms.begin(), results.platforms.end(),
                         [&](const PlatformResults& p) { return p.name == name; });
  if (it == results.platforms.end()) {
    results.platforms.push_back(PlatformResults{});
    it = results.platforms.end() - 1;
    it->name = name;
  }
  PlatformResults& platform = *it;
  platform.files.push_back(FileBaseName(file.path));
  for (const auto& [key, value] : file.context) {
    auto entry = std::find_if(platform.context.begin(), platform.context.end(),
                              [&](const auto& kv) { return kv.first == key; });
    if (entry == platform.context.end()) {
      platform.context.emplace_back(key, std::vector<std::string>{});
      entry = platform.context.end() - 1;
    }
    AddDistinct(value, entry->second);
  }
  for (const FileCase& c : file.cases) {
    if (c.name.family == "train") {
      AddSamples(c, file, platform.train[c.name]);
    } else if (IsKernelCase(c.name)) {
      if (!platform.kernels.count(c.name)) platform.kernel_order.push_back(c.name);
      AddSamples(c, file, platform.kernels[c.name]);
    } else if (c.name.family == "allreduce") {
      AddSamples(c, file, platform.allreduce[c.name]);
    } else if (c.name.family == "input") {
      AddSamples(c, file, platform.input[c.name]);
    }
  }
}

}  // namespace cnnbench::report
