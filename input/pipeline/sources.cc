// Finding a data set's records on disk.
#include "input/pipeline/sources.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "input/shards.h"

namespace cnnbench::input {
namespace {

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Names in `dir` (no hidden ones), sorted; `want_dirs` selects folders or
// regular files.
absl::StatusOr<std::vector<std::string>> ListNames(const std::string& dir, bool want_dirs) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr)
    return absl::NotFoundError(
        absl::StrCat("cannot open folder ", dir, ": ", std::strerror(errno)));
  std::vector<std::string> names;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.empty() || name[0] == '.') continue;
    struct stat st;
    const std::string path = absl::StrCat(dir, "/", name);
    if (stat(path.c_str(), &st) != 0) continue;
    if (want_dirs ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)) names.push_back(name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

absl::string_view DataFormatName(DataFormat format) {
  return format == DataFormat::kTFRecord ? "tfrecord" : "folder";
}

absl::StatusOr<DataFormat> ParseDataFormat(absl::string_view name) {
  if (name == "tfrecord") return DataFormat::kTFRecord;
  if (name == "folder") return DataFormat::kFolder;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown data format '", name, "' (tfrecord or folder)"));
}

absl::StatusOr<ImageFolderIndex> IndexImageFolder(const std::string& root) {
  if (!IsDirectory(root))
    return absl::NotFoundError(
        absl::StrCat("image folder ", root, " does not exist or is not a folder"));
  ImageFolderIndex index;
  index.root = root;
  absl::StatusOr<std::vector<std::string>> classes = ListNames(root, /*want_dirs=*/true);
  if (!classes.ok()) return classes.status();
  if (classes->empty())
    return absl::NotFoundError(
        absl::StrCat("image folder ", root, " has no class folders (<root>/<class>/<file>)"));
  if (classes->size() > 1000)
    return absl::InvalidArgumentError(absl::StrCat("image folder ", root, " has ", classes->size(),
                                                   " class folders; at most 1000"));
  index.classes = *std::move(classes);
  for (size_t c = 0; c < index.classes.size(); ++c) {
    const std::string dir = absl::StrCat(root, "/", index.classes[c]);
    absl::StatusOr<std::vector<std::string>> files = ListNames(dir, /*want_dirs=*/false);
    if (!files.ok()) return files.status();
    if (files->empty())
      return absl::NotFoundError(absl::StrCat("class folder ", dir, " has no image files"));
    for (std::string& f : *files)
      index.images.push_back(FolderImage{
          .path = absl::StrCat(dir, "/", f), .name = f, .label = FolderLabel(static_cast<int>(c))});
  }
  return index;
}

std::string FolderRoot(const std::string& data_dir, const std::string& subset) {
  // A data set split into subsets names the missing one rather than taking
  // the other subset's folder for a class.
  const std::string sub = absl::StrCat(data_dir, "/", subset);
  if (IsDirectory(sub) || IsDirectory(data_dir + "/train") || IsDirectory(data_dir + "/validation"))
    return sub;
  return data_dir;
}

absl::Status CheckDataDir(const std::string& data_dir, DataFormat format,
                          const std::string& subset) {
  auto flag_error = [&](const absl::Status& s) {
    return absl::Status(
        s.code(), absl::StrCat("--data_dir=", data_dir, " (", DataFormatName(format), ", ", subset,
                               "): ", s.message()));
  };
  if (data_dir.empty())
    return absl::InvalidArgumentError("--data_dir is empty: give a data set folder");
  struct stat st;
  if (stat(data_dir.c_str(), &st) != 0)
    return flag_error(
        absl::NotFoundError(absl::StrCat("no such folder (", std::strerror(errno), ")")));
  if (!S_ISDIR(st.st_mode)) return flag_error(absl::InvalidArgumentError("not a folder"));
  absl::StatusOr<std::vector<std::string>> any = ListNames(data_dir, /*want_dirs=*/false);
  absl::StatusOr<std::vector<std::string>> dirs = ListNames(data_dir, /*want_dirs=*/true);
  if (!any.ok()) return flag_error(any.status());
  if (!dirs.ok()) return flag_error(dirs.status());
  if (any->empty() && dirs->empty()) return flag_error(absl::NotFoundError("the folder is empty"));
  if (format == DataFormat::kTFRecord) {
    absl::StatusOr<std::vector<std::string>> shards = FindShards(data_dir, subset);
    if (!shards.ok()) return flag_error(shards.status());
    return absl::OkStatus();
  }
  absl::StatusOr<ImageFolderIndex> index = IndexImageFolder(FolderRoot(data_dir, subset));
  if (!index.ok()) return flag_error(index.status());
  return absl::OkStatus();
}

absl::StatusOr<std::vector<DataFormat>> DetectDataFormats(const std::string& data_dir,
                                                          const std::string& subset) {
  std::vector<DataFormat> found;
  std::string why;
  for (DataFormat f : {DataFormat::kTFRecord, DataFormat::kFolder}) {
    const absl::Status s = CheckDataDir(data_dir, f, subset);
    if (s.ok()) {
      found.push_back(f);
    } else {
      if (!why.empty()) why += "; ";
      why += std::string(s.message());
    }
  }
  if (found.empty()) return absl::NotFoundError(why);
  return found;
}

}  // namespace cnnbench::input
