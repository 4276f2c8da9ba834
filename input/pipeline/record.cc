// tf.Example records into the pipeline's SourceRecord.
#include "input/pipeline/record.h"

#include <utility>

#include "core/status.h"
#include "input/example.h"

namespace cnnbench::input {

absl::Status ParseExampleRecord(absl::string_view bytes, const std::string& fallback_name,
                                SourceRecord* out) {
  ASSIGN_OR_RETURN(ImageRecord record, ParseImageExample(bytes));
  out->jpeg = std::move(record.jpeg);
  out->label = record.label;
  out->boxes.clear();
  for (const BoundingBox& b : record.boxes)
    out->boxes.push_back(RecordBox{.ymin = b.ymin, .xmin = b.xmin, .ymax = b.ymax, .xmax = b.xmax});
  out->name = record.file_name.empty() ? fallback_name : std::move(record.file_name);
  return absl::OkStatus();
}

absl::StatusOr<int> RecordModelLabel(int64_t record_label, int classes) {
  return ModelLabel(record_label, classes);
}

}  // namespace cnnbench::input
