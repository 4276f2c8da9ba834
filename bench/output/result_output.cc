#include "bench/output/result_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/output/context.h"
#include "bench/harness/step_times.h"
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
// still add to the context and nothing reaches the file before Commit.
class ResultFile::Reporter : public benchmark::BenchmarkReporter {
 public:
  explicit Reporter(const std::string& format)
      : format_(format), inner_(MakeFormatReporter(format)) {}

  bool ReportContext(const Context& context) override {
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
    if (drop_ && drop_()) return;
    ReportRunsToBuffer(runs);
    ++cases_;
    if (snapshot_) snapshot_(Snapshot());
  }
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
      runs_ << WithStepTimes(entry.str(), *steps);
    }
  }
  void Finalize() override {
    inner_->SetOutputStream(&tail_);
    inner_->SetErrorStream(&tail_);
    inner_->Finalize();
  }

  // The whole file.
  std::string Text() const {
    if (!started_) return "";
    return WithContext(end_context_ ? end_context_() : ContextEntries{}) + runs_.str() +
           tail_.str();
  }

  // A complete JSON file of the cases reported so far, as if the run had
  // been stopped after them.
  std::string Snapshot() {
    ContextEntries entries = end_context_ ? end_context_() : ContextEntries{};
    entries.push_back(
        {"interrupted", absl::StrCat("a signal, after ", cases_,
                                     " case(s) had finished (written as each finished; the "
                                     "process was ended before the run could write more)")});
    std::ostringstream tail;
    inner_->SetOutputStream(&tail);
    inner_->Finalize();  // the JSON reporter's closing text only
    inner_->SetOutputStream(&runs_);
    return WithContext(entries) + runs_.str() + tail.str();
  }

  std::function<bool()> drop_;
  std::function<ContextEntries()> end_context_;
  std::function<void(const std::string&)> snapshot_;  // given each snapshot's text
  const std::string& format() const { return format_; }

 private:
  std::string format_;
  std::unique_ptr<benchmark::BenchmarkReporter> inner_;
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

  std::ostringstream head_, runs_, tail_;
  bool started_ = false;
  int cases_ = 0;  // ReportRuns calls kept: one per case
};

absl::StatusOr<std::unique_ptr<ResultFile>> ResultFile::Open(const std::string& path,
                                                             const std::string& format) {
  if (format != "json" && format != "csv" && format != "console")
    return absl::InvalidArgumentError(
        absl::StrCat("--benchmark_out_format=", format, ": unknown format (json, csv, console)"));
  std::unique_ptr<ResultFile> file(new ResultFile);
  file->path_ = path;
  file->reporter_ = std::make_unique<Reporter>(format);

  // A link to a file: the file it names is replaced, the link stays.
  std::string target = path;
  if (char* resolved = ::realpath(path.c_str(), nullptr)) {
    target = resolved;
    std::free(resolved);
  }
  struct stat existing;
  const bool exists = ::stat(target.c_str(), &existing) == 0;
  if (exists && !S_ISREG(existing.st_mode)) {
    // A pipe, a terminal, /dev/null, /dev/full: written directly.
    file->fd_ = ::open(target.c_str(), O_WRONLY | O_CLOEXEC);
    if (file->fd_ < 0) return WriteError(path, errno);
    return file;
  }
  std::string temp = target + ".cnnbench-XXXXXX";
  file->fd_ = ::mkstemp(temp.data());
  if (file->fd_ < 0) return WriteError(path, errno);
  file->temp_path_ = temp;
  // mkstemp makes it private; the result gets the mode a new file (or the
  // one it replaces) has.
  mode_t mode = 0;
  if (exists) {
    mode = existing.st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  ::fchmod(file->fd_, mode);
  return file;
}

ResultFile::~ResultFile() { Abandon(); }

benchmark::BenchmarkReporter* ResultFile::reporter() { return reporter_.get(); }

void ResultFile::SetDropCheck(DropCheck drop) { reporter_->drop_ = std::move(drop); }

void ResultFile::SetEndContext(std::function<ContextEntries()> end_context) {
  reporter_->end_context_ = std::move(end_context);
}

std::string ResultFile::Target() const {
  std::string target = path_;
  if (char* resolved = ::realpath(path_.c_str(), nullptr)) {
    target = resolved;
    std::free(resolved);
  }
  return target;
}

absl::Status ResultFile::KeepSnapshots() {
  if (reporter_->format() != "json" || temp_path_.empty()) return absl::OkStatus();
  std::string snapshot = Target() + ".cnnbench-partial-XXXXXX";
  const int fd = ::mkstemp(snapshot.data());
  if (fd < 0) return WriteError(path_, errno);
  ::close(fd);
  ::unlink(snapshot.c_str());  // the name only: no snapshot until a case finishes
  snapshot_path_ = snapshot;
  mode_t mode = 0644;
  struct stat st;
  if (::fstat(fd_, &st) == 0) mode = st.st_mode & 07777;
  reporter_->snapshot_ = [snapshot, mode](const std::string& text) {
    // A fresh file renamed over the last: the snapshot is always whole. A
    // failure loses only the snapshot; the run's own file is still written.
    const std::string next = snapshot + ".next";
    const int out = ::open(next.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (out < 0) return;
    const int error = WriteAll(out, text);
    if (::close(out) != 0 || error != 0) {
      ::unlink(next.c_str());
      return;
    }
    if (::rename(next.c_str(), snapshot.c_str()) != 0) ::unlink(next.c_str());
  };
  return absl::OkStatus();
}

absl::Status ResultFile::Commit() {
  if (fd_ < 0) return absl::FailedPreconditionError(absl::StrCat("'", path_, "' is closed"));
  RemoveSnapshot();
  int error = WriteAll(fd_, reporter_->Text());
  if (error == 0 && !temp_path_.empty() && ::fsync(fd_) != 0) error = errno;
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
    temp_path_.clear();
    return WriteError(path_, error);
  }
  if (temp_path_.empty()) return absl::OkStatus();
  std::string target = path_;
  if (char* resolved = ::realpath(path_.c_str(), nullptr)) {
    target = resolved;
    std::free(resolved);
  }
  if (::rename(temp_path_.c_str(), target.c_str()) != 0) {
    error = errno;
    ::unlink(temp_path_.c_str());
    temp_path_.clear();
    return WriteError(path_, error);
  }
  temp_path_.clear();
  return absl::OkStatus();
}

void ResultFile::RemoveSnapshot() {
  if (snapshot_path_.empty()) return;
  reporter_->snapshot_ = nullptr;
  ::unlink(snapshot_path_.c_str());
  ::unlink((snapshot_path_ + ".next").c_str());
}

void ResultFile::Abandon() {
  RemoveSnapshot();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
  temp_path_.clear();
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
