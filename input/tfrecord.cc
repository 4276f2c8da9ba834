#include "input/tfrecord.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/status.h"
#include "input/crc32c.h"

namespace cnnbench::input {
namespace {

void PutLittleEndian32(uint32_t value, char* out) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xff);
}
void PutLittleEndian64(uint64_t value, char* out) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xff);
}
uint32_t GetLittleEndian32(const char* in) {
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(in[i]);
  return value;
}
uint64_t GetLittleEndian64(const char* in) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(in[i]);
  return value;
}

absl::Status ErrnoError(int error_number, absl::string_view what) {
  return absl::Status(absl::ErrnoToStatusCode(error_number),
                      absl::StrCat(what, ": ", std::strerror(error_number)));
}

// The size of `fd` when it is a regular file.
bool ReadFileSize(int fd, uint64_t* size) {
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return false;
  *size = static_cast<uint64_t>(st.st_size);
  return true;
}

std::string Hex32(uint32_t value) { return absl::StrFormat("0x%08x", value); }

constexpr size_t kWriteBufferBytes = 1 << 20;

}  // namespace

std::string EncodeTFRecord(absl::string_view data) {
  std::string out(kTFRecordHeaderBytes + data.size() + kTFRecordFooterBytes, '\0');
  PutLittleEndian64(data.size(), &out[0]);
  PutLittleEndian32(MaskCrc32c(Crc32cExtend(0, out.data(), 8)), &out[8]);
  if (!data.empty()) std::memcpy(&out[kTFRecordHeaderBytes], data.data(), data.size());
  PutLittleEndian32(MaskCrc32c(Crc32c(data)), &out[kTFRecordHeaderBytes + data.size()]);
  return out;
}

// ---------------------------------------------------------------- reader

absl::StatusOr<TFRecordReader> TFRecordReader::Open(const std::string& path,
                                                    const TFRecordReaderOptions& options) {
  if (options.buffer_size == 0)
    return absl::InvalidArgumentError(absl::StrCat(path, ": the read buffer size must be > 0"));
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return ErrnoError(errno, absl::StrCat("cannot open TFRecord file ", path));
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read TFRecord file ", path, ": it is a directory"));
  }
  return TFRecordReader(path, fd, options);
}

TFRecordReader::TFRecordReader(std::string path, int fd, const TFRecordReaderOptions& options)
    : path_(std::move(path)), fd_(fd), options_(options) {
  file_size_known_ = ReadFileSize(fd_, &file_size_);
}

TFRecordReader::TFRecordReader(TFRecordReader&& other) noexcept { *this = std::move(other); }

TFRecordReader& TFRecordReader::operator=(TFRecordReader&& other) noexcept {
  if (this != &other) {
    Close();
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    other.fd_ = -1;
    options_ = other.options_;
    buffer_ = std::move(other.buffer_);
    buffer_begin_ = other.buffer_begin_;
    buffer_end_ = other.buffer_end_;
    other.buffer_begin_ = other.buffer_end_ = 0;
    eof_ = other.eof_;
    file_size_known_ = other.file_size_known_;
    file_size_ = other.file_size_;
    record_index_ = other.record_index_;
    offset_ = other.offset_;
    error_ = std::move(other.error_);
  }
  return *this;
}

TFRecordReader::~TFRecordReader() { Close(); }

void TFRecordReader::Close() {
  if (fd_ >= 0) ::close(fd_);  // read-only: nothing to lose on a failed close
  fd_ = -1;
}

bool TFRecordReader::FitsInFile(uint64_t length) const {
  const uint64_t framing = kTFRecordHeaderBytes + kTFRecordFooterBytes;
  if (file_size_ < offset_ + framing) return false;
  return length <= file_size_ - offset_ - framing;
}

absl::Status TFRecordReader::RecordError(absl::StatusCode code, absl::string_view what) const {
  return absl::Status(code, absl::StrCat(path_, ": record ", record_index_, " at byte offset ",
                                         offset_, ": ", what));
}

absl::Status TFRecordReader::FillBuffer() {
  if (buffer_.size() != options_.buffer_size) buffer_.resize(options_.buffer_size);
  buffer_begin_ = buffer_end_ = 0;
  while (true) {
    const ssize_t n = ::read(fd_, &buffer_[0], buffer_.size());
    if (n >= 0) {
      buffer_end_ = static_cast<size_t>(n);
      if (n == 0) eof_ = true;
      return absl::OkStatus();
    }
    if (errno != EINTR) return RecordError(absl::ErrnoToStatusCode(errno),
                                           absl::StrCat("read failed: ", std::strerror(errno)));
  }
}

absl::Status TFRecordReader::ReadFully(char* dst, size_t size, size_t* got) {
  *got = 0;
  while (*got < size) {
    const size_t buffered = buffer_end_ - buffer_begin_;
    if (buffered > 0) {
      const size_t take = std::min(buffered, size - *got);
      std::memcpy(dst + *got, buffer_.data() + buffer_begin_, take);
      buffer_begin_ += take;
      *got += take;
      continue;
    }
    if (eof_) return absl::OkStatus();
    const size_t want = size - *got;
    if (want >= options_.buffer_size) {
      // Large remainder: read straight into the destination, no copy.
      const ssize_t n = ::read(fd_, dst + *got, want);
      if (n < 0) {
        if (errno == EINTR) continue;
        return RecordError(absl::ErrnoToStatusCode(errno),
                           absl::StrCat("read failed: ", std::strerror(errno)));
      }
      if (n == 0) eof_ = true;
      *got += static_cast<size_t>(n);
      continue;
    }
    RETURN_IF_ERROR_AS_IS(FillBuffer());
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> TFRecordReader::Next(std::string* record) {
  if (!error_.ok()) return error_;
  if (fd_ < 0) {
    error_ = absl::FailedPreconditionError(absl::StrCat(path_, ": the reader is not open"));
    return error_;
  }
  char header[kTFRecordHeaderBytes];
  size_t got = 0;
  if (absl::Status s = ReadFully(header, sizeof(header), &got); !s.ok()) return error_ = s;
  if (got == 0) return false;  // clean end of file
  if (got < sizeof(header)) {
    return error_ = RecordError(
               absl::StatusCode::kDataLoss,
               absl::StrCat("truncated record: the file ends after ", got, " of the ",
                            kTFRecordHeaderBytes, " header bytes"));
  }
  const uint64_t length = GetLittleEndian64(header);
  const uint32_t length_crc = Crc32cExtend(0, header, 8);
  const uint32_t stored_length_crc = UnmaskCrc32c(GetLittleEndian32(header + 8));
  if (length_crc != stored_length_crc) {
    return error_ = RecordError(
               absl::StatusCode::kDataLoss,
               absl::StrCat("corrupt length: CRC mismatch (stored ", Hex32(stored_length_crc),
                            ", computed ", Hex32(length_crc), " over length ", length, ")"));
  }
  if (length > options_.max_record_bytes) {
    return error_ = RecordError(absl::StatusCode::kDataLoss,
                                absl::StrCat("record length ", length, " exceeds the limit of ",
                                             options_.max_record_bytes, " bytes"));
  }
  // A length beyond the end of a regular file is a truncation: say so before
  // allocating for it. (The size is re-read only when a record seems to pass
  // it, so a file that grows while being read is still read.)
  if (file_size_known_ && !FitsInFile(length)) {
    file_size_known_ = ReadFileSize(fd_, &file_size_);
    if (file_size_known_ && !FitsInFile(length)) {
      return error_ = RecordError(
                 absl::StatusCode::kDataLoss,
                 absl::StrCat("truncated record: its length ", length, " needs ",
                              kTFRecordHeaderBytes + length + kTFRecordFooterBytes,
                              " bytes from here but the file has ",
                              file_size_ > offset_ ? file_size_ - offset_ : 0));
    }
  }
  record->resize(length);
  if (absl::Status s = ReadFully(record->empty() ? nullptr : &(*record)[0], length, &got);
      !s.ok())
    return error_ = s;
  if (got < length) {
    return error_ = RecordError(absl::StatusCode::kDataLoss,
                                absl::StrCat("truncated record: the file ends after ", got,
                                             " of ", length, " data bytes"));
  }
  char footer[kTFRecordFooterBytes];
  if (absl::Status s = ReadFully(footer, sizeof(footer), &got); !s.ok()) return error_ = s;
  if (got < sizeof(footer)) {
    return error_ = RecordError(
               absl::StatusCode::kDataLoss,
               absl::StrCat("truncated record: the file ends after ", got, " of the ",
                            kTFRecordFooterBytes, " data CRC bytes"));
  }
  const uint32_t data_crc = Crc32c(*record);
  const uint32_t stored_data_crc = UnmaskCrc32c(GetLittleEndian32(footer));
  if (data_crc != stored_data_crc) {
    return error_ = RecordError(absl::StatusCode::kDataLoss,
                                absl::StrCat("corrupt data: CRC mismatch (stored ",
                                             Hex32(stored_data_crc), ", computed ", Hex32(data_crc),
                                             " over ", length, " bytes)"));
  }
  offset_ += kTFRecordHeaderBytes + length + kTFRecordFooterBytes;
  ++record_index_;
  return true;
}

// ---------------------------------------------------------------- writer

absl::StatusOr<TFRecordWriter> TFRecordWriter::Create(const std::string& path) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return ErrnoError(errno, absl::StrCat("cannot create TFRecord file ", path));
  return TFRecordWriter(path, fd);
}

TFRecordWriter::TFRecordWriter(TFRecordWriter&& other) noexcept { *this = std::move(other); }

TFRecordWriter& TFRecordWriter::operator=(TFRecordWriter&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    other.fd_ = -1;
    buffer_ = std::move(other.buffer_);
    other.buffer_.clear();
    records_written_ = other.records_written_;
    error_ = std::move(other.error_);
  }
  return *this;
}

TFRecordWriter::~TFRecordWriter() {
  if (fd_ >= 0) {
    (void)Flush();  // best effort; Close() is the call that reports
    ::close(fd_);
  }
}

absl::Status TFRecordWriter::WriteToFile(const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd_, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return error_ = ErrnoError(errno, absl::StrCat("cannot write TFRecord file ", path_));
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status TFRecordWriter::Write(absl::string_view record) {
  if (!error_.ok()) return error_;
  if (fd_ < 0)
    return absl::FailedPreconditionError(absl::StrCat(path_, ": the writer is closed"));
  const std::string framed = EncodeTFRecord(record);
  if (buffer_.size() + framed.size() > kWriteBufferBytes) {
    RETURN_IF_ERROR_AS_IS(Flush());
  }
  if (framed.size() >= kWriteBufferBytes) {
    RETURN_IF_ERROR_AS_IS(WriteToFile(framed.data(), framed.size()));
  } else {
    buffer_ += framed;
  }
  ++records_written_;
  return absl::OkStatus();
}

absl::Status TFRecordWriter::Flush() {
  if (!error_.ok()) return error_;
  if (fd_ < 0)
    return absl::FailedPreconditionError(absl::StrCat(path_, ": the writer is closed"));
  RETURN_IF_ERROR_AS_IS(WriteToFile(buffer_.data(), buffer_.size()));
  buffer_.clear();
  return absl::OkStatus();
}

absl::Status TFRecordWriter::Close() {
  if (fd_ < 0) {
    return error_.ok() ? absl::FailedPreconditionError(
                             absl::StrCat(path_, ": the writer is already closed"))
                       : error_;
  }
  absl::Status flushed = Flush();
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0 && flushed.ok())
    flushed = error_ = ErrnoError(errno, absl::StrCat("cannot close TFRecord file ", path_));
  return flushed;
}

}  // namespace cnnbench::input
