// ImageNet's tf.Example records as tf_cnn_benchmarks reads them: the JPEG
// bytes, the label and the bounding boxes; the writer adds the other
// features TensorFlow's ImageNet build script writes. Also the policy that
// maps a record's label (1..1000, 0 = background) onto a model's classes.
#ifndef CNNBENCH_INPUT_EXAMPLE_H_
#define CNNBENCH_INPUT_EXAMPLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cnnbench::input {

// Corners as fractions of the image's width and height, each in [0, 1],
// min <= max (image/object/bbox/{xmin,ymin,xmax,ymax}).
struct BoundingBox {
  float xmin = 0, ymin = 0, xmax = 0, ymax = 0;
  bool operator==(const BoundingBox& o) const {
    return xmin == o.xmin && ymin == o.ymin && xmax == o.xmax && ymax == o.ymax;
  }
};

struct ImageRecord {
  std::string jpeg;                // image/encoded
  int64_t label = 0;               // image/class/label, as stored (1..1000 for ImageNet)
  std::vector<BoundingBox> boxes;  // possibly empty
  // Optional: read when present with the expected type, otherwise left
  // empty/0; written when set.
  std::string file_name;   // image/filename
  std::string class_text;  // image/class/text (a synset's description)
  int64_t height = 0;      // image/height
  int64_t width = 0;       // image/width

  bool operator==(const ImageRecord& o) const {
    return jpeg == o.jpeg && label == o.label && boxes == o.boxes && file_name == o.file_name &&
           class_text == o.class_text && height == o.height && width == o.width;
  }
};

// Parses a serialized tf.Example. Required: image/encoded (one non-empty
// bytes value) and image/class/label (one int64 value). The four bbox float
// lists may be absent or empty but must have one length, with values in
// [0, 1] and min <= max. Other features are ignored. Errors
// (InvalidArgument) name the feature; the caller adds file and record.
absl::StatusOr<ImageRecord> ParseImageExample(absl::string_view bytes);

// Serializes `record` as the ImageNet build script does: the features above
// plus image/object/bbox/label (the label per box), image/colorspace "RGB",
// image/channels 3 and image/format "JPEG". Deterministic: the same record
// gives the same bytes.
std::string SerializeImageExample(const ImageRecord& record);

// Maps a record's label onto a model with `classes` outputs: 1001 (ImageNet
// plus background, tf_cnn_benchmarks' default) takes labels 0..1000 as
// written; 1000 takes 1..1000 shifted down to 0..999. Any other count, and a
// label outside the range, is an InvalidArgument error naming both.
absl::StatusOr<int> ModelLabel(int64_t record_label, int classes);

}  // namespace cnnbench::input

#endif  // CNNBENCH_INPUT_EXAMPLE_H_
