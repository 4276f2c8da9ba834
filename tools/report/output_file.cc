#include "tools/report/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace cnnbench::report {
namespace {

std::string Reason(int error) {
  std::string reason = std::strerror(error);
  if (error == ENOSPC) absl::StrAppend(&reason, " (the disk is full)");
  return reason;
}

absl::Status CannotWrite(const std::string& path, int error) {
  const std::string message = absl::StrCat("cannot write ", path, ": ", Reason(error));
  switch (error) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(message);
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return absl::ResourceExhaustedError(message);
    default:
      return absl::UnavailableError(message);
  }
}

// Writes all of `text`; 0 or the errno of the write that failed.
int WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    done += static_cast<size_t>(n);
  }
  return 0;
}

// The open descriptor a path such as /dev/stdout or /proc/self/fd/3 stands
// for; -1 for any other path.
int DescriptorPath(const std::string& path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  absl::string_view rest = path;
  int fd = -1;
  if ((absl::ConsumePrefix(&rest, "/dev/fd/") || absl::ConsumePrefix(&rest, "/proc/self/fd/")) &&
      absl::SimpleAtoi(rest, &fd) && fd >= 0) {
    return fd;
  }
  return -1;
}

// Writes into the file as it is: pipes, devices and other special files.
absl::Status WriteDirectly(const std::string& path, const std::string& text, bool create) {
  int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC | (create ? O_CREAT : 0), 0666);
  if (fd < 0) return CannotWrite(path, errno);
  int error = WriteAll(fd, text);
  if (close(fd) != 0 && error == 0) error = errno;
  if (error != 0) return CannotWrite(path, error);
  return absl::OkStatus();
}

// Writes a complete copy beside `target` and renames it over `target`.
absl::Status WriteThroughTemporary(const std::string& path, const std::string& target,
                                   const struct stat* existing, const std::string& text) {
  const size_t slash = target.rfind('/');
  const std::string folder = slash == std::string::npos ? "." : target.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
  std::string temporary =
      absl::StrCat(folder, slash == std::string::npos ? "/." : ".", base, ".tmp-XXXXXX");
  int fd = mkstemp(temporary.data());
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR) {
      return absl::NotFoundError(
          absl::StrCat("cannot write ", path, ": the folder ", folder,
                       error == ENOENT ? " does not exist" : " is not a folder"));
    }
    return CannotWrite(path, error);
  }
  // The permissions the file has, or those a newly created file gets.
  mode_t mode;
  if (existing != nullptr) {
    mode = existing->st_mode & 07777;
  } else {
    const mode_t mask = umask(0);
    umask(mask);
    mode = 0666 & ~mask;
  }
  int error = fchmod(fd, mode) == 0 ? 0 : errno;
  if (error == 0) error = WriteAll(fd, text);
  if (error == 0 && fsync(fd) != 0) error = errno;
  if (close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && rename(temporary.c_str(), target.c_str()) != 0) error = errno;
  if (error != 0) {
    unlink(temporary.c_str());
    return CannotWrite(path, error);
  }
  return absl::OkStatus();
}

}  // namespace

std::optional<FileId> IdentifyFile(const std::string& path) {
  struct stat st;
  if (path.empty() || stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileId{static_cast<unsigned long long>(st.st_dev),
                static_cast<unsigned long long>(st.st_ino)};
}

absl::Status CheckNotAnInput(const std::string& output, const std::vector<std::string>& inputs) {
  const std::optional<FileId> out = IdentifyFile(output);
  if (!out) return absl::OkStatus();
  for (const std::string& input : inputs) {
    if (IdentifyFile(input) == out) {
      return absl::InvalidArgumentError(
          absl::StrCat("--output=", output, " is the input ", input,
                       "; refusing to overwrite it (write the report to another file)"));
    }
  }
  return absl::OkStatus();
}

absl::Status WriteOutputFile(const std::string& path, const std::string& text) {
  if (path.empty()) return absl::InvalidArgumentError("no output path");
  const int descriptor = DescriptorPath(path);
  if (descriptor == STDOUT_FILENO) return WriteStandardOutput(text);
  if (descriptor >= 0) {
    const int error = WriteAll(descriptor, text);
    return error == 0 ? absl::OkStatus() : CannotWrite(path, error);
  }
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode) || absl::StartsWith(path, "/dev/") ||
        absl::StartsWith(path, "/proc/")) {
      return WriteDirectly(path, text, /*create=*/false);
    }
    // Replace the file a symbolic link points to, not the link.
    char* resolved = realpath(path.c_str(), nullptr);
    if (resolved == nullptr) return CannotWrite(path, errno);
    const std::string target = resolved;
    std::free(resolved);
    return WriteThroughTemporary(path, target, &st, text);
  }
  if (errno != ENOENT) return CannotWrite(path, errno);
  struct stat link;
  if (lstat(path.c_str(), &link) == 0) {
    // A link to a file yet to be made: create that file, keeping the link.
    return WriteDirectly(path, text, /*create=*/true);
  }
  return WriteThroughTemporary(path, path, nullptr, text);
}

absl::Status WriteStandardOutput(const std::string& text) {
  const std::string what = "the standard output";
  int error = 0;
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size()) error = errno;
  if (std::fflush(stdout) != 0 && error == 0) error = errno;
  if (std::fclose(stdout) != 0 && error == 0) error = errno;
  if (error != 0) return CannotWrite(what, error);
  return absl::OkStatus();
}

}  // namespace cnnbench::report
