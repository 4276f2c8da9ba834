// Where a data set's records live: ImageNet TFRecord shards
// (<data_dir>/<subset>-NNNNN-of-NNNNN) or a folder of JPEGs per class, as
// torchvision's ImageFolder (<data_dir>/<subset>/<class>/<file>, or
// <data_dir>/<class>/<file> when there is no <subset> folder). Folder labels
// number the sorted class names from 1, as ImageNet's TFRecord labels do, so
// both readers give an image the same label.
#ifndef CNNBENCH_INPUT_PIPELINE_SOURCES_H_
#define CNNBENCH_INPUT_PIPELINE_SOURCES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cnnbench::input {

enum class DataFormat { kTFRecord, kFolder };

absl::string_view DataFormatName(DataFormat format);  // "tfrecord", "folder"
absl::StatusOr<DataFormat> ParseDataFormat(absl::string_view name);

// The label a folder reader gives class `class_index` (0-based in sorted
// order): 1-based, as ImageNet's TFRecord labels.
inline int64_t FolderLabel(int class_index) { return class_index + 1; }

struct FolderImage {
  std::string path;   // <root>/<class>/<file>
  std::string name;   // <file>
  int64_t label = 0;  // FolderLabel of its class
};

struct ImageFolderIndex {
  std::string root;
  std::vector<std::string> classes;  // sorted
  std::vector<FolderImage> images;   // by class, then file name
};

// Lists <root>/<class>/<file> (regular files; hidden entries ignored).
// Errors: no such folder, no class folders, a class folder with no files
// (naming it), more than 1000 classes.
absl::StatusOr<ImageFolderIndex> IndexImageFolder(const std::string& root);

// The folder of `subset` in a folder-format data set: <data_dir>/<subset>
// when it, or a "train" or "validation" folder, exists; else <data_dir>.
std::string FolderRoot(const std::string& data_dir, const std::string& subset);

// The up-front check of --data_dir: OK when `data_dir` holds `subset` in
// `format` (a complete shard set, or class folders with images). Errors say
// which flag and what is wrong: missing, not a folder, empty, no matching
// shards or class folders.
absl::Status CheckDataDir(const std::string& data_dir, DataFormat format,
                          const std::string& subset = "train");

// The formats `data_dir` holds `subset` in (both, one, or none: an error
// saying what was found).
absl::StatusOr<std::vector<DataFormat>> DetectDataFormats(const std::string& data_dir,
                                                          const std::string& subset = "train");

}  // namespace cnnbench::input

#endif  // CNNBENCH_INPUT_PIPELINE_SOURCES_H_
