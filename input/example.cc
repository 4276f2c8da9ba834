#include "input/example.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "input/example.pb.h"

namespace cnnbench::input {
namespace {

constexpr char kEncoded[] = "image/encoded";
constexpr char kLabel[] = "image/class/label";
constexpr char kClassText[] = "image/class/text";
constexpr char kFileName[] = "image/filename";
constexpr char kHeight[] = "image/height";
constexpr char kWidth[] = "image/width";
constexpr char kBoxLabel[] = "image/object/bbox/label";
constexpr const char* kBoxFeatures[4] = {"image/object/bbox/xmin", "image/object/bbox/ymin",
                                         "image/object/bbox/xmax", "image/object/bbox/ymax"};

using FeatureMap = google::protobuf::Map<std::string, tensorflow::Feature>;

const char* KindName(tensorflow::Feature::KindCase kind) {
  switch (kind) {
    case tensorflow::Feature::kBytesList:
      return "a bytes_list";
    case tensorflow::Feature::kFloatList:
      return "a float_list";
    case tensorflow::Feature::kInt64List:
      return "an int64_list";
    default:
      return "empty (no list)";
  }
}

std::string FeatureNames(const FeatureMap& features) {
  if (features.empty()) return "it has no features";
  std::vector<std::string> names;
  for (const auto& entry : features) names.push_back(entry.first);
  std::sort(names.begin(), names.end());
  constexpr size_t kShown = 8;
  std::string shown = absl::StrJoin(names.begin(), names.begin() + std::min(kShown, names.size()),
                                    ", ");
  if (names.size() > kShown) absl::StrAppend(&shown, ", ... (", names.size(), " in all)");
  return absl::StrCat("it has ", shown);
}

// The feature `name` of the kind `kind`, or an error naming what is wrong.
absl::StatusOr<const tensorflow::Feature*> RequiredFeature(const FeatureMap& features,
                                                          const char* name,
                                                          tensorflow::Feature::KindCase kind) {
  const auto it = features.find(name);
  if (it == features.end()) {
    return absl::InvalidArgumentError(absl::StrCat("tf.Example: required feature '", name,
                                                   "' is missing (", FeatureNames(features), ")"));
  }
  if (it->second.kind_case() != kind) {
    return absl::InvalidArgumentError(absl::StrCat("tf.Example: feature '", name, "' is ",
                                                   KindName(it->second.kind_case()),
                                                   ", expected ", KindName(kind)));
  }
  return &it->second;
}

absl::Status OneValue(const char* name, int values) {
  if (values == 1) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("tf.Example: feature '", name, "' has ", values, " values, expected 1"));
}

// An optional feature of `kind` with one value, or null.
const tensorflow::Feature* OptionalFeature(const FeatureMap& features, const char* name,
                                           tensorflow::Feature::KindCase kind) {
  const auto it = features.find(name);
  if (it == features.end() || it->second.kind_case() != kind) return nullptr;
  const tensorflow::Feature& f = it->second;
  const int values = kind == tensorflow::Feature::kBytesList   ? f.bytes_list().value_size()
                     : kind == tensorflow::Feature::kInt64List ? f.int64_list().value_size()
                                                               : f.float_list().value_size();
  return values == 1 ? &f : nullptr;
}

void SetBytes(FeatureMap& features, const char* name, const std::string& value) {
  features[name].mutable_bytes_list()->add_value(value);
}
void SetInt64(FeatureMap& features, const char* name, int64_t value) {
  features[name].mutable_int64_list()->add_value(value);
}

}  // namespace

absl::StatusOr<ImageRecord> ParseImageExample(absl::string_view bytes) {
  tensorflow::Example example;
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !example.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not a tf.Example: ", bytes.size(), " bytes that do not parse as an Example message"));
  }
  const FeatureMap& features = example.features().feature();
  ImageRecord record;

  const auto encoded = RequiredFeature(features, kEncoded, tensorflow::Feature::kBytesList);
  if (!encoded.ok()) return encoded.status();
  const tensorflow::BytesList& encoded_list = (*encoded)->bytes_list();
  RETURN_IF_ERROR_AS_IS(OneValue(kEncoded, encoded_list.value_size()));
  if (encoded_list.value(0).empty())
    return absl::InvalidArgumentError(absl::StrCat("tf.Example: feature '", kEncoded,
                                                   "' is an empty string (no image)"));
  record.jpeg = encoded_list.value(0);

  const auto label = RequiredFeature(features, kLabel, tensorflow::Feature::kInt64List);
  if (!label.ok()) return label.status();
  RETURN_IF_ERROR_AS_IS(OneValue(kLabel, (*label)->int64_list().value_size()));
  record.label = (*label)->int64_list().value(0);

  // Bounding boxes: four parallel float lists, each absent or the same length.
  const google::protobuf::RepeatedField<float>* lists[4] = {};
  static const google::protobuf::RepeatedField<float> kNoValues;
  for (int i = 0; i < 4; ++i) {
    const auto it = features.find(kBoxFeatures[i]);
    if (it == features.end() || it->second.kind_case() == tensorflow::Feature::KIND_NOT_SET) {
      lists[i] = &kNoValues;
    } else if (it->second.kind_case() != tensorflow::Feature::kFloatList) {
      return absl::InvalidArgumentError(absl::StrCat("tf.Example: feature '", kBoxFeatures[i],
                                                     "' is ", KindName(it->second.kind_case()),
                                                     ", expected a float_list"));
    } else {
      lists[i] = &it->second.float_list().value();
    }
  }
  const int boxes = lists[0]->size();
  if (lists[1]->size() != boxes || lists[2]->size() != boxes || lists[3]->size() != boxes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tf.Example: the bounding box lists differ in length (xmin ", lists[0]->size(), ", ymin ",
        lists[1]->size(), ", xmax ", lists[2]->size(), ", ymax ", lists[3]->size(), ")"));
  }
  record.boxes.reserve(boxes);
  for (int b = 0; b < boxes; ++b) {
    const float v[4] = {lists[0]->Get(b), lists[1]->Get(b), lists[2]->Get(b), lists[3]->Get(b)};
    for (int i = 0; i < 4; ++i) {
      if (!(v[i] >= 0.0f && v[i] <= 1.0f)) {  // also rejects NaN
        return absl::InvalidArgumentError(absl::StrCat("tf.Example: bounding box ", b, ": ",
                                                       kBoxFeatures[i], " = ", v[i],
                                                       " is outside [0, 1]"));
      }
    }
    if (v[0] > v[2] || v[1] > v[3]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tf.Example: bounding box ", b, " has min > max (xmin ", v[0], ", ymin ", v[1],
          ", xmax ", v[2], ", ymax ", v[3], ")"));
    }
    record.boxes.push_back({v[0], v[1], v[2], v[3]});
  }

  if (const auto* f = OptionalFeature(features, kFileName, tensorflow::Feature::kBytesList))
    record.file_name = f->bytes_list().value(0);
  if (const auto* f = OptionalFeature(features, kClassText, tensorflow::Feature::kBytesList))
    record.class_text = f->bytes_list().value(0);
  if (const auto* f = OptionalFeature(features, kHeight, tensorflow::Feature::kInt64List))
    record.height = f->int64_list().value(0);
  if (const auto* f = OptionalFeature(features, kWidth, tensorflow::Feature::kInt64List))
    record.width = f->int64_list().value(0);
  return record;
}

std::string SerializeImageExample(const ImageRecord& record) {
  tensorflow::Example example;
  FeatureMap& features = *example.mutable_features()->mutable_feature();
  SetBytes(features, kEncoded, record.jpeg);
  SetInt64(features, kLabel, record.label);
  if (!record.class_text.empty()) SetBytes(features, kClassText, record.class_text);
  if (!record.file_name.empty()) SetBytes(features, kFileName, record.file_name);
  if (record.height > 0) SetInt64(features, kHeight, record.height);
  if (record.width > 0) SetInt64(features, kWidth, record.width);
  SetBytes(features, "image/colorspace", "RGB");
  SetInt64(features, "image/channels", 3);
  SetBytes(features, "image/format", "JPEG");
  tensorflow::FloatList* lists[4];
  for (int i = 0; i < 4; ++i) lists[i] = features[kBoxFeatures[i]].mutable_float_list();
  tensorflow::Int64List* box_labels = features[kBoxLabel].mutable_int64_list();
  for (const BoundingBox& box : record.boxes) {
    lists[0]->add_value(box.xmin);
    lists[1]->add_value(box.ymin);
    lists[2]->add_value(box.xmax);
    lists[3]->add_value(box.ymax);
    box_labels->add_value(record.label);
  }
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);  // map entries in key order
    example.SerializeToCodedStream(&coded);
  }
  return bytes;
}

absl::StatusOr<int> ModelLabel(int64_t record_label, int classes) {
  if (classes == 1001) {
    if (record_label < 0 || record_label > 1000) {
      return absl::InvalidArgumentError(absl::StrCat(
          "label ", record_label, " is out of range: 1001 classes take labels 0..1000"));
    }
    return static_cast<int>(record_label);
  }
  if (classes == 1000) {
    if (record_label == 0)
      return absl::InvalidArgumentError("label 0 (background) cannot map to 1000 classes");
    if (record_label < 1 || record_label > 1000) {
      return absl::InvalidArgumentError(
          absl::StrCat("label ", record_label,
                       " is out of range: 1000 classes take labels 1..1000 (shifted to 0..999)"));
    }
    return static_cast<int>(record_label - 1);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unsupported class count ", classes,
      ": ImageNet labels map to 1001 classes (with background) or 1000"));
}

}  // namespace cnnbench::input
