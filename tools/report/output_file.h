// Where the report goes: checked writes (a full disk, a missing folder or a
// permission is an error with its reason), a regular file replaced whole
// through a temporary file beside it, and inputs told apart by file identity.
#ifndef CNNBENCH_TOOLS_REPORT_OUTPUT_FILE_H_
#define CNNBENCH_TOOLS_REPORT_OUTPUT_FILE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace cnnbench::report {

// A file's identity: its device and inode, whatever path names it.
struct FileId {
  unsigned long long device = 0;
  unsigned long long inode = 0;
  bool operator==(const FileId& other) const {
    return device == other.device && inode == other.inode;
  }
};

// The identity of the file `path` names (through symbolic links); empty
// when it does not exist or cannot be reached.
std::optional<FileId> IdentifyFile(const std::string& path);

// An error when `output` is the same file as one of `inputs`: writing the
// report there would destroy that input.
absl::Status CheckNotAnInput(const std::string& output, const std::vector<std::string>& inputs);

// Writes `text` to `path`. A regular file (or a new one) is written to a
// temporary file in the same folder and renamed into place, so a failed
// write leaves the old file as it was; a symbolic link is followed and
// stays a link. A pipe, a device (/dev/full, /dev/stdout) or anything else
// that is not a regular file is written directly. Every write, the flush to
// disk and the close are checked; the error names the path and the reason.
absl::Status WriteOutputFile(const std::string& path, const std::string& text);

// Writes `text` to standard output and closes it, checking both.
absl::Status WriteStandardOutput(const std::string& text);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_OUTPUT_FILE_H_
