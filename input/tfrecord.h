// TFRecord files, byte for byte as TensorFlow writes them. Each record is
//   uint64 length (little-endian) | uint32 masked CRC-32C of those 8 bytes |
//   length bytes of data          | uint32 masked CRC-32C of the data.
// The reader checks both CRCs and names the file, the record (0-based) and
// its byte offset in every error.
#ifndef CNNBENCH_INPUT_TFRECORD_H_
#define CNNBENCH_INPUT_TFRECORD_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cnnbench::input {

constexpr size_t kTFRecordHeaderBytes = 12;  // length + its CRC
constexpr size_t kTFRecordFooterBytes = 4;   // the data's CRC

// The framed bytes of one record (header, data, footer).
std::string EncodeTFRecord(absl::string_view data);

struct TFRecordReaderOptions {
  // Bytes per read() call; records larger than this are read straight into
  // the caller's string.
  size_t buffer_size = 1 << 20;
  // A length above this is reported as corrupt before anything is allocated.
  uint64_t max_record_bytes = uint64_t{1} << 30;
};

// Reads one file front to back. Move-only; closes the file when destroyed.
//
//   ASSIGN_OR_RETURN(TFRecordReader reader, TFRecordReader::Open(path));
//   std::string record;
//   while (true) {
//     ASSIGN_OR_RETURN(bool more, reader.Next(&record));
//     if (!more) break;
//     ...
//   }
class TFRecordReader {
 public:
  // NotFound / PermissionDenied / ... with errno's text when the file cannot
  // be opened.
  static absl::StatusOr<TFRecordReader> Open(const std::string& path,
                                             const TFRecordReaderOptions& options = {});

  TFRecordReader(TFRecordReader&& other) noexcept;
  TFRecordReader& operator=(TFRecordReader&& other) noexcept;
  TFRecordReader(const TFRecordReader&) = delete;
  TFRecordReader& operator=(const TFRecordReader&) = delete;
  ~TFRecordReader();

  // Reads the next record into `*record`: true when one was read, false at
  // the end of the file (an empty file has no records). Errors (DataLoss for
  // a CRC mismatch, a truncated record or an absurd length; errno's text for
  // a failed read) name the file, record_index() and the record's offset;
  // after one, every later call returns it again.
  absl::StatusOr<bool> Next(std::string* record);

  // 0-based index of the record the next call to Next() reads, i.e. the
  // number of records read so far.
  int64_t record_index() const { return record_index_; }
  // Byte offset of that record in the file.
  uint64_t offset() const { return offset_; }
  const std::string& path() const { return path_; }

 private:
  TFRecordReader(std::string path, int fd, const TFRecordReaderOptions& options);
  void Close();
  // Copies up to `size` bytes into `dst`, refilling the buffer as needed;
  // `*got` is what was copied (less than `size` only at end of file).
  absl::Status ReadFully(char* dst, size_t size, size_t* got);
  absl::Status FillBuffer();
  absl::Status RecordError(absl::StatusCode code, absl::string_view what) const;
  // Whether a record of `length` data bytes at offset_ ends within file_size_.
  bool FitsInFile(uint64_t length) const;

  std::string path_;
  int fd_ = -1;
  TFRecordReaderOptions options_;
  std::string buffer_;
  size_t buffer_begin_ = 0;  // unread bytes are buffer_[buffer_begin_, buffer_end_)
  size_t buffer_end_ = 0;
  bool eof_ = false;
  bool file_size_known_ = false;  // a regular file: its size bounds a record's length
  uint64_t file_size_ = 0;
  int64_t record_index_ = 0;
  uint64_t offset_ = 0;
  absl::Status error_;  // sticky
};

// Writes one file (created or truncated). Every write is checked; Close()
// reports a failed flush or close, so a caller that wants to know the file is
// complete must call it (the destructor closes silently).
class TFRecordWriter {
 public:
  static absl::StatusOr<TFRecordWriter> Create(const std::string& path);

  TFRecordWriter(TFRecordWriter&& other) noexcept;
  TFRecordWriter& operator=(TFRecordWriter&& other) noexcept;
  TFRecordWriter(const TFRecordWriter&) = delete;
  TFRecordWriter& operator=(const TFRecordWriter&) = delete;
  ~TFRecordWriter();

  absl::Status Write(absl::string_view record);
  // Hands buffered bytes to the kernel.
  absl::Status Flush();
  absl::Status Close();

  int64_t records_written() const { return records_written_; }
  const std::string& path() const { return path_; }

 private:
  TFRecordWriter(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  absl::Status WriteToFile(const char* data, size_t size);

  std::string path_;
  int fd_ = -1;
  std::string buffer_;
  int64_t records_written_ = 0;
  absl::Status error_;  // sticky
};

}  // namespace cnnbench::input

#endif  // CNNBENCH_INPUT_TFRECORD_H_
