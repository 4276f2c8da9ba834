#include "bench/output/result_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <mutex>
#include <optional>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/harness/step_times.h"
#include "bench/output/context.h"
#include "core/json_string.h"

namespace cnnbench::bench {

namespace {

std::string ErrnoText(int error) { return std::strerror(error); }

absl::Status WriteError(const std::string& path, int error) {
  return absl::UnavailableError(absl::StrCat("cannot write '", path, "': ", ErrnoText(error)));
}

// Writes all of `data` to `fd`; returns 0 or the errno of the failure.
int WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    done += static_cast<size_t>(n);
  }
  return 0;
}

// The reporter Google Benchmark would make for `format` (as its own file
// reporter: no colour, no tabular counters).
std::unique_ptr<benchmark::BenchmarkReporter> MakeFormatReporter(const std::string& format) {
  if (format == "json") return std::make_unique<benchmark::JSONReporter>();
  if (format == "console")
    return std::make_unique<benchmark::ConsoleReporter>(benchmark::ConsoleReporter::OO_None);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  return std::make_unique<benchmark::CSVReporter>();
#pragma GCC diagnostic pop
}

}  // namespace

// Keeps what the format's reporter writes in memory: the context, the runs
// and the closing text, each in its own buffer, so the end of the run can
// still add to the context and the file is always written whole. A case
// reported calls `after_case` (outside the lock), which rewrites the target.
class ResultFile::Reporter : public benchmark::BenchmarkReporter {
 public:
  explicit Reporter(const std::string& format)
      : format_(format), inner_(MakeFormatReporter(format)) {}

  bool ReportContext(const Context& context) override {
    std::lock_guard<std::mutex> lock(mutex_);
    // Google Benchmark writes the basic context of csv and console files to
    // the error stream, which it points at the file too.
    inner_->SetOutputStream(&head_);
    inner_->SetErrorStream(&head_);
    const bool ok = inner_->ReportContext(context);
    inner_->SetOutputStream(&runs_);
    inner_->SetErrorStream(&runs_);
    started_ = true;
    return ok;
  }
  void ReportRuns(const std::vector<Run>& runs) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (drop_ && drop_()) return;
      ReportRunsToBuffer(runs);
      // A case's repetitions and its aggregates come in separate calls.
      for (const Run& run : runs) names_.insert(run.run_name.str());
      cases_ = static_cast<int>(names_.size());
    }
    if (after_case_) after_case_();
  }
  void Finalize() override {
    std::lock_guard<std::mutex> lock(mutex_);
    inner_->SetOutputStream(&tail_);
    inner_->SetErrorStream(&tail_);
    inner_->Finalize();
  }

  // The whole file (call with the lock held).
  std::string Text() const {
    if (!started_) return "";
    return WithContext(end_context_ ? end_context_() : ContextEntries{}) + runs_.str() +
           tail_.str();
  }

  // A complete file of the cases reported so far, as if the run had been
  // stopped after them; a JSON context says `interrupted` with the partial
  // note (call with the lock held).
  std::string Partial() {
    if (format_ != "json") return head_.str() + runs_.str();
    const std::string note = partial_note_
                                 ? partial_note_(cases_)
                                 : absl::StrCat("the run had not ended: ", cases_,
                                                " case(s) finished (written as each finished)");
    std::ostringstream tail;
    inner_->SetOutputStream(&tail);
    inner_->Finalize();  // the JSON reporter's closing text only
    inner_->SetOutputStream(&runs_);
    return WithContext({{"interrupted", note}}) + runs_.str() + tail.str();
  }

  std::mutex& mutex() { return mutex_; }
  bool started() const { return started_; }
  int cases() const { return cases_; }

  std::function<bool()> drop_;
  std::function<ContextEntries()> end_context_;
  std::function<std::string(int)> partial_note_;
  std::function<void()> after_case_;

 private:
  void ReportRunsToBuffer(const std::vector<Run>& runs) {
    if (format_ != "json") {
      inner_->ReportRuns(runs);
      return;
    }
    // One run at a time (the JSON reporter separates its calls' entries as
    // it separates the runs of one call), each repetition with its kept
    // step times (bench/harness/step_times.h) as its last field. A counter that is
    // not a finite number (the _cv aggregate of a counter that is 0 in
    // every repetition: top-1 on synthetic labels, one rank's busbw) is left
    // out, as JSON has no NaN and a reader would reject the whole file.
    for (const Run& original : runs) {
      Run run = original;
      for (auto it = run.counters.begin(); it != run.counters.end();)
        it = std::isfinite(it->second.value) ? std::next(it) : run.counters.erase(it);
      std::optional<std::vector<double>> steps;
      if (run.run_type == Run::RT_Iteration && !run.error_occurred)
        steps = StepTimes::Global().Take(run.run_name.str());
      if (!steps) {
        inner_->ReportRuns({run});
        continue;
      }
      std::ostringstream entry;
      inner_->SetOutputStream(&entry);
      inner_->ReportRuns({run});
      inner_->SetOutputStream(&runs_);
      runs_ << WithRankArrivals(WithStepTimes(entry.str(), *steps),
                                StepTimes::Global().TakeRankArrivals(run.run_name.str()));
    }
  }

  // The head with `entries` added to a JSON file's context.
  std::string WithContext(const ContextEntries& entries) const {
    std::string head = head_.str();
    if (format_ != "json" || entries.empty()) return head;
    // The context object closes just before the list of benchmarks.
    const std::string close = "\n  },\n  \"benchmarks\": [";
    const size_t at = head.rfind(close);
    if (at == std::string::npos) return head;
    std::string added;
    for (const auto& [key, value] : entries)
      absl::StrAppend(&added, ",\n    ", JsonString(key), ": ", JsonString(value));
    head.insert(at, added);
    return head;
  }

  std::string format_;
  std::unique_ptr<benchmark::BenchmarkReporter> inner_;
  std::mutex mutex_;
  std::ostringstream head_, runs_, tail_;
  bool started_ = false;
  std::set<std::string> names_;  // the cases reported
  int cases_ = 0;
};

namespace {

// `path` made absolute with its links resolved, the file itself or (for a
// file still to be made) its folder.
std::string ResolvedTarget(const std::string& path) {
  if (char* resolved = ::realpath(path.c_str(), nullptr)) {
    std::string target = resolved;
    std::free(resolved);
    return target;
  }
  const size_t slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (char* resolved = ::realpath(folder.c_str(), nullptr)) {
    std::string target = absl::StrCat(resolved, "/", name);
    std::free(resolved);
    return target;
  }
  return path;
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

absl::StatusOr<std::unique_ptr<ResultFile>> ResultFile::Open(const std::string& path,
                                                             const std::string& format) {
  if (format != "json" && format != "csv" && format != "console")
    return absl::InvalidArgumentError(
        absl::StrCat("--benchmark_out_format=", format, ": unknown format (json, csv, console)"));
  std::unique_ptr<ResultFile> file(new ResultFile);
  file->path_ = path;
  file->reporter_ = std::make_unique<Reporter>(format);
  // A link to a file: the file it names is replaced, the link stays.
  file->target_ = ResolvedTarget(path);
  struct stat existing;
  const bool exists = ::stat(file->target_.c_str(), &existing) == 0;
  if (exists && S_ISDIR(existing.st_mode))
    return absl::InvalidArgumentError(
        absl::StrCat("cannot write '", path, "': it is a folder (give a file name in it)"));
  if (exists && !S_ISREG(existing.st_mode)) {
    // A pipe, a terminal, /dev/null, /dev/full: written directly.
    file->direct_fd_ = ::open(file->target_.c_str(), O_WRONLY | O_CLOEXEC);
    if (file->direct_fd_ < 0) return WriteError(path, errno);
    return file;
  }
  // The temporary's name is fixed for the process, so that a second
  // signal's handler can remove it; made once now to prove the folder takes it.
  file->temp_path_ = absl::StrCat(file->target_, ".cnnbench-", ::getpid(), ".tmp");
  const int probe =
      ::open(file->temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (probe < 0) return WriteError(path, errno);
  ::close(probe);
  ::unlink(file->temp_path_.c_str());
  // The result gets the mode a new file (or the one it replaces) has.
  if (exists) {
    file->mode_ = existing.st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    file->mode_ = 0666 & ~mask;
  }
  file->reporter_->after_case_ = [raw = file.get()] { raw->Checkpoint().IgnoreError(); };
  return file;
}

ResultFile::~ResultFile() {
  if (direct_fd_ >= 0) ::close(direct_fd_);
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
}

benchmark::BenchmarkReporter* ResultFile::reporter() { return reporter_.get(); }

void ResultFile::SetDropCheck(DropCheck drop) { reporter_->drop_ = std::move(drop); }

void ResultFile::SetEndContext(std::function<ContextEntries()> end_context) {
  reporter_->end_context_ = std::move(end_context);
}

void ResultFile::SetPartialNote(std::function<std::string(int cases)> note) {
  reporter_->partial_note_ = std::move(note);
}

std::string ResultFile::Target() const { return target_; }

int ResultFile::cases_in_target() const { return written_cases_.load(); }

absl::Status ResultFile::Replace(const std::string& text, bool sync) {
  const int fd =
      ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode_);
  if (fd < 0) return WriteError(path_, errno);
  ::fchmod(fd, mode_);  // the umask may have narrowed it
  int error = WriteAll(fd, text);
  if (error == 0 && sync && ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && ::rename(temp_path_.c_str(), target_.c_str()) != 0) error = errno;
  if (error == 0) return absl::OkStatus();
  ::unlink(temp_path_.c_str());
  return WriteError(path_, error);
}

absl::Status ResultFile::Checkpoint() {
  std::lock_guard<std::mutex> lock(reporter_->mutex());
  if (committed_ || temp_path_.empty() || !reporter_->started() || reporter_->cases() == 0)
    return absl::OkStatus();
  const int cases = reporter_->cases();
  absl::Status written = Replace(reporter_->Partial(), /*sync=*/false);
  if (written.ok()) {
    if (failing_)
      std::fprintf(stderr, "cnnbench: '%s' is written again (%d case(s))\n", path_.c_str(), cases);
    failing_ = false;
    written_cases_.store(cases);
    return written;
  }
  // Said once while it lasts (a full disk fails every rewrite); the target
  // keeps what it had, and the run goes on.
  if (!failing_)
    std::fprintf(stderr,
                 "cnnbench: warning: %s (updating it with the %d finished case(s)); it keeps %s; "
                 "the run goes on and tries again after each case\n",
                 std::string(written.message()).c_str(), cases,
                 written_cases_.load() > 0
                     ? absl::StrCat("the first ", written_cases_.load()).c_str()
                     : "what it held before the run");
  std::fflush(stderr);
  failing_ = true;
  return written;
}

std::string ResultFile::Rescue(const std::string& text, std::string* reasons) {
  std::vector<std::string> folders;
  auto add = [&folders](const char* folder) {
    if (folder != nullptr && *folder != '\0' &&
        std::find(folders.begin(), folders.end(), folder) == folders.end())
      folders.push_back(folder);
  };
  add(std::getenv("TMPDIR"));
  add("/tmp");
  add("/dev/shm");  // memory: takes the results when the disk is full
  add(std::getenv("HOME"));
  for (const std::string& folder : folders) {
    std::string rescue = absl::StrCat(folder, "/", BaseName(target_), ".cnnbench-rescued-XXXXXX");
    const int fd = ::mkstemp(rescue.data());
    if (fd < 0) {
      absl::StrAppend(reasons, reasons->empty() ? "" : "; ", folder, ": ", ErrnoText(errno));
      continue;
    }
    ::fchmod(fd, mode_);
    int error = WriteAll(fd, text);
    if (error == 0 && ::fsync(fd) != 0) error = errno;
    if (::close(fd) != 0 && error == 0) error = errno;
    if (error == 0) return rescue;
    ::unlink(rescue.c_str());
    absl::StrAppend(reasons, reasons->empty() ? "" : "; ", folder, ": ", ErrnoText(error));
  }
  return "";
}

absl::Status ResultFile::Commit() { return Close(/*whole=*/true); }

absl::Status ResultFile::CommitPartial() { return Close(/*whole=*/false); }

absl::Status ResultFile::Close(bool whole) {
  std::lock_guard<std::mutex> lock(reporter_->mutex());
  if (committed_) return absl::FailedPreconditionError(absl::StrCat("'", path_, "' is closed"));
  committed_ = true;
  if (!whole && !reporter_->started()) return absl::OkStatus();  // nothing ran: left as it was
  const std::string text = whole ? reporter_->Text() : reporter_->Partial();
  if (direct_fd_ >= 0) {
    int error = WriteAll(direct_fd_, text);
    const int fd = direct_fd_;
    direct_fd_ = -1;
    if (::close(fd) != 0 && error == 0) error = errno;
    return error == 0 ? absl::OkStatus() : WriteError(path_, error);
  }
  const absl::Status written = Replace(text, /*sync=*/true);
  if (written.ok()) {
    written_cases_.store(reporter_->cases());
    return written;
  }
  // The results outlive the failure: saved in a file of their own where
  // one can be made (a full disk: a memory-backed folder), and the target
  // keeps the last complete file it held.
  std::string reasons;
  rescue_path_ = Rescue(text, &reasons);
  const int kept = written_cases_.load();
  const std::string in_target =
      kept > 0
          ? absl::StrCat("'", path_, "' holds the first ", kept, " case(s), marked interrupted")
          : absl::StrCat("'", path_, "' is as it was before the run");
  if (!rescue_path_.empty())
    return absl::Status(written.code(),
                        absl::StrCat(written.message(), "; ", in_target, "; the whole run (",
                                     reporter_->cases(), " case(s)) is saved in ", rescue_path_));
  // Nowhere to save it: the text itself goes to stderr, between two lines.
  std::fprintf(stderr,
               "cnnbench: ---- the run's results (%s could not be written) ----\n%s\n"
               "cnnbench: ---- end of the run's results ----\n",
               path_.c_str(), text.c_str());
  return absl::Status(written.code(), absl::StrCat(written.message(), "; ", in_target,
                                                   "; no other folder took the results either (",
                                                   reasons, "): they are printed above on stderr"));
}

namespace {

class DisplayReporter : public benchmark::BenchmarkReporter {
 public:
  // The library may keep the reporter it creates: never deleted here.
  explicit DisplayReporter(DropCheck drop)
      : inner_(benchmark::CreateDefaultDisplayReporter()), drop_(std::move(drop)) {}

  bool ReportContext(const Context& context) override {
    // The library prints its warnings on the error stream: pass them on and
    // explain the one about its build type.
    std::ostringstream warnings;
    std::ostream& err = inner_->GetErrorStream();
    inner_->SetErrorStream(&warnings);
    const bool ok = inner_->ReportContext(context);
    inner_->SetErrorStream(&err);
    err << warnings.str();
    if (absl::StrContains(warnings.str(), "Library was built as DEBUG"))
      err << "cnnbench: " << kLibraryBuildTypeNote << "\n";
    err.flush();
    return ok;
  }
  void ReportRuns(const std::vector<Run>& runs) override {
    if (drop_ && drop_()) return;
    inner_->ReportRuns(runs);
  }
  void Finalize() override { inner_->Finalize(); }

 private:
  benchmark::BenchmarkReporter* inner_;
  DropCheck drop_;
};

}  // namespace

std::unique_ptr<benchmark::BenchmarkReporter> MakeDisplayReporter(DropCheck drop) {
  return std::make_unique<DisplayReporter>(std::move(drop));
}

}  // namespace cnnbench::bench
