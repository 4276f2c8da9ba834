// TFRecord files: the exact bytes of a record, writer -> reader round trips
// across buffer boundaries, and one error per kind of damage, each naming the
// file, the record and its byte offset.
#include "input/tfrecord.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "input/crc32c.h"

namespace cnnbench::input {
namespace {

std::string Scratch(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = absl::StrCat(tmp ? tmp : "/tmp", "/tfrecord_test_", name);
  EXPECT_EQ(std::system(absl::StrCat("rm -rf '", dir, "' && mkdir -p '", dir, "'").c_str()), 0);
  return dir;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

std::string Payload(size_t size, int seed) {
  std::string s(size, '\0');
  for (size_t i = 0; i < size; ++i) s[i] = static_cast<char>((i * 131 + seed * 7 + (i >> 8)) & 0xff);
  return s;
}

void WriteRecords(const std::string& path, const std::vector<std::string>& records) {
  absl::StatusOr<TFRecordWriter> writer = TFRecordWriter::Create(path);
  ASSERT_TRUE(writer.ok()) << writer.status();
  for (const std::string& r : records) ASSERT_TRUE(writer->Write(r).ok());
  EXPECT_EQ(writer->records_written(), static_cast<int64_t>(records.size()));
  ASSERT_TRUE(writer->Close().ok());
}

// Reads every record; stops at the first error, which it returns.
absl::Status ReadAll(const std::string& path, std::vector<std::string>* records,
                     size_t buffer_size = 1 << 20) {
  records->clear();
  TFRecordReaderOptions options;
  options.buffer_size = buffer_size;
  absl::StatusOr<TFRecordReader> reader = TFRecordReader::Open(path, options);
  if (!reader.ok()) return reader.status();
  std::string record;
  while (true) {
    EXPECT_EQ(reader->record_index(), static_cast<int64_t>(records->size()));
    absl::StatusOr<bool> more = reader->Next(&record);
    if (!more.ok()) return more.status();
    if (!*more) return absl::OkStatus();
    records->push_back(record);
  }
}

TEST(TFRecordTest, RecordBytesAreTensorFlows) {
  // Computed with an independent bit-by-bit CRC-32C and TensorFlow's mask.
  EXPECT_EQ(EncodeTFRecord(""),
            std::string("\x00\x00\x00\x00\x00\x00\x00\x00\x29\x03\x98\x07\xd8\xea\x82\xa2", 16));
  EXPECT_EQ(EncodeTFRecord("hello"),
            std::string("\x05\x00\x00\x00\x00\x00\x00\x00\xea\xb2\x04\x3e"
                        "hello\xbb\x1f\x1c\x19",
                        21));
}

TEST(TFRecordTest, RoundTripKeepsEveryByte) {
  const std::string dir = Scratch("round_trip");
  const size_t kBuffer = 64;  // small, so records straddle and exceed it
  std::vector<std::string> records;
  const size_t sizes[] = {0, 1, 2, 3, 7, 8, 11, 12, 13, 15, 16, 17, 47, 48, 49, 50, 51, 52, 63,
                          64, 65, 100, 127, 128, 129, 1000, 4096, 0, 5, 0};
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i)
    records.push_back(Payload(sizes[i], static_cast<int>(i)));
  const std::string path = dir + "/records.tfrecord";
  WriteRecords(path, records);

  std::string expected_bytes;
  for (const std::string& r : records) expected_bytes += EncodeTFRecord(r);
  EXPECT_EQ(ReadFile(path), expected_bytes);

  for (size_t buffer : {size_t{1}, size_t{5}, size_t{12}, kBuffer, size_t{1} << 20}) {
    std::vector<std::string> read;
    ASSERT_TRUE(ReadAll(path, &read, buffer).ok()) << buffer;
    EXPECT_EQ(read, records) << "buffer " << buffer;
  }
}

TEST(TFRecordTest, RecordsLargerThanTheDefaultBuffer) {
  const std::string dir = Scratch("large");
  const std::vector<std::string> records = {Payload(3 * (1 << 20) + 17, 1), Payload(10, 2),
                                            Payload((1 << 20) - 5, 3), Payload(1 << 20, 4)};
  const std::string path = dir + "/large.tfrecord";
  WriteRecords(path, records);
  std::vector<std::string> read;
  ASSERT_TRUE(ReadAll(path, &read).ok());
  EXPECT_EQ(read, records);
}

TEST(TFRecordTest, OffsetAndIndexFollowTheRecords) {
  const std::string dir = Scratch("offsets");
  const std::string path = dir + "/r.tfrecord";
  WriteRecords(path, {"a", "", "abcdef"});
  absl::StatusOr<TFRecordReader> reader = TFRecordReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ(reader->path(), path);
  std::string record;
  const uint64_t offsets[] = {0, 17, 33, 55};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(reader->record_index(), i);
    EXPECT_EQ(reader->offset(), offsets[i]);
    ASSERT_TRUE(*reader->Next(&record));
  }
  EXPECT_EQ(record, "abcdef");
  // A moved reader carries on where the old one stopped.
  TFRecordReader moved = std::move(*reader);
  EXPECT_EQ(moved.record_index(), 3);
  EXPECT_EQ(moved.offset(), offsets[3]);
  EXPECT_FALSE(*moved.Next(&record));
  EXPECT_FALSE(*moved.Next(&record));  // the end stays the end
}

TEST(TFRecordTest, EmptyFileHasNoRecords) {
  const std::string dir = Scratch("empty");
  WriteFile(dir + "/empty.tfrecord", "");
  std::vector<std::string> read;
  ASSERT_TRUE(ReadAll(dir + "/empty.tfrecord", &read).ok());
  EXPECT_TRUE(read.empty());
  // The writer with no records makes the same empty file.
  WriteRecords(dir + "/written.tfrecord", {});
  EXPECT_EQ(ReadFile(dir + "/written.tfrecord"), "");
}

TEST(TFRecordTest, UnreadableFilesSayWhy) {
  const std::string dir = Scratch("unreadable");
  absl::StatusOr<TFRecordReader> missing = TFRecordReader::Open(dir + "/none.tfrecord");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
  EXPECT_EQ(missing.status().message(),
            absl::StrCat("cannot open TFRecord file ", dir, "/none.tfrecord: No such file or directory"));

  absl::StatusOr<TFRecordReader> folder = TFRecordReader::Open(dir);
  ASSERT_FALSE(folder.ok());
  EXPECT_EQ(folder.status().message(),
            absl::StrCat("cannot read TFRecord file ", dir, ": it is a directory"));

  TFRecordReaderOptions no_buffer;
  no_buffer.buffer_size = 0;
  WriteFile(dir + "/r.tfrecord", EncodeTFRecord("x"));
  EXPECT_FALSE(TFRecordReader::Open(dir + "/r.tfrecord", no_buffer).ok());
}

// The bytes of three records; returns where each starts (and the end).
std::vector<size_t> ThreeRecords(std::string* bytes) {
  const std::vector<std::string> records = {"first", "second record", "third"};
  *bytes = "";
  std::vector<size_t> starts;
  for (const std::string& r : records) {
    starts.push_back(bytes->size());
    *bytes += EncodeTFRecord(r);
  }
  starts.push_back(bytes->size());
  return starts;
}

TEST(TFRecordTest, EveryFlippedByteOfARecordIsCaughtAndNamed) {
  const std::string dir = Scratch("flips");
  const std::string path = dir + "/flipped.tfrecord";
  std::string clean;
  const std::vector<size_t> starts = ThreeRecords(&clean);
  const size_t begin = starts[1], end = starts[2];
  const size_t data_begin = begin + kTFRecordHeaderBytes, data_end = end - kTFRecordFooterBytes;
  for (size_t at = begin; at < end; ++at) {
    std::string bytes = clean;
    bytes[at] ^= static_cast<char>(1 << (at % 8));
    WriteFile(path, bytes);
    std::vector<std::string> read;
    const absl::Status status = ReadAll(path, &read);
    ASSERT_FALSE(status.ok()) << "flip at " << at;
    EXPECT_EQ(read.size(), 1u) << "record 0 is intact and read";
    EXPECT_TRUE(absl::IsDataLoss(status)) << status;
    const std::string where = absl::StrCat(path, ": record 1 at byte offset ", begin, ": ");
    const std::string what = at < data_begin ? "corrupt length: CRC mismatch"
                                             : "corrupt data: CRC mismatch";
    EXPECT_EQ(status.message().substr(0, where.size() + what.size()), where + what)
        << "flip at " << at << " (" << (at < begin + 8 ? "length" : at < data_begin ? "length CRC"
                                                         : at < data_end ? "data" : "data CRC")
        << "): " << status;
  }
}

TEST(TFRecordTest, TruncationAtEveryOffsetIsCaughtAndNamed) {
  const std::string dir = Scratch("truncated");
  const std::string path = dir + "/cut.tfrecord";
  std::string clean;
  const std::vector<size_t> starts = ThreeRecords(&clean);
  for (size_t buffer : {size_t{1}, size_t{7}, size_t{1} << 20}) {
    for (size_t cut = 0; cut < clean.size(); ++cut) {
      WriteFile(path, clean.substr(0, cut));
      size_t record = 0;
      while (starts[record + 1] <= cut) ++record;  // the record the cut falls in
      std::vector<std::string> read;
      const absl::Status status = ReadAll(path, &read, buffer);
      EXPECT_EQ(read.size(), record) << "cut at " << cut;
      if (cut == starts[record]) {  // on a boundary: a shorter, valid file
        EXPECT_TRUE(status.ok()) << "cut at " << cut << ": " << status;
        continue;
      }
      ASSERT_FALSE(status.ok()) << "cut at " << cut;
      EXPECT_TRUE(absl::IsDataLoss(status)) << status;
      const std::string expected = absl::StrCat(path, ": record ", record, " at byte offset ",
                                                starts[record], ": truncated record");
      EXPECT_EQ(status.message().substr(0, expected.size()), expected)
          << "cut at " << cut << ", buffer " << buffer << ": " << status;
    }
  }
}

// A header whose length CRC is right, so only the length itself is wrong.
std::string HeaderFor(uint64_t length) {
  std::string header(kTFRecordHeaderBytes, '\0');
  for (int i = 0; i < 8; ++i) header[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  const uint32_t masked = MaskCrc32c(Crc32cExtend(0, header.data(), 8));
  for (int i = 0; i < 4; ++i) header[8 + i] = static_cast<char>((masked >> (8 * i)) & 0xff);
  return header;
}

TEST(TFRecordTest, AbsurdLengthsAreRefusedBeforeAllocating) {
  const std::string dir = Scratch("absurd");
  const std::string path = dir + "/absurd.tfrecord";
  const std::string first = EncodeTFRecord("ok");

  WriteFile(path, first + HeaderFor(uint64_t{1} << 40) + "some bytes");
  std::vector<std::string> read;
  absl::Status status = ReadAll(path, &read);
  EXPECT_EQ(read.size(), 1u);
  EXPECT_EQ(status.message(), absl::StrCat(path, ": record 1 at byte offset ", first.size(),
                                           ": record length 1099511627776 exceeds the limit of "
                                           "1073741824 bytes"));

  // Under the limit but past the end of the file: a truncation, found from
  // the file's size (no 512 MiB allocation).
  WriteFile(path, first + HeaderFor(uint64_t{1} << 29) + "some bytes");
  status = ReadAll(path, &read);
  EXPECT_EQ(read.size(), 1u);
  EXPECT_EQ(status.message(),
            absl::StrCat(path, ": record 1 at byte offset ", first.size(),
                         ": truncated record: its length 536870912 needs 536870928 bytes from "
                         "here but the file has 22"));

  // The limit is an option.
  WriteFile(path, EncodeTFRecord(std::string(100, 'x')));
  TFRecordReaderOptions small;
  small.max_record_bytes = 99;
  absl::StatusOr<TFRecordReader> reader = TFRecordReader::Open(path, small);
  ASSERT_TRUE(reader.ok());
  std::string record;
  absl::StatusOr<bool> more = reader->Next(&record);
  ASSERT_FALSE(more.ok());
  EXPECT_EQ(more.status().message(),
            absl::StrCat(path, ": record 0 at byte offset 0: record length 100 exceeds the "
                               "limit of 99 bytes"));
  // Errors are sticky: the reader does not resynchronise on garbage.
  EXPECT_EQ(reader->Next(&record).status(), more.status());
}

TEST(TFRecordTest, WriterReportsFailedWritesAndClose) {
  const std::string dir = Scratch("writer");
  absl::StatusOr<TFRecordWriter> nowhere = TFRecordWriter::Create(dir + "/none/r.tfrecord");
  ASSERT_FALSE(nowhere.ok());
  EXPECT_TRUE(absl::IsNotFound(nowhere.status()));
  EXPECT_EQ(nowhere.status().message(), absl::StrCat("cannot create TFRecord file ", dir,
                                                     "/none/r.tfrecord: No such file or directory"));

  // /dev/full takes the open and refuses the bytes: Close must say so.
  absl::StatusOr<TFRecordWriter> full = TFRecordWriter::Create("/dev/full");
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_TRUE(full->Write("record").ok());  // buffered
  const absl::Status closed = full->Close();
  EXPECT_FALSE(closed.ok());
  EXPECT_EQ(closed.message(), "cannot write TFRecord file /dev/full: No space left on device");
  // A record bigger than the write buffer goes out at once and fails at once.
  absl::StatusOr<TFRecordWriter> full2 = TFRecordWriter::Create("/dev/full");
  ASSERT_TRUE(full2.ok());
  EXPECT_FALSE(full2->Write(std::string(2 << 20, 'x')).ok());
  EXPECT_FALSE(full2->Close().ok());

  absl::StatusOr<TFRecordWriter> writer = TFRecordWriter::Create(dir + "/r.tfrecord");
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE(writer->Close().ok());
  EXPECT_FALSE(writer->Close().ok());
  EXPECT_FALSE(writer->Write("late").ok());
}

TEST(TFRecordTest, MovedWriterKeepsItsBufferedRecords) {
  const std::string dir = Scratch("moved_writer");
  const std::string path = dir + "/r.tfrecord";
  {
    absl::StatusOr<TFRecordWriter> writer = TFRecordWriter::Create(path);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE(writer->Write("one").ok());
    TFRecordWriter moved = std::move(*writer);
    ASSERT_TRUE(moved.Write("two").ok());
    ASSERT_TRUE(moved.Close().ok());
  }
  std::vector<std::string> read;
  ASSERT_TRUE(ReadAll(path, &read).ok());
  EXPECT_EQ(read, (std::vector<std::string>{"one", "two"}));
}

}  // namespace
}  // namespace cnnbench::input
