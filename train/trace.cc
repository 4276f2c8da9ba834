#include "train/trace.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/json_string.h"

namespace cnnbench {

absl::Status StepTimer::EnsureTimer(const Stream& stream) {
  if (timer_ != nullptr) return absl::OkStatus();
  absl::StatusOr<Timer> timer = Timer::Create(stream);
  if (!timer.ok()) return timer.status();
  timer_ = std::make_unique<Timer>(*std::move(timer));
  return absl::OkStatus();
}

absl::Status StepTimer::SetProfiling(bool on, const Stream& stream) {
  if (on) {
    absl::Status made = EnsureTimer(stream);
    if (!made.ok()) return made;
  }
  profiling_ = on;
  return absl::OkStatus();
}

absl::Status StepTimer::StartTrace(std::vector<TraceSlice>* sink, const Stream& stream,
                                   std::chrono::steady_clock::time_point origin) {
  absl::Status made = EnsureTimer(stream);
  if (!made.ok()) return made;
  trace_ = sink;
  origin_ = origin;
  return absl::OkStatus();
}

void StepTimer::Record(const LayerTime& time, bool executor, const char* category,
                       std::chrono::steady_clock::time_point begun, double seconds) {
  TraceSlice slice;
  slice.name = executor ? absl::StrCat("(", time.name, ")") : time.name;
  slice.category = category;
  slice.lane = "compute";
  if (!executor) {
    slice.op = time.op;
    const bool backward = std::strcmp(category, "backward") == 0;
    slice.implementation = backward && !time.backward_implementation.empty()
                               ? time.backward_implementation
                               : time.implementation;
  }
  slice.start_us = Since(begun);
  slice.duration_us = seconds * 1e6;
  trace_->push_back(std::move(slice));
}

std::string ChromeTraceJson(const std::vector<TraceProcess>& processes) {
  // Lanes numbered in order of first use, across the processes.
  std::map<std::string, int> lanes;
  for (const TraceProcess& p : processes)
    for (const TraceSlice& s : p.slices) lanes.emplace(s.lane, static_cast<int>(lanes.size()) + 1);
  std::string out = "[\n";
  const char* separator = "";
  for (size_t pid = 1; pid <= processes.size(); ++pid) {
    const TraceProcess& p = processes[pid - 1];
    absl::StrAppend(&out, separator, R"(  {"name": "process_name", "ph": "M", "pid": )", pid,
                    R"(, "args": {"name": )", JsonString(p.name), "}}");
    separator = ",\n";
    std::set<std::string> used;
    for (const TraceSlice& s : p.slices) used.insert(s.lane);
    for (const auto& [lane, tid] : lanes)
      if (used.count(lane))
        absl::StrAppend(&out, separator, R"(  {"name": "thread_name", "ph": "M", "pid": )", pid,
                        R"(, "tid": )", tid, R"(, "args": {"name": )", JsonString(lane), "}}");
  }
  for (size_t pid = 1; pid <= processes.size(); ++pid)
    for (const TraceSlice& s : processes[pid - 1].slices) {
      absl::StrAppend(&out, separator, "  {\"name\": ", JsonString(s.name),
                      ", \"cat\": ", JsonString(s.category), ", \"ph\": \"X\", \"pid\": ", pid,
                      ", \"tid\": ", lanes[s.lane],
                      absl::StrFormat(", \"ts\": %.3f, \"dur\": %.3f", s.start_us, s.duration_us),
                      ", \"args\": {\"pass\": ", JsonString(s.category));
      if (!s.op.empty()) absl::StrAppend(&out, ", \"op\": ", JsonString(s.op));
      if (!s.implementation.empty())
        absl::StrAppend(&out, ", \"implementation\": ", JsonString(s.implementation));
      out += "}}";
    }
  out += "\n]\n";
  return out;
}

absl::Status CheckTraceFilePath(const std::string& path, const std::string& flag) {
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat(flag, "=", path, ": ", why));
  };
  if (path.empty()) return bad("empty (leave it out for no trace)");
  if (path.back() == '/') return bad("a folder; give a file name such as trace.json");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return bad("a folder; give a file name such as trace.json");
    if (!S_ISREG(st.st_mode))
      return bad("not a regular file (a device or a pipe); give a file name such as trace.json");
  }
  const size_t slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  if (::stat(folder.c_str(), &st) != 0)
    return bad(absl::StrCat("its folder ", folder, " cannot be used: ", std::strerror(errno)));
  if (!S_ISDIR(st.st_mode)) return bad(absl::StrCat(folder, " is not a folder"));
  if (::access(folder.c_str(), W_OK) != 0)
    return bad(absl::StrCat("its folder ", folder, " cannot be written: ", std::strerror(errno)));
  return absl::OkStatus();
}

absl::Status WriteChromeTrace(const std::string& path, const std::vector<TraceProcess>& processes) {
  std::ofstream file(path, std::ios::trunc);
  if (!file)
    return absl::UnavailableError(
        absl::StrCat("cannot write the trace file ", path, ": ", std::strerror(errno)));
  file << ChromeTraceJson(processes);
  file.close();
  if (!file)
    return absl::DataLossError(
        absl::StrCat("writing the trace file ", path, " failed: ", std::strerror(errno)));
  return absl::OkStatus();
}

}  // namespace cnnbench
