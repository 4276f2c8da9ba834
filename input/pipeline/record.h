// One example as the pipeline's readers hand it to the decoders, and the
// tf.Example side of reading it. Kept apart from the preprocessing headers
// so this file's box type is the pipeline's own.
#ifndef CNNBENCH_INPUT_PIPELINE_RECORD_H_
#define CNNBENCH_INPUT_PIPELINE_RECORD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cnnbench::input {

// A box in fractions of the image (image/object/bbox/*).
struct RecordBox {
  float ymin = 0, xmin = 0, ymax = 1, xmax = 1;
};

// One example before decoding.
struct SourceRecord {
  std::string jpeg;
  int64_t label = 0;             // as stored: 1..1000 (0 = background)
  int32_t model_label = 0;       // the label for the model's classes (RecordModelLabel)
  std::vector<RecordBox> boxes;  // possibly empty
  std::string name;              // image/filename, or the image file's name
  std::string origin;            // "<file> record <i>" or "<file>": for messages
  int64_t epoch = 0;
  uint64_t key = 0;  // unique per (epoch, record): seeds its preprocessing
};

// Fills `out` (jpeg, label, boxes, name) from a serialized tf.Example;
// `fallback_name` is used when the example has no image/filename. Errors
// are the parser's (naming the feature); the caller adds file and record.
absl::Status ParseExampleRecord(absl::string_view bytes, const std::string& fallback_name,
                                SourceRecord* out);

// The record's label on a model with `classes` outputs (1000 or 1001), as
// ModelLabel in input/example.h.
absl::StatusOr<int> RecordModelLabel(int64_t record_label, int classes);

}  // namespace cnnbench::input

#endif  // CNNBENCH_INPUT_PIPELINE_RECORD_H_
