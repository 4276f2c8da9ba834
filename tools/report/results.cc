#include "tools/report/results.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/report/context_keys.h"
#include "tools/report/messages.h"
#include "tools/report/model_definition.h"

namespace cnnbench::report {
namespace {

// As Google Benchmark writes it.
std::string NonFiniteWord(double value) {
  if (std::isnan(value)) return "NaN";
  return value > 0 ? "Infinity" : "-Infinity";
}

// `weight` samples of one counter with this mean and (when known) sample
// standard deviation.
void AddValue(const std::string& name, double mean, int weight, std::optional<double> stddev,
              Measurement& m) {
  if (!std::isfinite(mean)) {
    m.not_finite[name] += weight;
    m.not_finite_text.emplace(name, NonFiniteWord(mean));
    return;
  }
  if (weight == 1) m.values[name].push_back(mean);
  const bool spread = weight == 1 || (stddev && std::isfinite(*stddev));
  const double sd = spread && weight > 1 ? *stddev : 0;
  m.sum[name] += mean * weight;
  m.sum_squares[name] += weight * mean * mean + (weight - 1) * sd * sd;
  m.count[name] += weight;
  if (!spread) m.spread_unknown[name] += weight;
}

void AddSamples(const FileCase& c, const RunFile& file, Measurement& m) {
  // Individual repetitions when the file has them; the mean aggregate
  // weighted by its repetitions (with its stddev) when only aggregates were written.
  if (!c.iterations.empty()) {
    for (const Counters& counters : c.iterations) {
      for (const auto& [name, value] : counters) AddValue(name, value, 1, std::nullopt, m);
      auto iterations = counters.find(kIterationsCounter);
      if (iterations == counters.end()) continue;
      for (const auto& [name, value] : counters) {
        if (IsRateCounter(name)) m.rates[name].Add(value, iterations->second);
      }
    }
    m.samples += static_cast<int>(c.iterations.size());
  } else if (c.mean_repetitions > 0) {
    for (const auto& [name, value] : c.mean) {
      auto stddev = c.stddev.find(name);
      AddValue(name, value, c.mean_repetitions,
               stddev == c.stddev.end() ? std::nullopt : std::optional<double>(stddev->second), m);
    }
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

bool Measurement::oom() const { return !ok() && absl::StartsWith(Error(), "OOM"); }

std::string Measurement::Error() const { return errors.empty() ? "" : UserMessage(errors.front()); }

std::optional<double> Measurement::Mean(absl::string_view counter) const {
  const std::string key(counter);
  if (not_finite.count(key)) return std::nullopt;
  auto sum_it = sum.find(key);
  if (sum_it == sum.end()) return std::nullopt;
  const int n = count.at(key);
  if (auto pool = rates.find(key); pool != rates.end() && pool->second.samples() > 0) {
    const int others = n - pool->second.samples();
    if (others == 0) return pool->second.Rate();
    // The others' mean: a mean aggregate's, or repetitions without their iterations.
    std::optional<double> rate =
        pool->second.RateWith(others, (sum_it->second - pool->second.sum_of_rates()) / others);
    if (rate) return rate;
  }
  return sum_it->second / n;
}

std::optional<double> Measurement::SampleMean(absl::string_view counter) const {
  const std::string key(counter);
  if (not_finite.count(key)) return std::nullopt;
  auto sum_it = sum.find(key);
  if (sum_it == sum.end()) return std::nullopt;
  return sum_it->second / count.at(key);
}

std::optional<double> Measurement::Stddev(absl::string_view counter) const {
  const std::string key(counter);
  std::optional<double> mean = SampleMean(counter);
  if (!mean || spread_unknown.count(key)) return std::nullopt;
  const int n = count.at(key);
  if (n < 2) return std::nullopt;
  const double variance = (sum_squares.at(key) - n * *mean * *mean) / (n - 1);
  return std::sqrt(std::max(0.0, variance));
}

std::optional<double> Measurement::Cv(absl::string_view counter) const {
  std::optional<double> mean = SampleMean(counter), stddev = Stddev(counter);
  if (!mean || !stddev || *mean == 0) return std::nullopt;
  return *stddev / std::fabs(*mean);
}

std::string Measurement::NotFiniteText(absl::string_view counter) const {
  const std::string key(counter);
  auto bad = not_finite.find(key);
  if (bad == not_finite.end()) return "";
  auto good = count.find(key);
  const int total = bad->second + (good == count.end() ? 0 : good->second);
  return absl::StrCat(counter, " was ", not_finite_text.at(key), " in ", bad->second, " of ", total,
                      total == 1 ? " repetition" : " repetitions");
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

std::string FrameworkOf(const RunFile& file) {
  std::string framework = file.Context("framework");
  return framework.empty() ? kDefaultFramework : framework;
}

const std::vector<std::string>& SettingKeys() {
  // The measurement settings first: a split's name says them first
  // ("p (steps=100)"), then the machine's identity and its environment.
  static const std::vector<std::string> kKeys = [] {
    std::vector<std::string> keys = MeasurementSettingKeys();
    for (const auto* more : {&MachineKeys(), &EnvironmentKeys()})
      keys.insert(keys.end(), more->begin(), more->end());
    return keys;
  }();
  return kKeys;
}

const std::vector<std::string>& NonSettingKeys() { return RunRecordKeys(); }

namespace {

// Files of one platform that agree on every setting they record.
struct SettingGroup {
  std::string platform;
  std::map<std::string, std::string> settings;  // merged over its files
  std::vector<std::string> files;
};

// Each file into the first group of its platform whose settings do not
// conflict with its own (a new group where none fits); the group of each.
std::vector<size_t> GroupBySettings(const std::vector<RunFile>& files,
                                    std::vector<SettingGroup>& groups,
                                    std::vector<std::string>* warnings) {
  std::vector<size_t> group_of;
  for (const RunFile& file : files) {
    const std::string platform = PlatformOf(file, warnings);
    std::map<std::string, std::string> settings;
    for (const std::string& key : SettingKeys()) {
      std::string value = key == "framework" ? FrameworkOf(file) : file.Context(key);
      if (!value.empty()) settings[key] = value;
    }
    auto fits = [&](const SettingGroup& g) {
      if (g.platform != platform) return false;
      for (const auto& [key, value] : settings) {
        auto it = g.settings.find(key);
        if (it != g.settings.end() && it->second != value) return false;
      }
      return true;
    };
    auto it = std::find_if(groups.begin(), groups.end(), fits);
    if (it == groups.end()) it = groups.insert(groups.end(), SettingGroup{platform, {}, {}});
    it->settings.insert(settings.begin(), settings.end());
    it->files.push_back(file.path);
    group_of.push_back(it - groups.begin());
  }
  return group_of;
}

// The keys with different recorded values among the groups of one
// framework (`members` of one platform) tell those groups apart; the
// framework tells the others.
std::vector<std::string> DifferingSettings(const std::vector<SettingGroup>& groups,
                                           const std::vector<size_t>& members) {
  std::vector<std::string> differing;
  for (const std::string& key : SettingKeys()) {
    if (key == "framework") continue;
    std::map<std::string, std::set<std::string>> values;  // by framework
    for (size_t i : members) {
      auto it = groups[i].settings.find(key);
      if (it != groups[i].settings.end())
        values[groups[i].settings.at("framework")].insert(it->second);
    }
    for (const auto& [framework, distinct] : values) {
      if (distinct.size() > 1) {
        differing.push_back(key);
        break;
      }
    }
  }
  return differing;
}

}  // namespace

std::vector<std::string> ReportedPlatforms(const std::vector<RunFile>& files,
                                           std::vector<std::string>* warnings) {
  std::vector<SettingGroup> groups;
  const std::vector<size_t> group_of = GroupBySettings(files, groups, warnings);
  std::vector<std::string> names(groups.size());
  std::set<std::string> platforms;
  for (const SettingGroup& g : groups) platforms.insert(g.platform);
  for (const std::string& platform : platforms) {
    std::vector<size_t> members;
    for (size_t i = 0; i < groups.size(); ++i) {
      if (groups[i].platform == platform) members.push_back(i);
    }
    const std::vector<std::string> differing = DifferingSettings(groups, members);
    std::vector<std::string> described;
    for (size_t i : members) {
      std::vector<std::string> parts;
      const std::string& framework = groups[i].settings.at("framework");
      if (framework != kDefaultFramework) parts.push_back(absl::StrCat("framework=", framework));
      for (const std::string& key : differing) {
        auto it = groups[i].settings.find(key);
        parts.push_back(it == groups[i].settings.end() ? absl::StrCat(key, " not recorded")
                                                       : absl::StrCat(key, "=", it->second));
      }
      names[i] =
          parts.empty() ? platform : absl::StrCat(platform, " (", absl::StrJoin(parts, ", "), ")");
      described.push_back(
          absl::StrCat("'", names[i], "' (", absl::StrJoin(groups[i].files, ", "), ")"));
    }
    if (differing.empty()) continue;
    warnings->push_back(absl::StrCat(
        "platform '", platform, "': runs differ in ", absl::StrJoin(differing, ", "),
        ", which change the figures; reported apart as ", absl::StrJoin(described, ", ")));
  }
  for (std::string& w : DefinitionWarnings(files)) warnings->push_back(std::move(w));
  std::vector<std::string> out;
  for (size_t g : group_of) out.push_back(names[g]);
  return out;
}

namespace {

// Where each family's results go (the tables read them from there).
using Sink = void (*)(const FileCase& c, const RunFile& file, PlatformResults& platform);
void ToTrain(const FileCase& c, const RunFile& file, PlatformResults& p) {
  AddSamples(c, file, p.train[c.name]);
}
void ToKernels(const FileCase& c, const RunFile& file, PlatformResults& p) {
  if (!p.kernels.count(c.name)) p.kernel_order.push_back(c.name);
  AddSamples(c, file, p.kernels[c.name]);
}
void ToCollectives(const FileCase& c, const RunFile& file, PlatformResults& p) {
  AddSamples(c, file, p.collectives[c.name]);
}
void ToGrads(const FileCase& c, const RunFile& file, PlatformResults& p) {
  AddSamples(c, file, p.grads[c.name]);
}
void ToInput(const FileCase& c, const RunFile& file, PlatformResults& p) {
  AddSamples(c, file, p.input[c.name]);
}
void ToPeak(const FileCase& c, const RunFile& file, PlatformResults& p) {
  AddSamples(c, file, p.peak[c.name]);
}
void ToBandwidth(const FileCase& c, const RunFile& file, PlatformResults& p) {
  AddSamples(c, file, p.bandwidth[c.name]);
}
void ToInfer(const FileCase& c, const RunFile& file, PlatformResults& p) {
  AddSamples(c, file, p.infer[c.name]);
}
constexpr bench::FamilyTable<Sink> kSinks = {{
    {bench::Family::kTrain, ToTrain},
    {bench::Family::kConv, ToKernels},
    {bench::Family::kFc, ToKernels},
    {bench::Family::kPool, ToKernels},
    {bench::Family::kBatchNorm, ToKernels},
    {bench::Family::kRelu, ToKernels},
    {bench::Family::kGemm, ToKernels},
    {bench::Family::kAllReduce, ToCollectives},
    {bench::Family::kAllGather, ToCollectives},
    {bench::Family::kReduceScatter, ToCollectives},
    {bench::Family::kBroadcast, ToCollectives},
    {bench::Family::kReduce, ToCollectives},
    {bench::Family::kAllToAll, ToCollectives},
    {bench::Family::kGather, ToCollectives},
    {bench::Family::kScatter, ToCollectives},
    {bench::Family::kGrads, ToGrads},
    {bench::Family::kInput, ToInput},
    {bench::Family::kPeak, ToPeak},
    {bench::Family::kBandwidth, ToBandwidth},
    {bench::Family::kInfer, ToInfer},
}};
static_assert(bench::InFamilyOrder(kSinks));

}  // namespace

void AddRunFile(const RunFile& file, Results& results, std::vector<std::string>* warnings) {
  AddRunFile(file, PlatformOf(file, warnings), results);
}

void AddRunFile(const RunFile& file, const std::string& name, Results& results) {
  auto it = std::find_if(results.platforms.begin(), results.platforms.end(),
                         [&](const PlatformResults& p) { return p.name == name; });
  if (it == results.platforms.end()) {
    results.platforms.push_back(PlatformResults{});
    it = results.platforms.end() - 1;
    it->name = name;
    std::vector<std::string> ignored;  // already given by ReportedPlatforms
    it->platform = PlatformOf(file, &ignored);
    it->framework = FrameworkOf(file);
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
  platform.settings.clear();
  for (const std::string& key : SettingKeys()) {
    std::string value = key == "framework" ? platform.framework : platform.Context(key);
    if (!value.empty()) platform.settings.emplace_back(key, value);
  }
  // Every case here was parsed (ParseRunFile keeps no other), so its family
  // is in the table, and the table has every family.
  for (const FileCase& c : file.cases) {
    const Sink sink = kSinks[static_cast<size_t>(bench::FindCaseFamily(c.name.family)->id)].value;
    // A model's cases of another definition than the zoo's are another
    // model's to the tables (model_definition.h).
    if (!c.name.model.empty() && ReportedModel(file, c.name.model) != c.name.model) {
      FileCase renamed = c;
      renamed.name.model = ReportedModel(file, c.name.model);
      sink(renamed, file, platform);
    } else {
      sink(c, file, platform);
    }
  }
}

}  // namespace cnnbench::report
