// tf.Example for ImageNet records: serialize -> parse round trips, the wire
// format's field numbers (bytes built by hand, as TensorFlow writes them),
// one error per kind of bad record, and the label policy.
#include "input/example.h"

#include <cmath>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "input/example.pb.h"

namespace cnnbench::input {
namespace {

ImageRecord FullRecord() {
  ImageRecord r;
  r.jpeg = std::string("\xff\xd8\xff\xe0 not really a jpeg \x00\x01\xff\xd9", 26);
  r.label = 417;
  r.boxes = {{0.0f, 0.1f, 0.5f, 0.9f}, {0.25f, 0.25f, 1.0f, 1.0f}, {0.3f, 0.3f, 0.3f, 0.3f}};
  r.file_name = "n01440764_10026.JPEG";
  r.class_text = "tench, Tinca tinca";
  r.height = 375;
  r.width = 500;
  return r;
}

// Wire-format pieces, to build records the way TensorFlow's writer would,
// independent of our .proto.
std::string Varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  return s + static_cast<char>(v);
}
std::string Field(int number, const std::string& bytes) {  // length-delimited
  return Varint(static_cast<uint64_t>(number) << 3 | 2) + Varint(bytes.size()) + bytes;
}
std::string Float32(float f) {
  std::string s(4, '\0');
  std::memcpy(&s[0], &f, 4);
  return s;
}
// Example{features=1: Features{feature=1: map entry{key=1, value=2: Feature}}}.
std::string ExampleOf(const std::vector<std::pair<std::string, std::string>>& features) {
  std::string map;
  for (const auto& [name, feature] : features)
    map += Field(1, Field(1, name) + Field(2, feature));
  return Field(1, map);
}
std::string BytesFeature(const std::string& v) { return Field(1, Field(1, v)); }
std::string FloatFeature(std::initializer_list<float> values) {
  std::string packed;
  for (float f : values) packed += Float32(f);
  return Field(2, Field(1, packed));
}
std::string Int64Feature(std::initializer_list<int64_t> values) {
  std::string packed;
  for (int64_t v : values) packed += Varint(static_cast<uint64_t>(v));
  return Field(3, Field(1, packed));
}
// Unpacked repeated int64 (tag per value): older writers; parsers accept both.
std::string Int64FeatureUnpacked(std::initializer_list<int64_t> values) {
  std::string list;
  for (int64_t v : values) list += Varint(1 << 3 | 0) + Varint(static_cast<uint64_t>(v));
  return Field(3, list);
}

std::string ParseError(const std::string& bytes) {
  absl::StatusOr<ImageRecord> r = ParseImageExample(bytes);
  EXPECT_FALSE(r.ok()) << "parsed, expected an error";
  if (r.ok()) return "";
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
  return std::string(r.status().message());
}

TEST(ExampleTest, RoundTrip) {
  const ImageRecord full = FullRecord();
  absl::StatusOr<ImageRecord> parsed = ParseImageExample(SerializeImageExample(full));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, full);

  ImageRecord minimal;
  minimal.jpeg = "x";
  minimal.label = 1;
  parsed = ParseImageExample(SerializeImageExample(minimal));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, minimal);
  EXPECT_TRUE(parsed->boxes.empty());
  EXPECT_TRUE(parsed->file_name.empty());
}

TEST(ExampleTest, SerializationIsDeterministic) {
  EXPECT_EQ(SerializeImageExample(FullRecord()), SerializeImageExample(FullRecord()));
}

TEST(ExampleTest, WritesTheImageNetScriptsFeatures) {
  tensorflow::Example example;
  ASSERT_TRUE(example.ParseFromString(SerializeImageExample(FullRecord())));
  const auto& f = example.features().feature();
  auto bytes = [&](const char* name) { return f.at(name).bytes_list().value(0); };
  auto int64 = [&](const char* name) { return f.at(name).int64_list().value(0); };
  EXPECT_EQ(bytes("image/colorspace"), "RGB");
  EXPECT_EQ(bytes("image/format"), "JPEG");
  EXPECT_EQ(bytes("image/filename"), "n01440764_10026.JPEG");
  EXPECT_EQ(bytes("image/class/text"), "tench, Tinca tinca");
  EXPECT_EQ(int64("image/channels"), 3);
  EXPECT_EQ(int64("image/height"), 375);
  EXPECT_EQ(int64("image/width"), 500);
  EXPECT_EQ(int64("image/class/label"), 417);
  ASSERT_EQ(f.at("image/object/bbox/label").int64_list().value_size(), 3);
  EXPECT_EQ(f.at("image/object/bbox/label").int64_list().value(2), 417);
  ASSERT_EQ(f.at("image/object/bbox/xmax").float_list().value_size(), 3);
  EXPECT_EQ(f.at("image/object/bbox/xmax").float_list().value(0), 0.5f);
}

TEST(ExampleTest, ReadsHandBuiltWireFormat) {
  // Field numbers as TensorFlow's feature.proto/example.proto define them.
  const std::string bytes = ExampleOf({
      {"image/class/label", Int64Feature({7})},
      {"image/encoded", BytesFeature("jpeg bytes")},
      {"image/object/bbox/xmin", FloatFeature({0.125f})},
      {"image/object/bbox/ymin", FloatFeature({0.25f})},
      {"image/object/bbox/xmax", FloatFeature({0.5f})},
      {"image/object/bbox/ymax", FloatFeature({0.75f})},
      {"image/height", Int64Feature({32})},
      {"unrelated/feature", FloatFeature({1.0f, 2.0f})},
  });
  absl::StatusOr<ImageRecord> r = ParseImageExample(bytes);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->jpeg, "jpeg bytes");
  EXPECT_EQ(r->label, 7);
  ASSERT_EQ(r->boxes.size(), 1u);
  EXPECT_EQ(r->boxes[0], (BoundingBox{0.125f, 0.25f, 0.5f, 0.75f}));
  EXPECT_EQ(r->height, 32);
  EXPECT_EQ(r->width, 0);

  r = ParseImageExample(ExampleOf({{"image/class/label", Int64FeatureUnpacked({1000})},
                                   {"image/encoded", BytesFeature("j")}}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->label, 1000);
}

TEST(ExampleTest, MissingOrMistypedRequiredFeatures) {
  const std::string encoded = BytesFeature("j");
  const std::string label = Int64Feature({3});
  EXPECT_EQ(ParseError(ExampleOf({{"image/class/label", label}})),
            "tf.Example: required feature 'image/encoded' is missing (it has image/class/label)");
  EXPECT_EQ(ParseError(ExampleOf({{"image/encoded", encoded}, {"image/format", encoded}})),
            "tf.Example: required feature 'image/class/label' is missing (it has "
            "image/encoded, image/format)");
  EXPECT_EQ(ParseError(""),
            "tf.Example: required feature 'image/encoded' is missing (it has no features)");
  EXPECT_EQ(ParseError(ExampleOf({{"image/encoded", encoded},
                                  {"image/class/label", FloatFeature({3.0f})}})),
            "tf.Example: feature 'image/class/label' is a float_list, expected an int64_list");
  EXPECT_EQ(ParseError(ExampleOf({{"image/encoded", encoded},
                                  {"image/class/label", Int64Feature({3, 4})}})),
            "tf.Example: feature 'image/class/label' has 2 values, expected 1");
  EXPECT_EQ(ParseError(ExampleOf({{"image/encoded", encoded},
                                  {"image/class/label", Int64Feature({})}})),
            "tf.Example: feature 'image/class/label' has 0 values, expected 1");
  EXPECT_EQ(ParseError(ExampleOf({{"image/encoded", ""}, {"image/class/label", label}})),
            "tf.Example: feature 'image/encoded' is empty (no list), expected a bytes_list");
  EXPECT_EQ(ParseError(ExampleOf({{"image/encoded", Int64Feature({1})},
                                  {"image/class/label", label}})),
            "tf.Example: feature 'image/encoded' is an int64_list, expected a bytes_list");
  EXPECT_EQ(ParseError(ExampleOf({{"image/encoded", BytesFeature("")},
                                  {"image/class/label", label}})),
            "tf.Example: feature 'image/encoded' is an empty string (no image)");
}

TEST(ExampleTest, BadBoundingBoxes) {
  ImageRecord r = FullRecord();
  tensorflow::Example example;
  ASSERT_TRUE(example.ParseFromString(SerializeImageExample(r)));
  auto& f = *example.mutable_features()->mutable_feature();
  f["image/object/bbox/xmax"].mutable_float_list()->mutable_value()->RemoveLast();
  EXPECT_EQ(ParseError(example.SerializeAsString()),
            "tf.Example: the bounding box lists differ in length (xmin 3, ymin 3, xmax 2, "
            "ymax 3)");
  f.erase("image/object/bbox/xmax");
  EXPECT_EQ(ParseError(example.SerializeAsString()),
            "tf.Example: the bounding box lists differ in length (xmin 3, ymin 3, xmax 0, "
            "ymax 3)");
  f["image/object/bbox/xmax"].mutable_int64_list()->add_value(1);
  EXPECT_EQ(ParseError(example.SerializeAsString()),
            "tf.Example: feature 'image/object/bbox/xmax' is an int64_list, expected a "
            "float_list");

  r.boxes = {{0.1f, 0.1f, 0.2f, 0.2f}, {0.1f, 0.1f, 1.5f, 0.2f}};
  EXPECT_EQ(ParseError(SerializeImageExample(r)),
            "tf.Example: bounding box 1: image/object/bbox/xmax = 1.5 is outside [0, 1]");
  r.boxes = {{-0.25f, 0.1f, 0.2f, 0.2f}};
  EXPECT_EQ(ParseError(SerializeImageExample(r)),
            "tf.Example: bounding box 0: image/object/bbox/xmin = -0.25 is outside [0, 1]");
  r.boxes = {{0.1f, std::nanf(""), 0.2f, 0.2f}};
  EXPECT_EQ(ParseError(SerializeImageExample(r)),
            "tf.Example: bounding box 0: image/object/bbox/ymin = nan is outside [0, 1]");
  r.boxes = {{0.1f, 0.5f, 0.2f, 0.25f}};
  EXPECT_EQ(ParseError(SerializeImageExample(r)),
            "tf.Example: bounding box 0 has min > max (xmin 0.1, ymin 0.5, xmax 0.2, ymax 0.25)");
}

TEST(ExampleTest, NotAnExample) {
  // A field-1 record whose length runs past the end; then a JPEG's first bytes.
  EXPECT_EQ(ParseError(std::string("\x0a\xff", 2)),
            "not a tf.Example: 2 bytes that do not parse as an Example message");
  EXPECT_EQ(ParseError(std::string("\xff\xd8\xff\xe0\x00\x10JFIF", 10)),
            "not a tf.Example: 10 bytes that do not parse as an Example message");
  // Bytes that parse as a message but hold no Example fields.
  EXPECT_EQ(ParseError(Field(5, "hello")),
            "tf.Example: required feature 'image/encoded' is missing (it has no features)");
}

TEST(ExampleTest, ModelLabelPolicy) {
  struct Case {
    int64_t label;
    int classes;
    int expected;  // -1: an error
  };
  const Case cases[] = {{0, 1001, 0},   {1, 1001, 1},     {1000, 1001, 1000}, {1001, 1001, -1},
                        {-1, 1001, -1}, {0, 1000, -1},    {1, 1000, 0},       {1000, 1000, 999},
                        {1001, 1000, -1}, {-5, 1000, -1}, {3, 10, -1},        {3, 0, -1}};
  for (const Case& c : cases) {
    absl::StatusOr<int> got = ModelLabel(c.label, c.classes);
    if (c.expected < 0) {
      EXPECT_TRUE(absl::IsInvalidArgument(got.status())) << c.label << " -> " << c.classes;
    } else {
      ASSERT_TRUE(got.ok()) << c.label << " -> " << c.classes << ": " << got.status();
      EXPECT_EQ(*got, c.expected) << c.label << " -> " << c.classes;
    }
  }
  EXPECT_EQ(ModelLabel(0, 1000).status().message(),
            "label 0 (background) cannot map to 1000 classes");
  EXPECT_EQ(ModelLabel(1001, 1000).status().message(),
            "label 1001 is out of range: 1000 classes take labels 1..1000 (shifted to 0..999)");
  EXPECT_EQ(ModelLabel(-1, 1001).status().message(),
            "label -1 is out of range: 1001 classes take labels 0..1000");
  EXPECT_EQ(ModelLabel(3, 10).status().message(),
            "unsupported class count 10: ImageNet labels map to 1001 classes (with background) "
            "or 1000");
}

}  // namespace
}  // namespace cnnbench::input
