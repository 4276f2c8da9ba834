// Fuzzes the TFRecord reader (input/tfrecord.h) and the tf.Example parser
// (input/example.h): any bytes, read as a file or parsed as a record, give
// records or an error (naming the file and record for the reader), never a
// crash; a parsed Example serializes back to one that parses the same. The
// saved corpus (corpus/tfrecord/) is what the project's writer writes, and
// the second test pins it to the writer's current output.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/stubs/logging.h"
#include "gtest/gtest.h"
#include "input/example.h"
#include "input/tfrecord.h"
#include "tests/fuzz/fuzz_driver.h"

namespace cnnbench {
namespace {

using input::ImageRecord;

constexpr char kCorpusDir[] = "tests/fuzz/corpus/tfrecord";

void WriteFile(const std::string& path, absl::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Parses `bytes`; a record that parses must survive serialize -> parse.
bool CheckExample(absl::string_view bytes) {
  absl::StatusOr<ImageRecord> record = input::ParseImageExample(bytes);
  if (!record.ok()) {
    EXPECT_FALSE(record.status().message().empty());
    return false;
  }
  absl::StatusOr<ImageRecord> again =
      input::ParseImageExample(input::SerializeImageExample(*record));
  EXPECT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again.ok() && *again == *record);
  return true;
}

TEST(TFRecordFuzzTest, ReaderAndParserNeverCrash) {
  fuzz::FuzzOptions options;
  options.iterations = 20000;
  options.dictionary = {
      "image/encoded", "image/class/label", "image/object/bbox/xmin", "image/object/bbox/ymax",
      std::string("\x0a", 1), std::string("\x12", 1), std::string("\x1a", 1),
      std::string("\x00\x00\x00\x00\x00\x00\x00\x00", 8), std::string("\xff\xff\xff\xff", 4),
      std::string("\x00\x00\x80\x3f", 4),  // 1.0f
      std::string("\x00\x00\xc0\x7f", 4),  // NaN
      input::EncodeTFRecord(""), input::EncodeTFRecord("x"),
  };
  // Bytes that parse as protobuf but hold invalid UTF-8 map keys make
  // protobuf log an error; those are expected here.
  google::protobuf::LogSilencer quiet;
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/fuzz.tfrecord";
  int64_t records = 0, examples = 0;
  const int64_t tried = fuzz::Fuzz(
      fuzz::LoadCorpus(kCorpusDir), options, [&](absl::string_view bytes) {
        if (CheckExample(bytes)) ++examples;

        // The input framed as one good record, then the input as raw file
        // bytes: the first record must come back exactly; the rest is read
        // until the end or an error naming the file and record.
        const std::string framed = input::EncodeTFRecord(bytes);
        WriteFile(path, absl::StrCat(framed, bytes));
        input::TFRecordReaderOptions reader_options;
        reader_options.buffer_size = 1 + bytes.size() % 61;
        absl::StatusOr<input::TFRecordReader> reader =
            input::TFRecordReader::Open(path, reader_options);
        ASSERT_TRUE(reader.ok()) << reader.status();
        std::string record;
        absl::StatusOr<bool> more = reader->Next(&record);
        ASSERT_TRUE(more.ok() && *more) << more.status();
        ASSERT_EQ(record, bytes);
        while (true) {
          const int64_t index = reader->record_index();
          more = reader->Next(&record);
          if (!more.ok()) {
            const std::string prefix = absl::StrCat(path, ": record ", index, " at byte offset ");
            ASSERT_EQ(more.status().message().substr(0, prefix.size()), prefix) << more.status();
            ASSERT_TRUE(absl::IsDataLoss(more.status())) << more.status();
            break;
          }
          if (!*more) break;
          ++records;
          if (CheckExample(record)) ++examples;
        }
      });
  EXPECT_GT(tried, options.iterations);
  std::printf("%lld inputs, %lld further records read, %lld Examples parsed\n",
              static_cast<long long>(tried), static_cast<long long>(records),
              static_cast<long long>(examples));
  EXPECT_GT(records, 0) << "the corpus should hold valid TFRecord files";
  EXPECT_GT(examples, 0) << "the corpus should hold valid Examples";
}

// The corpus, as the writer makes it: {file name, bytes}.
std::vector<std::pair<std::string, std::string>> MakeCorpus(const std::string& dir) {
  ImageRecord full;
  full.jpeg = std::string("\xff\xd8\xff\xe0\x00\x10JFIF\x00 fake jpeg \xff\xd9", 24);
  full.label = 65;
  full.boxes = {{0.1f, 0.2f, 0.8f, 0.9f}, {0.0f, 0.0f, 1.0f, 1.0f}};
  full.file_name = "n01751748_520.JPEG";
  full.class_text = "sea snake";
  full.height = 333;
  full.width = 500;
  ImageRecord minimal;
  minimal.jpeg = "j";
  minimal.label = 1;
  ImageRecord background = full;
  background.label = 0;
  background.boxes.clear();

  std::vector<std::pair<std::string, std::vector<std::string>>> files = {
      {"empty.tfrecord", {}},
      {"one_example.tfrecord", {input::SerializeImageExample(full)}},
      {"three_examples.tfrecord",
       {input::SerializeImageExample(minimal), input::SerializeImageExample(background),
        input::SerializeImageExample(full)}},
      {"mixed_records.tfrecord", {"", "not an Example", input::SerializeImageExample(minimal)}},
  };
  std::vector<std::pair<std::string, std::string>> corpus;
  for (const auto& [name, records] : files) {
    const std::string path = dir + "/" + name;
    absl::StatusOr<input::TFRecordWriter> writer = input::TFRecordWriter::Create(path);
    EXPECT_TRUE(writer.ok()) << writer.status();
    if (!writer.ok()) continue;
    for (const std::string& r : records) EXPECT_TRUE(writer->Write(r).ok());
    EXPECT_TRUE(writer->Close().ok());
    corpus.emplace_back(name, ReadFile(path));
  }
  // A bare Example, for the parser alone.
  corpus.emplace_back("example.pb", input::SerializeImageExample(full));
  WriteFile(dir + "/example.pb", corpus.back().second);
  return corpus;
}

// Regenerate with
//   TFRECORD_CORPUS_OUT=$PWD/tests/fuzz/corpus/tfrecord bazel-bin/tests/fuzz/tfrecord_fuzz_test
TEST(TFRecordFuzzTest, SavedCorpusIsTheWritersOutput) {
  const char* out = std::getenv("TFRECORD_CORPUS_OUT");
  const std::string dir = out ? out : std::string(std::getenv("TEST_TMPDIR"));
  for (const auto& [name, bytes] : MakeCorpus(dir)) {
    EXPECT_EQ(ReadFile(absl::StrCat(kCorpusDir, "/", name)), bytes)
        << name << " differs from what the writer writes now";
  }
}

}  // namespace
}  // namespace cnnbench
