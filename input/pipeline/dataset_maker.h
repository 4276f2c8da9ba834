// A small ImageNet-format data set of generated JPEGs (varied sizes, some
// grayscale) with labels and boxes, as TFRecord shards or a folder per
// class: what tools/make_dataset writes, what tests read, and what the
// suite's real-data cases read when no --data_dir is given.
#ifndef CNNBENCH_INPUT_PIPELINE_DATASET_MAKER_H_
#define CNNBENCH_INPUT_PIPELINE_DATASET_MAKER_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "input/pipeline/sources.h"

namespace cnnbench::input {

struct DatasetSpec {
  std::string out;                 // created if missing; must be empty
  int64_t images = 0;              // train images, >= 1
  int64_t validation_images = -1;  // -1: ceil(images / 4); 0: no validation subset
  int classes = 0;                 // 1..1000; image i of a subset has class i % classes
  DataFormat format = DataFormat::kTFRecord;
  int shards = 1;      // train shards (validation: at most as many as its images)
  uint64_t seed = 1;   // the same spec and seed give the same bytes
  int min_side = 200;  // image sides drawn uniformly in [min_side, max_side]
  int max_side = 500;
  int grayscale_every = 7;  // every n-th image is a one-component JPEG; 0: none
};

// Checks the spec's values; errors name the field as make_dataset's flag.
absl::Status ValidateDatasetSpec(const DatasetSpec& spec);

// Writes the data set:
//   tfrecord: <out>/train-NNNNN-of-NNNNN, <out>/validation-NNNNN-of-NNNNN,
//             tf.Examples as ImageNet's build script writes them (label =
//             class + 1, one box per image, image/filename);
//   folder:   <out>/train/<class>/<file>, <out>/validation/<class>/<file>.
// The same spec gives the same JPEG bytes, file names and labels in both
// formats. Class folders are n00000001, n00000002, ... (sorted = numbered).
absl::Status MakeDataset(const DatasetSpec& spec);

// The name of class `class_index` (0-based) and of image `index` of `subset`.
std::string GeneratedClassName(int class_index);
std::string GeneratedFileName(const std::string& subset, int64_t index, int class_index);

// A generated data set in `format` for this process (256 train and 64
// validation images of 10 classes, 200..500 px, 4 train shards), made once
// under $TEST_TMPDIR or /tmp and removed at exit: what the suite's
// real-data cases read when no --data_dir is given.
absl::StatusOr<std::string> GeneratedDataDir(DataFormat format);

}  // namespace cnnbench::input

#endif  // CNNBENCH_INPUT_PIPELINE_DATASET_MAKER_H_
