#include "tools/history/store.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "bench/suite/names.h"
#include "nlohmann/json.hpp"
#include "tools/history/schema.h"
#include "tools/history/store_series.h"
#include "tools/report/context_keys.h"
#include "tools/report/model_definition.h"
#include "tools/report/results.h"

namespace cnnbench::history {
namespace {

using Json = nlohmann::json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Rows per multi-row INSERT: one round trip for many rows on PostgreSQL,
// far under SQLite's limit on placeholders.
constexpr size_t kBatchRows = 64;

std::string NowIso() {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
}

// Seconds since the epoch of a date as Google Benchmark writes it
// ("2026-12-04T10:00:00+00:00"); nullopt when it is not one.
std::optional<int64_t> ParseDate(const std::string& date) {
  absl::Time t;
  std::string error;
  for (const char* format : {"%Y-%m-%dT%H:%M:%E*S%Ez", "%Y-%m-%dT%H:%M:%E*SZ",
                             "%Y-%m-%d %H:%M:%E*S", "%Y-%m-%dT%H:%M:%E*S"}) {
    if (absl::ParseTime(format, date, &t, &error)) return absl::ToUnixSeconds(t);
  }
  return std::nullopt;
}

// A counter's value for JSON: non-finite numbers as the words Google
// Benchmark writes, which JSON has no numbers for.
Json NumberJson(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

std::string CountersJson(const report::Counters& counters) {
  Json j = Json::object();
  for (const auto& [k, v] : counters) j[k] = NumberJson(v);
  return j.dump();
}

// Inserts `rows` of `columns` into `table`, kBatchRows to a statement.
absl::Status InsertRows(Db& db, const std::string& table, const std::vector<std::string>& columns,
                        const std::vector<std::vector<Value>>& rows,
                        const std::string& suffix = "") {
  const std::string head =
      absl::StrCat("INSERT INTO ", table, " (", absl::StrJoin(columns, ", "), ") VALUES ");
  const std::string one =
      absl::StrCat("(", absl::StrJoin(std::vector<std::string>(columns.size(), "?"), ", "), ")");
  for (size_t at = 0; at < rows.size();) {
    const size_t n = rows.size() - at >= kBatchRows ? kBatchRows : 1;
    std::string sql = head;
    std::vector<Value> params;
    params.reserve(n * columns.size());
    for (size_t i = 0; i < n; ++i) {
      absl::StrAppend(&sql, i ? ", " : "", one);
      for (const Value& v : rows[at + i]) params.push_back(v);
    }
    absl::StrAppend(&sql, suffix);
    if (absl::Status s = db.Exec(sql, params); !s.ok()) return s;
    at += n;
  }
  return absl::OkStatus();
}

std::string ContextValue(const report::RunFile& file, const std::string& key) {
  return file.Context(key);
}

// The keys of one class the file wrote, sorted, as a JSON object.
Json KeysOf(const report::RunFile& file, const std::vector<std::string>& keys) {
  Json j = Json::object();
  for (const std::string& key : keys) {
    const std::string v = ContextValue(file, key);
    if (!v.empty()) j[key] = v;
  }
  return j;
}

struct CaseSummary {
  std::string status = "ok";  // ok, oom, error
  std::string message;
  int repetitions = 0;
  double value = kNaN, best = kNaN, min = kNaN, max = kNaN, stddev = kNaN;
};

bool IsTimeCounter(absl::string_view counter) {
  return counter == "seconds" || absl::StartsWith(counter, "latency_ms") ||
         absl::StartsWith(counter, "step_ms");
}

// The counter a case's series follows: its family's headline (images/s,
// FLOP/s, bytes/s, busbw), else its time.
std::string SeriesCounter(const report::FileCase& c) {
  const bench::CaseFamily* family = bench::FindCaseFamily(c.name.family);
  std::string counter = family != nullptr ? family->counter : "";
  auto has = [&](const std::string& name) {
    if (c.mean.count(name)) return true;
    for (const report::Counters& it : c.iterations)
      if (it.count(name)) return true;
    return false;
  };
  if (!counter.empty() && (has(counter) || !c.error.empty())) return counter;
  for (const char* alternative : {"images_per_second", "busbw", "flops", "bytes_per_second"})
    if (has(alternative)) return alternative;
  return counter.empty() ? "seconds" : (has("seconds") ? "seconds" : counter);
}

CaseSummary Summarize(const report::FileCase& c, const std::string& counter, bool higher) {
  CaseSummary s;
  std::vector<double> values;
  for (const report::Counters& it : c.iterations) {
    auto v = it.find(counter);
    if (v != it.end() && std::isfinite(v->second)) values.push_back(v->second);
  }
  if (!values.empty()) {
    s.repetitions = static_cast<int>(values.size());
    s.best = higher ? *std::max_element(values.begin(), values.end())
                    : *std::min_element(values.begin(), values.end());
    s.min = *std::min_element(values.begin(), values.end());
    s.max = *std::max_element(values.begin(), values.end());
    if (values.size() >= 2) {
      double mean = 0;
      for (double v : values) mean += v;
      mean /= values.size();
      double ss = 0;
      for (double v : values) ss += (v - mean) * (v - mean);
      s.stddev = std::sqrt(ss / (values.size() - 1));
    }
  }
  if (std::optional<double> mean = report::CaseMean(c, counter); mean && std::isfinite(*mean)) {
    s.value = *mean;
    if (values.empty()) {  // only a mean aggregate was written
      s.repetitions = std::max(1, c.mean_repetitions);
      s.best = s.min = s.max = *mean;
      auto sd = c.stddev.find(counter);
      if (sd != c.stddev.end()) s.stddev = sd->second;
    }
  }
  s.message = c.error;  // a repetition that failed beside ones that measured
  if (!std::isfinite(s.value)) {
    s.status = absl::StartsWith(c.error, "OOM")                 ? "oom"
               : absl::StrContains(c.error, "unsupported: ")     ? "skipped"
               : absl::StartsWith(c.error, "skipped with no message") ? "skipped"
                                                                 : "error";
    if (c.error.empty()) s.message = absl::StrCat("no ", counter, " written");
    s.repetitions = 0;
  }
  return s;
}

// Runs a statement and returns its first column of its first row as an id.
absl::StatusOr<int64_t> QueryId(Db& db, absl::string_view sql, const std::vector<Value>& params) {
  absl::StatusOr<std::vector<Row>> rows = db.Query(sql, params);
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return absl::NotFoundError("no row");
  return IntAt(rows->front(), 0);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& spec, bool create) {
  if (spec.empty()) return absl::InvalidArgumentError("--store: empty (a path, postgresql://..., or none)");
  if (!IsPostgresUri(spec) && create) {
    // The folder, as a default run makes results/.
    const size_t slash = spec.rfind('/');
    if (slash != std::string::npos && slash > 0) {
      std::string dir = spec.substr(0, slash);
      for (size_t at = 1; at <= dir.size(); ++at) {
        if (at == dir.size() || dir[at] == '/') {
          const std::string part = dir.substr(0, at);
          if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST)
            return absl::PermissionDeniedError(absl::StrCat(
                "results store ", spec, ": cannot make the folder ", part, ": ",
                std::strerror(errno)));
        }
      }
    }
  }
  absl::StatusOr<std::unique_ptr<Db>> db = OpenDb(spec, create);
  if (!db.ok()) return db.status();
  if (absl::Status schema = EnsureSchema(**db); !schema.ok()) return schema;
  if (absl::Status wal = UseWal(**db); !wal.ok()) return wal;
  return std::unique_ptr<Store>(new Store(*std::move(db)));
}

absl::StatusOr<ImportOutcome> Store::ImportFile(const std::string& path,
                                                std::vector<std::string>* warnings,
                                                const CancelCheck& cancelled) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr)
    return absl::NotFoundError(absl::StrCat(path, ": cannot read: ", std::strerror(errno)));
  std::string content;
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), f)) > 0) content.append(buffer, n);
  const bool failed = std::ferror(f);
  std::fclose(f);
  if (failed) return absl::DataLossError(absl::StrCat(path, ": read error"));
  absl::StatusOr<report::RunFile> file = report::ParseRunFile(path, content, warnings);
  if (!file.ok()) return file.status();
  return Import(*file, content, path, cancelled);
}

absl::StatusOr<ImportOutcome> Store::Import(const report::RunFile& file, absl::string_view content,
                                            absl::string_view source,
                                            const CancelCheck& cancelled) {
  Db& db = *db_;
  ImportOutcome out;
  out.platform = report::PlatformOf(file, &out.warnings);
  const std::string date = file.Context("date");
  const std::string host = file.Context("host_name");
  const std::string command = file.Context("command_line");
  const auto [commit, dirty] = SplitCommit(file.Context("git_commit"));
  const std::string content_hash = ContentHash(content);
  // The run's identity: what //bench:all writes for it (its run_uuid, and
  // when, where, what and which code); a file without a date is its content.
  const std::string run_key =
      date.empty() ? absl::StrCat("content:", content_hash)
                   : ContentHash(absl::StrCat(date, "\n", host, "\n", command, "\n",
                                              file.Context("git_commit"), "\n",
                                              file.Context("run_uuid")));
  const std::string interrupted = file.Context("interrupted");
  out.interrupted = !interrupted.empty();

  // Machine and settings identity, from the report's one classification.
  Json identity = KeysOf(file, report::MachineKeys());
  Json settings = KeysOf(file, report::MeasurementSettingKeys());
  if (!settings.contains("framework")) settings["framework"] = report::FrameworkOf(file);
  const std::string identity_text = identity.dump();
  const std::string settings_text = settings.dump();
  const std::string fingerprint = ContentHash(absl::StrCat(out.platform, "\n", identity_text));
  const std::string settings_hash = ContentHash(settings_text);
  std::optional<int64_t> parsed_time = ParseDate(date);
  if (!parsed_time)
    out.warnings.push_back(absl::StrCat(
        source, ": ", date.empty() ? "no date" : absl::StrCat("date '", date, "' not understood"),
        " in its context: placed in the history at the time of the import"));
  const int64_t unix_time = parsed_time.value_or(absl::ToUnixSeconds(absl::Now()));

  // A stored record of this run that this file completes: the same run
  // stored while it was still going (a file imported mid-run, a checkpoint)
  // and this one with more cases. Its id, replaced below.
  int64_t superseded = 0;
  auto existing = [&]() -> absl::StatusOr<bool> {
    absl::StatusOr<std::vector<Row>> rows = db.Query(
        "SELECT id, machine_id, interrupted, cases FROM runs WHERE run_key = ? OR content_hash = ?",
        {Value::Text(run_key), Value::Text(content_hash)});
    if (!rows.ok()) return rows.status();
    if (rows->empty()) return false;
    const bool partial = rows->front()[2].has_value();
    if (partial && (interrupted.empty() ||
                    static_cast<int64_t>(file.cases.size()) > IntAt(rows->front(), 3))) {
      superseded = IntAt(rows->front(), 0);
      return false;
    }
    out.run_id = IntAt(rows->front(), 0);
    out.machine_id = IntAt(rows->front(), 1);
    out.already_stored = true;
    return true;
  };
  auto number = [&]() -> absl::Status {
    absl::StatusOr<std::vector<Row>> rows = db.Query(
        "SELECT count(*), sum(CASE WHEN r.unix_time < me.unix_time OR (r.unix_time = "
        "me.unix_time AND r.id <= me.id) THEN 1 ELSE 0 END) FROM runs r, runs me WHERE me.id = ? "
        "AND r.machine_id = me.machine_id",
        {Value::Int(out.run_id)});
    if (!rows.ok()) return rows.status();
    if (!rows->empty()) {
      out.machine_runs = static_cast<int>(IntAt(rows->front(), 0));
      out.run_number = static_cast<int>(IntAt(rows->front(), 1));
    }
    absl::StatusOr<std::vector<Row>> cases =
        db.Query("SELECT cases FROM runs WHERE id = ?", {Value::Int(out.run_id)});
    if (cases.ok() && !cases->empty()) out.cases = static_cast<int>(IntAt(cases->front(), 0));
    return absl::OkStatus();
  };

  {
    absl::StatusOr<bool> stored = existing();
    if (!stored.ok()) return stored.status();
    if (*stored) {
      if (absl::Status s = number(); !s.ok()) return s;
      return out;
    }
  }

  Transaction tx(db);
  if (absl::Status s = tx.Begin(); !s.ok()) return s;
  {
    // Another writer may have stored it since.
    absl::StatusOr<bool> stored = existing();
    if (!stored.ok()) return stored.status();
    if (*stored) {
      tx.Commit().IgnoreError();
      if (absl::Status s = number(); !s.ok()) return s;
      return out;
    }
  }
  auto text_or_null = [](const Json& j, const char* key) {
    return j.contains(key) ? Value::Text(j[key].get<std::string>()) : Value::Null();
  };
  if (absl::Status s = db.Exec(
          "INSERT INTO machines (fingerprint, platform, cpu_model, cpu_isa, host_cpus, "
          "memory_bytes, gpu_model, gpu_count, hosts, identity) VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
          "?, ?) ON CONFLICT (fingerprint) DO NOTHING",
          {Value::Text(fingerprint), Value::Text(out.platform), text_or_null(identity, "cpu_model"),
           text_or_null(identity, "cpu_isa"), text_or_null(identity, "host_cpus"),
           text_or_null(identity, "memory_bytes"), text_or_null(identity, "gpu_model"),
           text_or_null(identity, "gpu_count"), text_or_null(identity, "hosts"),
           Value::Text(identity_text)});
      !s.ok())
    return s;
  absl::StatusOr<int64_t> machine =
      QueryId(db, "SELECT id FROM machines WHERE fingerprint = ?", {Value::Text(fingerprint)});
  if (!machine.ok()) return machine.status();
  out.machine_id = *machine;

  if (superseded != 0) {
    // Out of the new record's way until it is stored (both keys are unique).
    if (absl::Status s = db.Exec(
            "UPDATE runs SET run_key = run_key || ':superseded', content_hash = content_hash || "
            "':superseded' WHERE id = ?",
            {Value::Int(superseded)});
        !s.ok())
      return s;
  }
  std::string build = file.Context("cnnbench_build");
  if (build.empty()) build = file.Context("build_config");
  absl::StatusOr<int64_t> run = QueryId(
      db,
      "INSERT INTO runs (machine_id, run_key, content_hash, date, unix_time, imported_at, "
      "git_commit, dirty, command_line, build, framework, settings_hash, interrupted, source, "
      "cases) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
      {Value::Int(out.machine_id), Value::Text(run_key), Value::Text(content_hash),
       Value::Text(date), Value::Int(unix_time), Value::Text(NowIso()),
       commit.empty() ? Value::Null() : Value::Text(commit), Value::Int(dirty ? 1 : 0),
       command.empty() ? Value::Null() : Value::Text(command),
       build.empty() ? Value::Null() : Value::Text(build), Value::Text(report::FrameworkOf(file)),
       Value::Text(settings_hash), interrupted.empty() ? Value::Null() : Value::Text(interrupted),
       Value::Text(std::string(source)), Value::Int(static_cast<int64_t>(file.cases.size()))});
  if (!run.ok() && absl::IsAlreadyExists(run.status())) {
    // Another writer stored the same run since this one looked (PostgreSQL
    // writers run side by side): it is stored.
    tx.Rollback();
    absl::StatusOr<bool> stored = existing();
    if (stored.ok() && *stored && number().ok()) return out;
  }
  if (!run.ok()) return run.status();
  out.run_id = *run;
  if (superseded != 0) {
    // The partial record gives way; its annotations follow the run.
    for (const char* sql : {"UPDATE annotations SET run_id = ? WHERE run_id = ?",
                            "DELETE FROM changes WHERE before_run_id = ? OR after_run_id = ?"}) {
      const bool update = absl::StartsWith(sql, "UPDATE");
      if (absl::Status s = db.Exec(sql, {Value::Int(update ? out.run_id : superseded),
                                         Value::Int(superseded)});
          !s.ok())
        return s;
    }
    if (absl::Status s = db.Exec("DELETE FROM runs WHERE id = ?", {Value::Int(superseded)});
        !s.ok())
      return s;
    out.warnings.push_back(absl::StrCat(source, ": completes run ", superseded,
                                        " (stored before it had finished), which it replaces"));
  }

  // The whole context, each key with its class.
  {
    std::map<std::string, std::string> context;
    for (const auto& [k, v] : file.context) context[k] = v;  // the later of a key written twice
    std::vector<std::vector<Value>> rows;
    for (const auto& [k, v] : context) {
      std::optional<report::KeyClass> key_class = report::ClassOfKey(k);
      rows.push_back({Value::Int(out.run_id), Value::Text(k), Value::Text(v),
                      Value::Text(key_class ? report::KeyClassName(*key_class) : "unclassified")});
    }
    if (absl::Status s = InsertRows(db, "run_context", {"run_id", "key", "value", "key_class"}, rows);
        !s.ok())
      return s;
  }

  // Cases and series known to the store.
  std::map<std::string, int64_t> case_ids;
  {
    absl::StatusOr<std::vector<Row>> rows = db.Query("SELECT id, name FROM cases");
    if (!rows.ok()) return rows.status();
    for (const Row& r : *rows) case_ids[TextAt(r, 1)] = IntAt(r, 0);
  }
  // A model's cases measured under another definition than 1 (context_keys.h,
  // model_definition.<model>) are a series of their own: the run's settings
  // plus that key. Definition 1, written or not, keeps the run's settings,
  // and with them the series stored before the key existed.
  std::map<std::string, std::pair<std::string, std::string>> model_settings;  // text, hash
  auto settings_of = [&](const std::string& model) -> std::pair<std::string, std::string> {
    if (model.empty()) return {settings_text, settings_hash};
    const std::string definition = report::RecordedDefinition(file, model);
    if (definition == "1") return {settings_text, settings_hash};
    auto [it, added] = model_settings.emplace(model, std::pair<std::string, std::string>{});
    if (added) {
      Json own = settings;
      own[report::ModelDefinitionKey(model)] = definition;
      it->second = {own.dump(), ContentHash(own.dump())};
    }
    return it->second;
  };
  // (case, settings hash) -> (series, its counter): a series keeps the
  // counter it started with.
  std::map<std::pair<int64_t, std::string>, std::pair<int64_t, std::string>> series_ids;
  {
    std::set<std::string> hashes = {settings_hash};
    for (const report::FileCase& c : file.cases) hashes.insert(settings_of(c.name.model).second);
    for (const std::string& hash : hashes) {
      absl::StatusOr<std::vector<Row>> rows = db.Query(
          "SELECT id, case_id, counter FROM series WHERE machine_id = ? AND settings_hash = ?",
          {Value::Int(out.machine_id), Value::Text(hash)});
      if (!rows.ok()) return rows.status();
      for (const Row& r : *rows) series_ids[{IntAt(r, 1), hash}] = {IntAt(r, 0), TextAt(r, 2)};
    }
  }

  std::vector<std::vector<Value>> results, repetitions;
  std::set<int64_t> seen_series;
  for (const report::FileCase& c : file.cases) {
    if (cancelled && cancelled()) return absl::CancelledError("interrupted");
    const std::string name = c.name.ToString();
    auto cid = case_ids.find(name);
    if (cid == case_ids.end()) {
      Json fields = Json::object();
      fields["family"] = c.name.family;
      if (!c.name.model.empty()) fields["model"] = c.name.model;
      if (!c.name.precision.empty()) fields["precision"] = c.name.precision;
      if (!c.name.data.empty()) fields["data"] = c.name.data;
      if (c.name.batch) fields["batch"] = c.name.batch;
      fields["gpus"] = c.name.gpus;
      if (c.name.replicas > 1) fields["replicas"] = c.name.replicas;
      for (const auto& [k, v] : std::vector<std::pair<const char*, const std::string*>>{
               {"pass", &c.name.pass}, {"algorithm", &c.name.algorithm},
               {"device", &c.name.device}, {"shape", &c.name.shape}, {"impl", &c.name.impl},
               {"dtype", &c.name.dtype}, {"op", &c.name.op}, {"source", &c.name.source},
               {"preprocess", &c.name.preprocess}})
        if (!v->empty()) fields[k] = *v;
      if (c.name.bytes) fields["bytes"] = c.name.bytes;
      if (c.name.ranks) fields["ranks"] = c.name.ranks;
      if (c.name.threads) fields["threads"] = c.name.threads;
      auto opt = [](const std::string& s) { return s.empty() ? Value::Null() : Value::Text(s); };
      if (absl::Status s = db.Exec(
              "INSERT INTO cases (name, family, model, precision, data, batch, gpus, device, "
              "fields) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING",
              {Value::Text(name), Value::Text(c.name.family), opt(c.name.model),
               opt(c.name.precision), opt(c.name.data),
               c.name.batch ? Value::Int(c.name.batch) : Value::Null(), Value::Int(c.name.gpus),
               opt(c.name.device), Value::Text(fields.dump())});
          !s.ok())
        return s;
      absl::StatusOr<int64_t> id =
          QueryId(db, "SELECT id FROM cases WHERE name = ?", {Value::Text(name)});
      if (!id.ok()) return id.status();
      cid = case_ids.emplace(name, *id).first;
    }
    const auto [case_settings, case_hash] = settings_of(c.name.model);
    auto sid = series_ids.find({cid->second, case_hash});
    const std::string counter = sid != series_ids.end() ? sid->second.second : SeriesCounter(c);
    const bool higher = !IsTimeCounter(counter);
    if (sid == series_ids.end()) {
      if (absl::Status s = db.Exec(
              "INSERT INTO series (machine_id, case_id, settings_hash, settings, counter, "
              "higher_is_better) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (machine_id, case_id, "
              "settings_hash) DO NOTHING",
              {Value::Int(out.machine_id), Value::Int(cid->second), Value::Text(case_hash),
               Value::Text(case_settings), Value::Text(counter), Value::Int(higher ? 1 : 0)});
          !s.ok())
        return s;
      absl::StatusOr<int64_t> id = QueryId(
          db, "SELECT id FROM series WHERE machine_id = ? AND case_id = ? AND settings_hash = ?",
          {Value::Int(out.machine_id), Value::Int(cid->second), Value::Text(case_hash)});
      if (!id.ok()) return id.status();
      sid = series_ids.emplace(std::make_pair(cid->second, case_hash), std::make_pair(*id, counter))
                .first;
    }
    const int64_t series_id = sid->second.first;
    if (!seen_series.insert(series_id).second) {
      out.warnings.push_back(absl::StrCat(source, ": case ", name,
                                          " written twice; its first entry is stored"));
      continue;
    }
    const CaseSummary s = Summarize(c, counter, higher);
    results.push_back({Value::Int(out.run_id), Value::Int(series_id), Value::Text(s.status),
                       s.message.empty() ? Value::Null() : Value::Text(s.message),
                       Value::Int(s.repetitions), Value::Real(s.value), Value::Real(s.best),
                       Value::Real(s.min), Value::Real(s.max), Value::Real(s.stddev),
                       Value::Int(0)});
    for (size_t i = 0; i < c.iterations.size(); ++i) {
      auto v = c.iterations[i].find(counter);
      repetitions.push_back(
          {Value::Int(out.run_id), Value::Int(series_id), Value::Text("iteration"),
           Value::Int(static_cast<int64_t>(i)),
           v != c.iterations[i].end() ? Value::Real(v->second) : Value::Null(),
           Value::Text(CountersJson(c.iterations[i])),
           Value::Text(CountersJson(i < c.other.size() ? c.other[i] : report::Counters{}))});
    }
    for (const auto& [kind, counters] : {std::pair<const char*, const report::Counters*>{
                                             "mean", &c.mean},
                                         {"stddev", &c.stddev}}) {
      if (counters->empty()) continue;
      auto v = counters->find(counter);
      repetitions.push_back(
          {Value::Int(out.run_id), Value::Int(series_id), Value::Text(kind), Value::Int(0),
           v != counters->end() ? Value::Real(v->second) : Value::Null(),
           Value::Text(CountersJson(*counters)), Value::Text("{}")});
    }
  }
  if (cancelled && cancelled()) return absl::CancelledError("interrupted");
  if (absl::Status s = InsertRows(db, "results",
                                  {"run_id", "series_id", "status", "message", "repetitions",
                                   "value", "best", "min_value", "max_value", "stddev", "pruned"},
                                  results);
      !s.ok())
    return s;
  if (absl::Status s = InsertRows(db, "repetitions",
                                  {"run_id", "series_id", "kind", "repetition", "value",
                                   "counters", "other"},
                                  repetitions);
      !s.ok())
    return s;
  if (cancelled && cancelled()) return absl::CancelledError("interrupted");
  if (absl::Status s = tx.Commit(); !s.ok()) {
    if (absl::IsAlreadyExists(s)) {  // the same run, stored by another writer at once
      absl::StatusOr<bool> stored = existing();
      if (stored.ok() && *stored && number().ok()) return out;
    }
    return s;
  }
  if (absl::Status s = number(); !s.ok()) return s;
  return out;
}

}  // namespace cnnbench::history
