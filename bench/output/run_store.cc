#include "bench/output/run_store.h"

#include <chrono>
#include <cstdio>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tools/history/store.h"

namespace cnnbench::bench {
namespace {

std::string Percent(double ratio) { return absl::StrFormat("%+.1f%%", (ratio - 1) * 100); }

// " --store=SPEC" for a store other than the default, its password hidden.
std::string StoreFlag(const std::string& spec) {
  return spec == history::kDefaultStore ? "" : absl::StrCat(" --store=", history::RedactedUri(spec));
}

std::string ImportLater(const std::string& spec, const std::string& json_path) {
  return absl::StrCat("import it later: ./bazelw run //tools:history -- import ", json_path,
                      StoreFlag(spec));
}

}  // namespace

absl::Status CheckStoreSpec(const std::string& spec) {
  if (spec.empty())
    return absl::InvalidArgumentError(
        "--store=: empty (a SQLite file, postgresql://user@host/db, or none)");
  if (spec == "none" || history::IsPostgresUri(spec)) return absl::OkStatus();
  // A yes/no word is a flag mistyped, not a file to make: "--store=false"
  // made a SQLite file named "false" in the working folder.
  for (const char* word : {"false", "true", "no", "yes", "off", "on", "0", "1"})
    if (spec == word)
      return absl::InvalidArgumentError(absl::StrCat(
          "--store=", spec, ": a yes/no word, not a store (--store=none keeps nothing; a file "
                            "name with a path or an extension, e.g. ./",
          spec, ".db, is taken as a SQLite file)"));
  if (spec.back() == '/')
    return absl::InvalidArgumentError(
        absl::StrCat("--store=", spec, ": a folder; give the store's file (", spec,
                     "cnnbench.db)"));
  return absl::OkStatus();
}

StoreReport StoreRun(const std::string& spec, const std::string& json_path,
                     const std::string& format) {
  StoreReport report;
  if (spec == "none") return report;
  const std::string where = history::IsPostgresUri(spec) ? history::RedactedUri(spec) : spec;
  if (format != "json") {
    report.lines = absl::StrCat("not stored in ", where, ": the store reads JSON and this run wrote ",
                                format, " (--benchmark_out_format=json keeps it)\n");
    return report;
  }
  absl::StatusOr<std::unique_ptr<history::Store>> store = history::Store::Open(spec, true);
  if (!store.ok()) {
    report.lines = absl::StrCat("not stored: ", store.status().message(), "; the results are in ",
                                json_path, "; ", ImportLater(spec, json_path), "\n");
    return report;
  }
  std::vector<std::string> warnings;
  absl::StatusOr<history::ImportOutcome> got = (*store)->ImportFile(json_path, &warnings);
  if (!got.ok()) {
    report.lines = absl::StrCat("not stored in ", where, ": ", got.status().message(),
                                "; the results are in ", json_path, "; ",
                                ImportLater(spec, json_path), "\n");
    return report;
  }
  report.stored = true;
  // What the store had to say of the file (the reader's skipped entries, a
  // case written twice), before where it went.
  for (const std::string& w : warnings) absl::StrAppend(&report.lines, "warning: store: ", w, "\n");
  for (const std::string& w : got->warnings)
    absl::StrAppend(&report.lines, "warning: store: ", w, "\n");
  std::string line =
      got->already_stored
          ? absl::StrCat("already stored as run ", got->run_id, " in ", where)
          : absl::StrCat("stored as run ", got->run_number, " of this machine (", got->platform,
                         ") in ", where, got->interrupted ? ", marked interrupted" : "");
  // What changed with this run, against its series' history.
  if (got->run_number <= 1) {
    absl::StrAppend(&line, "; the machine's first run: nothing to compare with yet");
  } else {
    history::ChangeQuery q;
    q.machine_id = got->machine_id;
    q.run_id = got->run_id;
    q.repo_dir = ".";
    std::vector<history::StoredChange> off_band;
    q.departures = &off_band;
    absl::StatusOr<std::vector<history::StoredChange>> changes = (*store)->FindChanges(q);
    const std::vector<history::StoredChange>* departures = &off_band;
    if (!changes.ok()) {
      absl::StrAppend(&line, "; changes not checked: ", changes.status().message());
    } else if (changes->empty() && departures->empty()) {
      absl::StrAppend(&line, "; no change since the last run");
    } else {
      auto list = [](const std::vector<history::StoredChange>& all, bool since) {
        std::vector<std::string> shown;
        for (size_t i = 0; i < all.size() && i < 3; ++i) {
          const history::StoredChange& c = all[i];
          shown.push_back(absl::StrCat(c.case_name, ": ", Percent(c.ratio),
                                       since ? absl::StrCat(" since run ", c.before_run) : "",
                                       ", ", c.cause));
        }
        if (all.size() > 3) shown.push_back("...");
        return absl::StrJoin(shown, "; ");
      };
      if (!changes->empty())
        absl::StrAppend(&line, "; ", changes->size(), " change(s) found with this run (",
                        list(*changes, true), ")");
      if (!departures->empty())
        absl::StrAppend(&line, "; ", departures->size(),
                        " case(s) outside their history's band in this run (",
                        list(*departures, false), "; a change once ", q.params.min_segment,
                        " runs hold the new level)");
    }
  }
  absl::StrAppend(&report.lines, line, "\ndashboard: ./bazelw run //tools:history -- dashboard",
                  StoreFlag(spec), "\n");
  return report;
}

void PrintStoreReport(const StoreReport& stored, bool to_stdout) {
  if (stored.lines.empty()) return;
  FILE* to = stored.stored && to_stdout ? stdout : stderr;
  std::fflush(stdout);
  std::fprintf(to, "%s%s", stored.stored ? "" : "cnnbench: warning: ", stored.lines.c_str());
  std::fflush(to);
}

}  // namespace cnnbench::bench
