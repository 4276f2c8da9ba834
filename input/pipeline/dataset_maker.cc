// Generated ImageNet-format data sets (see dataset_maker.h).
#include "input/pipeline/dataset_maker.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <numeric>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/random.h"
#include "core/status.h"
#include "input/example.h"
#include "input/image/jpeg.h"
#include "input/tfrecord.h"

// Errors here name their file or flag already and reach users of
// make_dataset as they are: no file:line trail.
#define RETURN_PLAIN_IF_ERROR(expr)                \
  do {                                             \
    const ::absl::Status maker_status_ = (expr);   \
    if (!maker_status_.ok()) return maker_status_; \
  } while (0)
#define ASSIGN_PLAIN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                 \
  if (!statusor.ok()) return statusor.status();            \
  lhs = std::move(statusor).value()
#define ASSIGN_PLAIN_OR_RETURN(lhs, rexpr) \
  ASSIGN_PLAIN_OR_RETURN_IMPL_(CNNBENCH_CONCAT_(maker_statusor_, __LINE__), lhs, rexpr)

namespace cnnbench::input {
namespace {

constexpr char kSubsets[2][11] = {"train", "validation"};

absl::Status MakeFolder(const std::string& path) {
  if (mkdir(path.c_str(), 0755) == 0 || errno == EEXIST) {
    struct stat st;
    if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return absl::OkStatus();
    return absl::AlreadyExistsError(absl::StrCat(path, " exists and is not a folder"));
  }
  return absl::PermissionDeniedError(
      absl::StrCat("cannot create folder ", path, ": ", std::strerror(errno)));
}

absl::Status WriteWholeFile(const std::string& path, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr)
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create ", path, ": ", std::strerror(errno)));
  const bool wrote = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const int saved = errno;
  const bool closed = std::fclose(f) == 0;
  if (!wrote || !closed)
    return absl::DataLossError(
        absl::StrCat("cannot write ", path, ": ", std::strerror(wrote ? errno : saved)));
  return absl::OkStatus();
}

// One generated image of a subset: its class, JPEG and box.
struct Generated {
  int class_index = 0;
  ImageRecord record;
};

absl::StatusOr<Generated> GenerateImage(const DatasetSpec& spec, int subset, int64_t index) {
  Generated g;
  g.class_index = static_cast<int>(index % spec.classes);
  Rng rng(MixBits64(MixBits64(spec.seed) ^ (static_cast<uint64_t>(subset) << 40) ^
                    static_cast<uint64_t>(index)));
  const int span = spec.max_side - spec.min_side + 1;
  const int height = spec.min_side + static_cast<int>(rng.Next() % span);
  const int width = spec.min_side + static_cast<int>(rng.Next() % span);
  const bool gray =
      spec.grayscale_every > 0 && index % spec.grayscale_every == spec.grayscale_every - 1;
  // The object: a box covering 20..60% of each side, painted in the
  // complement of the class's colour.
  const float bh = 0.2f + 0.4f * static_cast<float>(rng.Uniform());
  const float bw = 0.2f + 0.4f * static_cast<float>(rng.Uniform());
  const float y0 = (1 - bh) * static_cast<float>(rng.Uniform());
  const float x0 = (1 - bw) * static_cast<float>(rng.Uniform());
  BoundingBox box{.xmin = x0, .ymin = y0, .xmax = x0 + bw, .ymax = y0 + bh};

  Image image;
  image.height = height;
  image.width = width;
  image.channels = 3;
  image.pixels.resize(static_cast<size_t>(height) * width * 3);
  const int c = g.class_index;
  const int base[3] = {30 + (c * 67) % 160, 30 + (c * 131) % 160, 30 + (c * 29) % 160};
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const float fy = (y + 0.5f) / height, fx = (x + 0.5f) / width;
      const bool inside = fy >= box.ymin && fy < box.ymax && fx >= box.xmin && fx < box.xmax;
      for (int k = 0; k < 3; ++k) {
        int v = base[k] + static_cast<int>(48 * fx) + static_cast<int>(24 * fy) * (k == 1);
        if (inside) v = 255 - v;
        image.pixels[(static_cast<size_t>(y) * width + x) * 3 + k] =
            static_cast<uint8_t>(std::clamp(v, 0, 255));
      }
    }
  }
  EncodeOptions encode;
  encode.quality = 90;
  encode.grayscale = gray;
  ASSIGN_PLAIN_OR_RETURN(g.record.jpeg, EncodeJpeg(image, encode));
  g.record.label = c + 1;
  g.record.boxes.push_back(box);
  g.record.file_name = GeneratedFileName(kSubsets[subset], index, c);
  g.record.class_text = absl::StrCat("generated class ", c + 1);
  g.record.height = height;
  g.record.width = width;
  return g;
}

absl::Status CheckEmptyOutput(const std::string& out) {
  struct stat st;
  if (stat(out.c_str(), &st) != 0) {
    if (errno != ENOENT)
      return absl::PermissionDeniedError(absl::StrCat("--out=", out, ": ", std::strerror(errno)));
    std::error_code error;
    std::filesystem::create_directories(out, error);
    if (error)
      return absl::PermissionDeniedError(
          absl::StrCat("--out=", out, ": cannot create the folder: ", error.message()));
    return absl::OkStatus();
  }
  if (!S_ISDIR(st.st_mode))
    return absl::InvalidArgumentError(absl::StrCat("--out=", out, " exists and is not a folder"));
  DIR* d = opendir(out.c_str());
  if (d == nullptr)
    return absl::PermissionDeniedError(absl::StrCat("--out=", out, ": ", std::strerror(errno)));
  bool empty = true;
  while (const dirent* e = readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) empty = false;
  closedir(d);
  if (!empty)
    return absl::AlreadyExistsError(
        absl::StrCat("--out=", out, " is not empty: give a new or empty folder"));
  return absl::OkStatus();
}

absl::Status WriteSubset(const DatasetSpec& spec, int subset, int64_t count, int shards) {
  const std::string name = kSubsets[subset];
  if (spec.format == DataFormat::kFolder) {
    const std::string root = absl::StrCat(spec.out, "/", name);
    RETURN_PLAIN_IF_ERROR(MakeFolder(root));
    for (int c = 0; c < std::min<int64_t>(spec.classes, count); ++c)
      RETURN_PLAIN_IF_ERROR(MakeFolder(absl::StrCat(root, "/", GeneratedClassName(c))));
    for (int64_t i = 0; i < count; ++i) {
      ASSIGN_PLAIN_OR_RETURN(Generated g, GenerateImage(spec, subset, i));
      RETURN_PLAIN_IF_ERROR(WriteWholeFile(
          absl::StrCat(root, "/", GeneratedClassName(g.class_index), "/", g.record.file_name),
          g.record.jpeg));
    }
    return absl::OkStatus();
  }
  // As ImageNet's build script: the images in a seeded random order, cut
  // into contiguous shards.
  std::vector<int64_t> order(count);
  std::iota(order.begin(), order.end(), 0);
  Rng rng(MixBits64(spec.seed + 17 + subset));
  for (int64_t i = count - 1; i > 0; --i)
    std::swap(order[i], order[rng.Next() % static_cast<uint64_t>(i + 1)]);
  for (int s = 0; s < shards; ++s) {
    const std::string path = absl::StrFormat("%s/%s-%05d-of-%05d", spec.out, name, s, shards);
    ASSIGN_PLAIN_OR_RETURN(TFRecordWriter writer, TFRecordWriter::Create(path));
    for (int64_t k = count * s / shards; k < count * (s + 1) / shards; ++k) {
      ASSIGN_PLAIN_OR_RETURN(Generated g, GenerateImage(spec, subset, order[k]));
      RETURN_PLAIN_IF_ERROR(writer.Write(SerializeImageExample(g.record)));
    }
    RETURN_PLAIN_IF_ERROR(writer.Close());
  }
  return absl::OkStatus();
}

}  // namespace

std::string GeneratedClassName(int class_index) {
  return absl::StrFormat("n%08d", class_index + 1);
}

std::string GeneratedFileName(const std::string& subset, int64_t index, int class_index) {
  return absl::StrFormat("%s_%s_%06d.JPEG", GeneratedClassName(class_index), subset, index);
}

absl::Status ValidateDatasetSpec(const DatasetSpec& spec) {
  if (spec.out.empty())
    return absl::InvalidArgumentError("--out is required (the folder to write)");
  if (spec.images < 1)
    return absl::InvalidArgumentError(absl::StrCat("--images=", spec.images, ": must be >= 1"));
  if (spec.validation_images < -1)
    return absl::InvalidArgumentError(
        absl::StrCat("--validation_images=", spec.validation_images, ": must be >= 0"));
  if (spec.classes < 1 || spec.classes > 1000)
    return absl::InvalidArgumentError(
        absl::StrCat("--classes=", spec.classes, ": must be in 1..1000 (ImageNet's labels)"));
  if (spec.shards < 1 || spec.shards > 99999)
    return absl::InvalidArgumentError(
        absl::StrCat("--shards=", spec.shards, ": must be in 1..99999"));
  if (spec.format == DataFormat::kTFRecord && spec.shards > spec.images)
    return absl::InvalidArgumentError(absl::StrCat("--shards=", spec.shards,
                                                   ": more shards than --images=", spec.images,
                                                   " (a shard would be empty)"));
  if (spec.min_side < 1 || spec.max_side < spec.min_side || spec.max_side > 4096)
    return absl::InvalidArgumentError(absl::StrCat("--min_side=", spec.min_side,
                                                   " --max_side=", spec.max_side,
                                                   ": need 1 <= min <= max <= 4096"));
  if (spec.grayscale_every < 0)
    return absl::InvalidArgumentError(
        absl::StrCat("--grayscale_every=", spec.grayscale_every, ": must be >= 0"));
  return absl::OkStatus();
}

absl::Status MakeDataset(const DatasetSpec& spec) {
  RETURN_PLAIN_IF_ERROR(ValidateDatasetSpec(spec));
  RETURN_PLAIN_IF_ERROR(CheckEmptyOutput(spec.out));
  const int64_t validation =
      spec.validation_images >= 0 ? spec.validation_images : (spec.images + 3) / 4;
  RETURN_PLAIN_IF_ERROR(WriteSubset(spec, 0, spec.images, spec.shards));
  if (validation > 0)
    RETURN_PLAIN_IF_ERROR(WriteSubset(
        spec, 1, validation, static_cast<int>(std::min<int64_t>(spec.shards, validation))));
  return absl::OkStatus();
}

absl::StatusOr<std::string> GeneratedDataDir(DataFormat format) {
  // Made once per process and format; removed when the process exits.
  struct Made {
    std::mutex mutex;
    std::string root;  // the temporary folder, once made
    std::string dirs[2];
    ~Made() {
      if (!root.empty()) {
        std::error_code ignored;
        std::filesystem::remove_all(root, ignored);
      }
    }
  };
  static Made made;
  std::lock_guard<std::mutex> lock(made.mutex);
  if (made.root.empty()) {
    const char* tmp = std::getenv("TEST_TMPDIR");
    std::string pattern =
        absl::StrCat(tmp != nullptr && *tmp ? tmp : "/tmp", "/cnnbench-data-XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr)
      return absl::PermissionDeniedError(
          absl::StrCat("cannot make a temporary folder ", pattern, ": ", std::strerror(errno)));
    made.root = pattern;
  }
  std::string& dir = made.dirs[format == DataFormat::kTFRecord ? 0 : 1];
  if (dir.empty()) {
    DatasetSpec spec;
    spec.out = absl::StrCat(made.root, "/", DataFormatName(format));
    spec.images = 256;
    spec.validation_images = 64;
    spec.classes = 10;
    spec.format = format;
    spec.shards = 4;
    spec.seed = 1;
    RETURN_PLAIN_IF_ERROR(MakeDataset(spec));
    dir = spec.out;
  }
  return dir;
}

}  // namespace cnnbench::input
