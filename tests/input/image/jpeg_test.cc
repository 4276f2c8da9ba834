// JPEG decode/encode: round trips, grayscale and CMYK to RGB, DCT-domain
// downscaling, and the errors for bad or absurd input.
#include "input/image/jpeg.h"

#include <turbojpeg.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

// libjpeg's header needs <cstdio> first.
#include <jpeglib.h>

namespace cnnbench::input {
namespace {

using ::testing::HasSubstr;

// A smooth colour gradient (JPEG-friendly), deterministic.
Image Gradient(int height, int width) {
  Image image;
  image.height = height;
  image.width = width;
  image.channels = 3;
  image.pixels.resize(static_cast<size_t>(height) * width * 3);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      uint8_t* p = &image.pixels[(static_cast<size_t>(y) * width + x) * 3];
      p[0] = static_cast<uint8_t>(255 * x / std::max(1, width - 1));
      p[1] = static_cast<uint8_t>(255 * y / std::max(1, height - 1));
      p[2] = static_cast<uint8_t>(128 + 100 * std::sin(0.05 * (x + y)));
    }
  }
  return image;
}

double Psnr(const Image& a, const Image& b) {
  double squared = 0;
  for (size_t i = 0; i < a.pixels.size(); ++i) {
    const double d = static_cast<double>(a.pixels[i]) - b.pixels[i];
    squared += d * d;
  }
  const double mse = squared / a.pixels.size();
  return mse == 0 ? 99.0 : 10 * std::log10(255.0 * 255.0 / mse);
}

int MaxAbsError(const Image& a, const Image& b) {
  int worst = 0;
  for (size_t i = 0; i < a.pixels.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<int>(a.pixels[i]) - b.pixels[i]));
  }
  return worst;
}

std::string Encode(const Image& image, EncodeOptions options = {}) {
  auto jpeg = EncodeJpeg(image, options);
  EXPECT_TRUE(jpeg.ok()) << jpeg.status();
  return jpeg.ok() ? *jpeg : std::string();
}

TEST(JpegTest, RoundTripAtQuality95KeepsSizeAndPixels) {
  const Image source = Gradient(37, 53);  // not multiples of the 16x16 MCU
  const std::string jpeg = Encode(source);
  ASSERT_GT(jpeg.size(), 100u);
  DecodeInfo info;
  auto decoded = DecodeJpeg(jpeg, {}, &info);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->height, 37);
  EXPECT_EQ(decoded->width, 53);
  EXPECT_EQ(decoded->channels, 3);
  ASSERT_EQ(decoded->pixels.size(), 37u * 53 * 3);
  EXPECT_EQ(info.original_height, 37);
  EXPECT_EQ(info.original_width, 53);
  EXPECT_EQ(info.scale.num, 1);
  EXPECT_EQ(info.scale.denom, 1);
  EXPECT_GT(Psnr(source, *decoded), 38.0);
  EXPECT_LE(MaxAbsError(source, *decoded), 24);

  // Without chroma subsampling the error is smaller still.
  EncodeOptions full_chroma;
  full_chroma.subsampling = TJSAMP_444;
  auto decoded444 = DecodeJpeg(Encode(source, full_chroma));
  ASSERT_TRUE(decoded444.ok()) << decoded444.status();
  EXPECT_GT(Psnr(source, *decoded444), 42.0);
  EXPECT_LE(MaxAbsError(source, *decoded444), 8);
}

TEST(JpegTest, GrayscaleJpegDecodesToEqualRgbChannels) {
  const Image source = Gradient(24, 40);
  EncodeOptions gray;
  gray.grayscale = true;
  const std::string jpeg = Encode(source, gray);
  auto decoder = JpegDecoder::Create();
  ASSERT_TRUE(decoder.ok());
  auto header = decoder->ReadHeader(jpeg);
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->colorspace, TJCS_GRAY);
  Image decoded;
  ASSERT_TRUE(decoder->Decode(jpeg, {}, &decoded).ok());
  ASSERT_EQ(decoded.channels, 3);
  int colourful = 0;
  for (int y = 0; y < decoded.height; ++y) {
    for (int x = 0; x < decoded.width; ++x) {
      ASSERT_EQ(decoded.at(y, x, 0), decoded.at(y, x, 1)) << y << "," << x;
      ASSERT_EQ(decoded.at(y, x, 0), decoded.at(y, x, 2)) << y << "," << x;
      // The grey level is the source's luma (BT.601).
      const double luma =
          0.299 * source.at(y, x, 0) + 0.587 * source.at(y, x, 1) + 0.114 * source.at(y, x, 2);
      EXPECT_NEAR(decoded.at(y, x, 0), luma, 6) << y << "," << x;
      colourful += source.at(y, x, 0) != source.at(y, x, 1);
    }
  }
  EXPECT_GT(colourful, 0);  // the source was not grey already

  // A one-channel image encodes too (as grey).
  Image one_channel;
  one_channel.height = 8;
  one_channel.width = 8;
  one_channel.channels = 1;
  one_channel.pixels.assign(64, 77);
  auto grey = DecodeJpeg(Encode(one_channel));
  ASSERT_TRUE(grey.ok()) << grey.status();
  for (uint8_t v : grey->pixels) EXPECT_NEAR(v, 77, 1);
}

// CMYK pixels as Adobe's inverted convention stores them (255 = no ink).
std::string CmykJpeg(const std::vector<uint8_t>& cmyk, int height, int width) {
  tjhandle handle = tjInitCompress();
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  const int status = tjCompress2(handle, cmyk.data(), width, 0, height, TJPF_CMYK, &jpeg, &size,
                                 TJSAMP_444, 98, TJFLAG_ACCURATEDCT);
  EXPECT_EQ(status, 0) << tjGetErrorStr2(handle);
  std::string result(reinterpret_cast<const char*>(jpeg), size);
  tjFree(jpeg);
  tjDestroy(handle);
  return result;
}

TEST(JpegTest, AdobeCmykJpegDecodesToRgb) {
  // Four 8x8 blocks side by side: red, green, blue and white, inverted CMYK.
  const int height = 8, width = 32;
  const uint8_t blocks[4][4] = {
      {255, 0, 0, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}, {255, 255, 255, 255}};
  const uint8_t expected[4][3] = {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {255, 255, 255}};
  std::vector<uint8_t> cmyk(static_cast<size_t>(height) * width * 4);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      for (int c = 0; c < 4; ++c) cmyk[(y * width + x) * 4 + c] = blocks[x / 8][c];
    }
  }
  const std::string jpeg = CmykJpeg(cmyk, height, width);
  ASSERT_FALSE(jpeg.empty());
  // TurboJPEG writes CMYK as YCCK with an Adobe marker, as Photoshop does.
  EXPECT_TRUE(HasAdobeMarker(jpeg));
  auto decoder = JpegDecoder::Create();
  ASSERT_TRUE(decoder.ok());
  auto header = decoder->ReadHeader(jpeg);
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->colorspace, TJCS_YCCK);
  EXPECT_TRUE(header->adobe_marker);
  Image decoded;
  ASSERT_TRUE(decoder->Decode(jpeg, {}, &decoded).ok());
  ASSERT_EQ(decoded.channels, 3);
  ASSERT_EQ(decoded.width, width);
  for (int block = 0; block < 4; ++block) {
    for (int c = 0; c < 3; ++c) {
      // The block's centre (edges ring a little).
      EXPECT_NEAR(decoded.at(4, block * 8 + 4, c), expected[block][c], 12)
          << "block " << block << " channel " << c;
    }
  }
}

TEST(JpegTest, CmykToRgbConventions) {
  const uint8_t cmyk[] = {0, 0, 0, 0, 255, 255, 255, 255, 255, 0, 0, 0, 100, 200, 50, 128};
  uint8_t plain[12], inverted[12];
  CmykToRgb(cmyk, 4, /*adobe_inverted=*/false, plain);
  CmykToRgb(cmyk, 4, /*adobe_inverted=*/true, inverted);
  // Ink amounts: no ink is white, full ink black, full cyan is (0, 255, 255).
  const uint8_t expected_plain[] = {255,
                                    255,
                                    255,
                                    0,
                                    0,
                                    0,
                                    0,
                                    255,
                                    255,
                                    (155 * 127 + 127) / 255,
                                    (55 * 127 + 127) / 255,
                                    (205 * 127 + 127) / 255};
  const uint8_t expected_inverted[] = {0,
                                       0,
                                       0,
                                       255,
                                       255,
                                       255,
                                       0,
                                       0,
                                       0,
                                       (100 * 128 + 127) / 255,
                                       (200 * 128 + 127) / 255,
                                       (50 * 128 + 127) / 255};
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(plain[i], expected_plain[i]) << i;
    EXPECT_EQ(inverted[i], expected_inverted[i]) << i;
  }
}

// A JPEG whose chroma sampling (Y 2x2, Cb 1x2, Cr 1x1) has no TJSAMP_*
// name, written with libjpeg directly.
std::string OddSamplingJpeg(const Image& image) {
  jpeg_compress_struct compress;
  jpeg_error_mgr errors;
  compress.err = jpeg_std_error(&errors);
  jpeg_create_compress(&compress);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&compress, &buffer, &size);
  compress.image_width = image.width;
  compress.image_height = image.height;
  compress.input_components = 3;
  compress.in_color_space = JCS_RGB;
  jpeg_set_defaults(&compress);
  jpeg_set_quality(&compress, 95, TRUE);
  compress.comp_info[0].h_samp_factor = 2;
  compress.comp_info[0].v_samp_factor = 2;
  compress.comp_info[1].h_samp_factor = 1;
  compress.comp_info[1].v_samp_factor = 2;
  compress.comp_info[2].h_samp_factor = 1;
  compress.comp_info[2].v_samp_factor = 1;
  jpeg_start_compress(&compress, TRUE);
  while (compress.next_scanline < compress.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(image.data() + static_cast<size_t>(compress.next_scanline) *
                                                           image.width * 3);
    jpeg_write_scanlines(&compress, &row, 1);
  }
  jpeg_finish_compress(&compress);
  jpeg_destroy_compress(&compress);
  std::string result(reinterpret_cast<const char*>(buffer), size);
  free(buffer);
  return result;
}

TEST(JpegTest, UnusualChromaSamplingDecodes) {
  const Image source = Gradient(48, 64);
  const std::string jpeg = OddSamplingJpeg(source);
  // TurboJPEG's own header reader refuses it...
  tjhandle handle = tjInitDecompress();
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  EXPECT_NE(tjDecompressHeader3(handle, reinterpret_cast<const unsigned char*>(jpeg.data()),
                                jpeg.size(), &width, &height, &subsampling, &colorspace),
            0);
  tjDestroy(handle);
  // ...ours reads the frame header and decodes it, at full size and scaled.
  auto decoder = JpegDecoder::Create();
  ASSERT_TRUE(decoder.ok());
  auto header = decoder->ReadHeader(jpeg);
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_EQ(header->height, 48);
  EXPECT_EQ(header->width, 64);
  EXPECT_EQ(header->subsampling, -1);
  EXPECT_EQ(header->colorspace, TJCS_YCbCr);
  Image decoded;
  ASSERT_TRUE(decoder->Decode(jpeg, {}, &decoded).ok());
  EXPECT_EQ(decoded.height, 48);
  EXPECT_EQ(decoded.width, 64);
  EXPECT_GT(Psnr(source, decoded), 30.0);
  DecodeOptions half;
  half.min_height = 24;
  half.min_width = 32;
  auto info = decoder->Decode(jpeg, half, &decoded);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(decoded.height, 24);
  EXPECT_EQ(decoded.width, 32);
}

TEST(JpegTest, AdobeMarkerDetection) {
  EXPECT_FALSE(HasAdobeMarker(Encode(Gradient(8, 8))));  // JFIF, no APP14
  std::string crafted = std::string("\xFF\xD8", 2);
  crafted += std::string("\xFF\xEE\x00\x0E", 4) + "Adobe" + std::string(7, '\0');
  crafted += std::string("\xFF\xDA", 2);
  EXPECT_TRUE(HasAdobeMarker(crafted));
  // An APP14 after the start of scan does not count; nor a short one.
  EXPECT_FALSE(HasAdobeMarker(std::string("\xFF\xD8\xFF\xDA\x00\x02", 6) + crafted.substr(2)));
  std::string short_app14 = std::string("\xFF\xD8\xFF\xEE\x00\x07", 6) + "Adobe";
  EXPECT_FALSE(HasAdobeMarker(short_app14));
  EXPECT_FALSE(HasAdobeMarker(""));
  EXPECT_FALSE(HasAdobeMarker(std::string("\xFF\xD8\xFF\xEE\xFF\xFF", 6)));  // runs off the end
}

TEST(JpegTest, ScaleFactorIsTheSmallestThatKeepsTheMinimum) {
  // 120 x 200 image; libjpeg-turbo's factors go down in eighths.
  auto check = [](int min_height, int min_width, int num, int denom) {
    const ScaleFactor scale = ChooseScaleFactor(120, 200, min_height, min_width);
    EXPECT_EQ(scale.num * denom, num * scale.denom)
        << "min " << min_height << "x" << min_width << ": got " << scale.num << "/" << scale.denom
        << ", want " << num << "/" << denom;
  };
  check(0, 0, 1, 1);  // no minimum: full size
  check(1, 0, 1, 8);
  check(0, 1, 1, 8);
  check(120, 200, 1, 1);
  check(121, 0, 1, 1);  // nothing qualifies: no upscaling, 1/1
  check(30, 50, 1, 4);
  check(31, 50, 3, 8);
  check(30, 51, 3, 8);
  check(60, 0, 1, 2);
  check(61, 0, 5, 8);
  check(105, 0, 7, 8);
  check(15, 25, 1, 8);
  check(16, 0, 1, 4);
  EXPECT_EQ(ScaledDimension(37, {3, 8}), 14);  // ceil(13.875)
  EXPECT_EQ(ScaledDimension(120, {1, 8}), 15);
}

TEST(JpegTest, DecodeDownscalesInTheDctDomain) {
  const Image source = Gradient(120, 200);
  const std::string jpeg = Encode(source);
  auto decoder = JpegDecoder::Create();
  ASSERT_TRUE(decoder.ok());
  Image decoded;
  DecodeOptions options;
  options.min_height = 31;
  options.min_width = 50;
  auto info = decoder->Decode(jpeg, options, &decoded);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->scale.num, 3);
  EXPECT_EQ(info->scale.denom, 8);
  EXPECT_EQ(info->original_height, 120);
  EXPECT_EQ(info->original_width, 200);
  EXPECT_EQ(decoded.height, 45);
  EXPECT_EQ(decoded.width, 75);
  ASSERT_EQ(decoded.pixels.size(), 45u * 75 * 3);
  // The scaled image approximates the source sampled at the same place.
  double total_error = 0;
  for (int y = 0; y < decoded.height; ++y) {
    for (int x = 0; x < decoded.width; ++x) {
      const int sy = std::min(119, static_cast<int>((y + 0.5) * 8 / 3));
      const int sx = std::min(199, static_cast<int>((x + 0.5) * 8 / 3));
      for (int c = 0; c < 3; ++c) {
        total_error += std::abs(static_cast<int>(decoded.at(y, x, c)) - source.at(sy, sx, c));
      }
    }
  }
  EXPECT_LT(total_error / decoded.pixels.size(), 6.0);

  // 1/8 when only a thumbnail is needed.
  options.min_height = 1;
  options.min_width = 1;
  info = decoder->Decode(jpeg, options, &decoded);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->scale.denom / info->scale.num, 8);
  EXPECT_EQ(decoded.height, 15);
  EXPECT_EQ(decoded.width, 25);
}

TEST(JpegTest, DecoderIsReusableAcrossImagesOfDifferentSizes) {
  auto decoder = JpegDecoder::Create();
  ASSERT_TRUE(decoder.ok());
  const std::string big = Encode(Gradient(64, 96));
  const std::string small = Encode(Gradient(16, 8));
  Image image;
  ASSERT_TRUE(decoder->Decode(big, {}, &image).ok());
  const size_t capacity = image.pixels.capacity();
  const uint8_t* memory = image.pixels.data();
  ASSERT_TRUE(decoder->Decode(small, {}, &image).ok());
  EXPECT_EQ(image.height, 16);
  EXPECT_EQ(image.width, 8);
  EXPECT_EQ(image.pixels.size(), 16u * 8 * 3);
  EXPECT_EQ(image.pixels.data(), memory);  // reused, not reallocated
  EXPECT_EQ(image.pixels.capacity(), capacity);
  auto fresh = DecodeJpeg(small);
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(fresh->pixels, image.pixels);
  ASSERT_TRUE(decoder->Decode(big, {}, &image).ok());
  EXPECT_EQ(image.pixels.data(), memory);

  // A moved-from decoder reports an error instead of crashing.
  JpegDecoder moved = std::move(*decoder);
  EXPECT_TRUE(moved.Decode(small, {}, &image).ok());
  EXPECT_EQ(decoder->Decode(small, {}, &image).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(JpegTest, BadInputIsAnErrorWithTurboJpegsMessage) {
  auto decoder = JpegDecoder::Create();
  ASSERT_TRUE(decoder.ok());
  Image image;
  auto empty = decoder->Decode("", {}, &image);
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(empty.status().message(), HasSubstr("empty"));

  auto garbage = decoder->Decode("this is certainly not a JPEG file, just text", {}, &image);
  EXPECT_EQ(garbage.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(garbage.status().message(), HasSubstr("not a JPEG"));
  // TurboJPEG's own words follow ours.
  EXPECT_GT(garbage.status().message().size(),
            std::string("not a JPEG or bad JPEG header").size() + 20);

  const std::string jpeg = Encode(Gradient(64, 64));
  // Cut inside the scan: the header reads, the pixels do not (libjpeg's
  // "premature end" warning is an error here).
  auto truncated = decoder->Decode(absl::string_view(jpeg).substr(0, jpeg.size() / 2), {}, &image);
  EXPECT_EQ(truncated.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(truncated.status().message(), HasSubstr("corrupt JPEG"));
  EXPECT_THAT(truncated.status().message(), HasSubstr("Premature end"));
  // Cut inside the header.
  auto cut_header = decoder->Decode(absl::string_view(jpeg).substr(0, 20), {}, &image);
  EXPECT_EQ(cut_header.status().code(), absl::StatusCode::kInvalidArgument);

  // Corrupt entropy-coded data: flip bytes in the middle of the scan.
  std::string corrupt = jpeg;
  for (size_t i = corrupt.size() / 2; i < corrupt.size() / 2 + 40; i += 2) {
    corrupt[i] = '\xFF';
    corrupt[i + 1] = '\xD3';  // restart markers where none belong
  }
  auto corrupted = decoder->Decode(corrupt, {}, &image);
  EXPECT_FALSE(corrupted.ok());

  // The decoder still works after errors.
  EXPECT_TRUE(decoder->Decode(jpeg, {}, &image).ok());
}

// Rewrites the frame header's height and width.
std::string WithFrameSize(std::string jpeg, int height, int width) {
  for (size_t i = 2; i + 9 < jpeg.size(); ++i) {
    if (static_cast<uint8_t>(jpeg[i]) == 0xFF && static_cast<uint8_t>(jpeg[i + 1]) == 0xC0) {
      jpeg[i + 5] = static_cast<char>(height >> 8);
      jpeg[i + 6] = static_cast<char>(height & 0xFF);
      jpeg[i + 7] = static_cast<char>(width >> 8);
      jpeg[i + 8] = static_cast<char>(width & 0xFF);
      return jpeg;
    }
  }
  ADD_FAILURE() << "no SOF0 marker";
  return jpeg;
}

TEST(JpegTest, AbsurdHeaderSizesAreRefusedBeforeDecoding) {
  const std::string jpeg = Encode(Gradient(16, 16));
  auto decoder = JpegDecoder::Create();
  ASSERT_TRUE(decoder.ok());
  Image image;
  // Over the side limit.
  auto wide = decoder->Decode(WithFrameSize(jpeg, 16, 40000), {}, &image);
  EXPECT_EQ(wide.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(wide.status().message(), HasSubstr("40000x16"));
  EXPECT_THAT(wide.status().message(), HasSubstr("too large"));
  // Each side allowed, the area not (20000^2 = 400 Mpx).
  auto huge = decoder->ReadHeader(WithFrameSize(jpeg, 20000, 20000));
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(huge.status().message(), HasSubstr("256 Mpx"));
  // A large but allowed header reads fine.
  auto large = decoder->ReadHeader(WithFrameSize(jpeg, 16000, 16000));
  ASSERT_TRUE(large.ok()) << large.status();
  EXPECT_EQ(large->height, 16000);
  EXPECT_TRUE(image.pixels.empty());  // nothing was allocated for the refused ones
}

TEST(JpegTest, EncodeRejectsBadImagesAndOptions) {
  Image image = Gradient(8, 8);
  EXPECT_EQ(EncodeJpeg(image, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EncodeJpeg(image, 101).status().code(), absl::StatusCode::kInvalidArgument);
  Image two_channels = image;
  two_channels.channels = 2;
  EXPECT_THAT(EncodeJpeg(two_channels).status().message(), HasSubstr("1 or 3 channels"));
  Image short_pixels = image;
  short_pixels.pixels.pop_back();
  EXPECT_THAT(EncodeJpeg(short_pixels).status().message(), HasSubstr("holds"));
  Image empty;
  EXPECT_FALSE(EncodeJpeg(empty).ok());
}

}  // namespace
}  // namespace cnnbench::input
