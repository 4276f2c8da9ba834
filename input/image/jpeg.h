// JPEG decoding and encoding on libjpeg-turbo's TurboJPEG API: header
// checks, DCT-domain downscaling, grayscale and CMYK converted to RGB, and
// a reusable per-thread decoder so the input pipeline allocates nothing per
// image once its buffers have grown to the largest image.
#ifndef CNNBENCH_INPUT_IMAGE_JPEG_H_
#define CNNBENCH_INPUT_IMAGE_JPEG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace cnnbench::input {

// An 8-bit image, rows top to bottom, channels interleaved (HWC): RGB when
// channels == 3, luminance when channels == 1.
struct Image {
  int height = 0;
  int width = 0;
  int channels = 3;
  std::vector<uint8_t> pixels;  // (height, width, channels)

  uint8_t* data() { return pixels.data(); }
  const uint8_t* data() const { return pixels.data(); }
  uint8_t at(int y, int x, int c) const {
    return pixels[(static_cast<size_t>(y) * width + x) * channels + c];
  }
};

// The largest image the decoder accepts: a header beyond these is refused
// before any pixel memory is allocated.
inline constexpr int kMaxJpegSide = 32768;
inline constexpr int64_t kMaxJpegPixels = int64_t{256} << 20;  // 256 Mpx

// A DCT-domain scaling factor (num/denom), as libjpeg-turbo offers them.
struct ScaleFactor {
  int num = 1;
  int denom = 1;
};

// TurboJPEG's rounding of a dimension under a scale factor: ceil(dim*num/denom).
int ScaledDimension(int dimension, ScaleFactor scale);

// The smallest of libjpeg-turbo's downscaling factors (num/denom <= 1) under
// which a height x width image still measures at least min_height x
// min_width; 1/1 when none smaller qualifies or both minimums are 0 (none
// asked). A minimum of 0 on one side only leaves that side free.
ScaleFactor ChooseScaleFactor(int height, int width, int min_height, int min_width);

// What a JPEG's header says.
struct JpegHeader {
  int height = 0;
  int width = 0;
  int subsampling = 0;        // TJSAMP_*; -1: sampling factors none of them names
  int colorspace = 0;         // TJCS_*
  bool adobe_marker = false;  // an APP14 "Adobe" segment: CMYK stored inverted
};

struct DecodeOptions {
  // The decoded image must measure at least this much; the decoder picks the
  // smallest DCT scaling factor that allows it. Both 0: full size.
  int min_height = 0;
  int min_width = 0;
  // TurboJPEG's fast IDCT and upsampling: off by default (accurate decode).
  bool fast_dct = false;
  bool fast_upsample = false;
};

// What one decode did.
struct DecodeInfo {
  int original_height = 0;  // from the header
  int original_width = 0;
  ScaleFactor scale;  // the factor used; the image is ScaledDimension(original, scale)
};

// Holds a TurboJPEG decompressor and its scratch memory. Not thread-safe:
// use one per thread; distinct decoders may run concurrently.
//
// Errors: a buffer that is not a JPEG, is truncated or corrupt fails with
// TurboJPEG's own message. Warnings (recoverable corruption such as a
// truncated scan that libjpeg would pad with grey) are errors too, as
// TensorFlow's decode_jpeg with try_recover_truncated=false: a damaged
// image is reported, never silently trained on.
class JpegDecoder {
 public:
  static absl::StatusOr<JpegDecoder> Create();
  JpegDecoder(JpegDecoder&& other) noexcept;
  JpegDecoder& operator=(JpegDecoder&& other) noexcept;
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;
  ~JpegDecoder();

  // Reads and checks the header (dimensions within kMaxJpegSide and
  // kMaxJpegPixels) without decoding pixels.
  absl::StatusOr<JpegHeader> ReadHeader(absl::string_view bytes);

  // Decodes to RGB into `out` (3 channels), reusing its memory: no
  // allocation once out->pixels has the capacity.
  absl::StatusOr<DecodeInfo> Decode(absl::string_view bytes, const DecodeOptions& options,
                                    Image* out);

 private:
  explicit JpegDecoder(void* handle) : handle_(handle) {}
  void* handle_ = nullptr;     // tjhandle
  std::vector<uint8_t> cmyk_;  // scratch for CMYK images
};

// One-shot decode (creates a decoder): for tools and tests.
absl::StatusOr<Image> DecodeJpeg(absl::string_view bytes, const DecodeOptions& options = {},
                                 DecodeInfo* info = nullptr);

struct EncodeOptions {
  int quality = 95;        // 1..100
  bool grayscale = false;  // write a one-component JPEG (from RGB or gray input)
  int subsampling = -1;    // TJSAMP_*; -1: 4:2:0 for colour
};

// Encodes an RGB (channels 3) or grayscale (channels 1) image. Thread-safe
// (a compressor per call).
absl::StatusOr<std::string> EncodeJpeg(const Image& image, const EncodeOptions& options = {});
inline absl::StatusOr<std::string> EncodeJpeg(const Image& image, int quality) {
  EncodeOptions options;
  options.quality = quality;
  return EncodeJpeg(image, options);
}

// CMYK to RGB as TensorFlow's decoder does it: without an Adobe marker the
// components are ink amounts (R = (255-C)(255-K)/255); with one they are
// stored inverted, as Photoshop writes them (R = C*K/255).
void CmykToRgb(const uint8_t* cmyk, int64_t pixels, bool adobe_inverted, uint8_t* rgb);

// True when the JPEG's markers before the first scan include an APP14
// "Adobe" segment (what libjpeg reports as saw_Adobe_marker).
bool HasAdobeMarker(absl::string_view bytes);

}  // namespace cnnbench::input

#endif  // CNNBENCH_INPUT_IMAGE_JPEG_H_
