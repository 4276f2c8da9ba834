// JPEG decode/encode on TurboJPEG (see jpeg.h).
#include "input/image/jpeg.h"

#include <turbojpeg.h>

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace cnnbench::input {
namespace {

// TurboJPEG's message for the last failure on `handle` (or the global one).
std::string TurboJpegMessage(tjhandle handle) {
  const char* message = tjGetErrorStr2(handle);
  return message != nullptr ? std::string(message) : std::string("unknown TurboJPEG error");
}

const unsigned char* Bytes(absl::string_view bytes) {
  return reinterpret_cast<const unsigned char*>(bytes.data());
}

// Destroys a TurboJPEG handle at scope exit.
struct HandleGuard {
  tjhandle handle;
  ~HandleGuard() {
    if (handle != nullptr) tjDestroy(handle);
  }
};

}  // namespace

int ScaledDimension(int dimension, ScaleFactor scale) {
  return static_cast<int>((static_cast<int64_t>(dimension) * scale.num + scale.denom - 1) /
                          scale.denom);
}

ScaleFactor ChooseScaleFactor(int height, int width, int min_height, int min_width) {
  ScaleFactor best;                                    // 1/1
  if (min_height <= 0 && min_width <= 0) return best;  // no minimum asked: full size
  int count = 0;
  const tjscalingfactor* factors = tjGetScalingFactors(&count);
  if (factors == nullptr) return best;
  for (int i = 0; i < count; ++i) {
    const ScaleFactor candidate{factors[i].num, factors[i].denom};
    if (candidate.num > candidate.denom) continue;  // only downscaling
    if (ScaledDimension(height, candidate) < min_height) continue;
    if (ScaledDimension(width, candidate) < min_width) continue;
    // Smaller factor: num/denom < best.num/best.denom.
    if (static_cast<int64_t>(candidate.num) * best.denom <
        static_cast<int64_t>(best.num) * candidate.denom) {
      best = candidate;
    }
  }
  return best;
}

namespace {

// Calls visit(marker, payload, payload_size) for each marker segment before
// the first scan, stopping early when it returns false. Malformed or
// truncated marker data ends the walk.
template <typename Visit>
void ForEachSegment(absl::string_view bytes, Visit&& visit) {
  const size_t size = bytes.size();
  const unsigned char* data = Bytes(bytes);
  if (size < 4 || data[0] != 0xFF || data[1] != 0xD8) return;
  size_t pos = 2;
  while (pos + 1 < size) {
    if (data[pos] != 0xFF) return;                  // not at a marker: malformed
    while (pos < size && data[pos] == 0xFF) ++pos;  // fill bytes
    if (pos >= size) return;
    const unsigned char marker = data[pos++];
    if (marker == 0xDA || marker == 0xD9) return;  // start of scan / end of image
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) continue;  // no length
    if (pos + 2 > size) return;
    const size_t length = (static_cast<size_t>(data[pos]) << 8) | data[pos + 1];
    if (length < 2 || pos + length > size) return;
    if (!visit(marker, data + pos + 2, length - 2)) return;
    pos += length;
  }
}

// The frame header (SOF0..SOF15 but DHT, JPG and DAC): size and component count.
struct FrameHeader {
  int height = 0;
  int width = 0;
  int components = 0;
};
bool ReadFrameHeader(absl::string_view bytes, FrameHeader* frame) {
  bool found = false;
  ForEachSegment(bytes, [&](unsigned char marker, const unsigned char* payload, size_t size) {
    const bool sof =
        marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (!sof) return true;
    if (size >= 6) {
      frame->height = (payload[1] << 8) | payload[2];
      frame->width = (payload[3] << 8) | payload[4];
      frame->components = payload[5];
      found = true;
    }
    return false;
  });
  return found;
}

}  // namespace

bool HasAdobeMarker(absl::string_view bytes) {
  bool adobe = false;
  ForEachSegment(bytes, [&](unsigned char marker, const unsigned char* payload, size_t size) {
    // libjpeg recognises APP14 as Adobe's with at least 12 bytes of data.
    adobe = marker == 0xEE && size >= 12 && std::memcmp(payload, "Adobe", 5) == 0;
    return !adobe;
  });
  return adobe;
}

void CmykToRgb(const uint8_t* cmyk, int64_t pixels, bool adobe_inverted, uint8_t* rgb) {
  for (int64_t i = 0; i < pixels; ++i) {
    const int c = cmyk[4 * i], m = cmyk[4 * i + 1], y = cmyk[4 * i + 2], k = cmyk[4 * i + 3];
    if (adobe_inverted) {
      rgb[3 * i] = static_cast<uint8_t>((c * k + 127) / 255);
      rgb[3 * i + 1] = static_cast<uint8_t>((m * k + 127) / 255);
      rgb[3 * i + 2] = static_cast<uint8_t>((y * k + 127) / 255);
    } else {
      rgb[3 * i] = static_cast<uint8_t>(((255 - c) * (255 - k) + 127) / 255);
      rgb[3 * i + 1] = static_cast<uint8_t>(((255 - m) * (255 - k) + 127) / 255);
      rgb[3 * i + 2] = static_cast<uint8_t>(((255 - y) * (255 - k) + 127) / 255);
    }
  }
}

absl::StatusOr<JpegDecoder> JpegDecoder::Create() {
  tjhandle handle = tjInitDecompress();
  if (handle == nullptr) {
    return absl::InternalError(
        absl::StrCat("tjInitDecompress failed: ", TurboJpegMessage(nullptr)));
  }
  return JpegDecoder(handle);
}

JpegDecoder::JpegDecoder(JpegDecoder&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), cmyk_(std::move(other.cmyk_)) {}

JpegDecoder& JpegDecoder::operator=(JpegDecoder&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) tjDestroy(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    cmyk_ = std::move(other.cmyk_);
  }
  return *this;
}

JpegDecoder::~JpegDecoder() {
  if (handle_ != nullptr) tjDestroy(handle_);
}

absl::StatusOr<JpegHeader> JpegDecoder::ReadHeader(absl::string_view bytes) {
  if (handle_ == nullptr) return absl::FailedPreconditionError("JpegDecoder was moved from");
  if (bytes.empty()) return absl::InvalidArgumentError("not a JPEG: empty buffer");
  JpegHeader header;
  header.adobe_marker = HasAdobeMarker(bytes);
  if (tjDecompressHeader3(handle_, Bytes(bytes), bytes.size(), &header.width, &header.height,
                          &header.subsampling, &header.colorspace) != 0) {
    const std::string message = TurboJpegMessage(handle_);
    // TurboJPEG 2.1 refuses headers whose chroma sampling matches none of
    // its TJSAMP_* kinds although tjDecompress2 decodes them: read the
    // frame header ourselves for those.
    FrameHeader frame;
    if (message.find("subsampling") == std::string::npos || !ReadFrameHeader(bytes, &frame) ||
        (frame.components != 1 && frame.components != 3 && frame.components != 4)) {
      return absl::InvalidArgumentError(
          absl::StrCat("not a JPEG or bad JPEG header (", bytes.size(), " bytes): ", message));
    }
    header.height = frame.height;
    header.width = frame.width;
    header.subsampling = -1;  // none of TJSAMP_*
    header.colorspace = frame.components == 1   ? TJCS_GRAY
                        : frame.components == 3 ? TJCS_YCbCr
                        : header.adobe_marker   ? TJCS_YCCK
                                                : TJCS_CMYK;
  }
  if (header.height <= 0 || header.width <= 0 || header.height > kMaxJpegSide ||
      header.width > kMaxJpegSide ||
      static_cast<int64_t>(header.height) * header.width > kMaxJpegPixels) {
    return absl::InvalidArgumentError(absl::StrCat(
        "JPEG too large or empty: ", header.width, "x", header.height, " pixels (the limit is ",
        kMaxJpegSide, " a side and ", kMaxJpegPixels >> 20, " Mpx)"));
  }
  return header;
}

absl::StatusOr<DecodeInfo> JpegDecoder::Decode(absl::string_view bytes,
                                               const DecodeOptions& options, Image* out) {
  if (options.min_height < 0 || options.min_width < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("negative minimum decode size ", options.min_width, "x", options.min_height));
  }
  auto header_or = ReadHeader(bytes);
  if (!header_or.ok()) return header_or.status();
  const JpegHeader& header = *header_or;

  DecodeInfo info;
  info.original_height = header.height;
  info.original_width = header.width;
  info.scale =
      ChooseScaleFactor(header.height, header.width, options.min_height, options.min_width);
  const int height = ScaledDimension(header.height, info.scale);
  const int width = ScaledDimension(header.width, info.scale);
  const size_t pixels = static_cast<size_t>(height) * width;

  int flags = TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS;
  flags |= options.fast_dct ? TJFLAG_FASTDCT : TJFLAG_ACCURATEDCT;
  if (options.fast_upsample) flags |= TJFLAG_FASTUPSAMPLE;

  const bool cmyk = header.colorspace == TJCS_CMYK || header.colorspace == TJCS_YCCK;
  out->height = height;
  out->width = width;
  out->channels = 3;
  out->pixels.resize(pixels * 3);
  unsigned char* target = out->pixels.data();
  if (cmyk) {
    cmyk_.resize(pixels * 4);
    target = cmyk_.data();
  }
  if (tjDecompress2(handle_, Bytes(bytes), bytes.size(), target, width, /*pitch=*/0, height,
                    cmyk ? TJPF_CMYK : TJPF_RGB, flags) != 0) {
    const bool warning = tjGetErrorCode(handle_) == TJERR_WARNING;
    return absl::InvalidArgumentError(
        absl::StrCat("corrupt JPEG (", header.width, "x", header.height, ", ", bytes.size(),
                     " bytes", warning ? ", recoverable damage treated as an error" : "",
                     "): ", TurboJpegMessage(handle_)));
  }
  if (cmyk) {
    CmykToRgb(cmyk_.data(), static_cast<int64_t>(pixels), header.adobe_marker, out->pixels.data());
  }
  return info;
}

absl::StatusOr<Image> DecodeJpeg(absl::string_view bytes, const DecodeOptions& options,
                                 DecodeInfo* info) {
  auto decoder = JpegDecoder::Create();
  if (!decoder.ok()) return decoder.status();
  Image image;
  auto result = decoder->Decode(bytes, options, &image);
  if (!result.ok()) return result.status();
  if (info != nullptr) *info = *result;
  return image;
}

absl::StatusOr<std::string> EncodeJpeg(const Image& image, const EncodeOptions& options) {
  if (image.height <= 0 || image.width <= 0 || image.height > kMaxJpegSide ||
      image.width > kMaxJpegSide) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot encode a ", image.width, "x", image.height, " image as JPEG"));
  }
  if (image.channels != 1 && image.channels != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("JPEG encoding takes 1 or 3 channels, not ", image.channels));
  }
  const size_t expected = static_cast<size_t>(image.height) * image.width * image.channels;
  if (image.pixels.size() != expected) {
    return absl::InvalidArgumentError(absl::StrCat("image of ", image.width, "x", image.height, "x",
                                                   image.channels, " holds ", image.pixels.size(),
                                                   " bytes, not ", expected));
  }
  if (options.quality < 1 || options.quality > 100) {
    return absl::InvalidArgumentError(
        absl::StrCat("JPEG quality must be in 1..100, not ", options.quality));
  }
  int subsampling = options.subsampling < 0 ? TJSAMP_420 : options.subsampling;
  if (subsampling >= TJ_NUMSAMP) {
    return absl::InvalidArgumentError(absl::StrCat("unknown TJSAMP value ", subsampling));
  }
  // Gray input has nothing to subsample, and gray output drops chroma.
  if (options.grayscale || image.channels == 1) subsampling = TJSAMP_GRAY;
  if (subsampling == TJSAMP_GRAY && image.channels == 3 && !options.grayscale) {
    return absl::InvalidArgumentError("TJSAMP_GRAY needs grayscale = true for an RGB image");
  }

  HandleGuard compressor{tjInitCompress()};
  if (compressor.handle == nullptr) {
    return absl::InternalError(absl::StrCat("tjInitCompress failed: ", TurboJpegMessage(nullptr)));
  }
  unsigned char* jpeg = nullptr;
  unsigned long jpeg_size = 0;
  const int pixel_format = image.channels == 1 ? TJPF_GRAY : TJPF_RGB;
  const int status = tjCompress2(compressor.handle, image.pixels.data(), image.width,
                                 /*pitch=*/0, image.height, pixel_format, &jpeg, &jpeg_size,
                                 subsampling, options.quality, TJFLAG_ACCURATEDCT);
  if (status != 0) {
    if (jpeg != nullptr) tjFree(jpeg);
    return absl::InternalError(
        absl::StrCat("JPEG encoding failed: ", TurboJpegMessage(compressor.handle)));
  }
  std::string result(reinterpret_cast<const char*>(jpeg), jpeg_size);
  tjFree(jpeg);
  return result;
}

}  // namespace cnnbench::input
