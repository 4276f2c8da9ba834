// tf_cnn_benchmarks' preprocessing: the crop sampler's guarantees, the
// bilinear convention against hand-computed values, flip, colour,
// normalisation and layouts, the evaluation window, and the JPEG paths.
#include "input/image/preprocess.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/dtype.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cnnbench::input {
namespace {

using ::testing::HasSubstr;

Image MakeImage(int height, int width, int channels, std::vector<uint8_t> pixels) {
  Image image;
  image.height = height;
  image.width = width;
  image.channels = channels;
  image.pixels = std::move(pixels);
  return image;
}

// Distinct values per pixel and channel.
Image Pattern(int height, int width) {
  Image image = MakeImage(height, width, 3, {});
  image.pixels.resize(static_cast<size_t>(height) * width * 3);
  for (size_t i = 0; i < image.pixels.size(); ++i)
    image.pixels[i] = static_cast<uint8_t>(i * 7 % 251);
  return image;
}

Image Smooth(int height, int width) {
  Image image = MakeImage(height, width, 3, {});
  image.pixels.resize(static_cast<size_t>(height) * width * 3);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      uint8_t* p = &image.pixels[(static_cast<size_t>(y) * width + x) * 3];
      p[0] = static_cast<uint8_t>(255 * x / (width - 1));
      p[1] = static_cast<uint8_t>(255 * y / (height - 1));
      p[2] = static_cast<uint8_t>(128 + 100 * std::sin(0.03 * (x + 2 * y)));
    }
  }
  return image;
}

Normalization Identity() {
  Normalization n;
  for (int c = 0; c < 3; ++c) {
    n.mean[c] = 0;
    n.stddev[c] = 1;
  }
  return n;
}

BatchSlot Slot(std::vector<float>& batch, int height, int width, int64_t index = 0,
               Layout layout = Layout::kNHWC) {
  BatchSlot slot;
  slot.batch = batch.data();
  slot.dtype = DType::kF32;
  slot.layout = layout;
  slot.height = height;
  slot.width = width;
  slot.index = index;
  return slot;
}

// Fraction of `box` (in [0,1] units) inside `crop` of a height x width image.
double Covered(const CropWindow& crop, const CropBox& box, int height, int width) {
  const double y0 = box.ymin * height, y1 = box.ymax * height;
  const double x0 = box.xmin * width, x1 = box.xmax * width;
  const double oh = std::min<double>(y1, crop.y + crop.height) - std::max<double>(y0, crop.y);
  const double ow = std::min<double>(x1, crop.x + crop.width) - std::max<double>(x0, crop.x);
  if (oh <= 0 || ow <= 0) return 0;
  return oh * ow / ((y1 - y0) * (x1 - x0));
}

TEST(CropSamplerTest, WindowsObeyTheOptionsOrFallBack) {
  const int height = 375, width = 500;
  const std::vector<CropBox> boxes = {{0.1f, 0.2f, 0.4f, 0.5f}, {0.6f, 0.6f, 0.95f, 0.9f}};
  const CropSamplerOptions options;  // tf_cnn_benchmarks' values
  int fell_back = 0;
  std::set<std::tuple<int, int, int, int>> distinct;
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    auto crop = SampleDistortedCrop(height, width, boxes, options, seed);
    ASSERT_TRUE(crop.ok()) << crop.status();
    ASSERT_GE(crop->y, 0);
    ASSERT_GE(crop->x, 0);
    ASSERT_GE(crop->height, 1);
    ASSERT_GE(crop->width, 1);
    ASSERT_LE(crop->y + crop->height, height);
    ASSERT_LE(crop->x + crop->width, width);
    distinct.insert({crop->y, crop->x, crop->height, crop->width});
    if (crop->fell_back) {
      ++fell_back;
      EXPECT_EQ(crop->height, height);
      EXPECT_EQ(crop->width, width);
      continue;
    }
    const double area = static_cast<double>(crop->height) * crop->width;
    EXPECT_GE(area, options.min_area * static_cast<double>(height) * width) << seed;
    EXPECT_LE(area, options.max_area * static_cast<double>(height) * width) << seed;
    const double aspect = static_cast<double>(crop->width) / crop->height;
    EXPECT_GE(aspect, options.min_aspect_ratio) << seed;
    EXPECT_LE(aspect, options.max_aspect_ratio) << seed;
    EXPECT_GE(
        std::max(Covered(*crop, boxes[0], height, width), Covered(*crop, boxes[1], height, width)),
        options.min_object_covered - 1e-9)
        << seed;
  }
  EXPECT_LT(fell_back, 20);           // 100 tries nearly always find one here
  EXPECT_GT(distinct.size(), 1900u);  // seeds give different windows
}

TEST(CropSamplerTest, NoBoxesMeansTheWholeImageIsTheBox) {
  const CropSamplerOptions options;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    auto crop = SampleDistortedCrop(100, 80, {}, options, seed);
    ASSERT_TRUE(crop.ok());
    EXPECT_FALSE(crop->fell_back) << seed;
    // The whole image is the box, so the covered fraction is the crop's
    // share of the image: windows of 5-10% are refused.
    EXPECT_GE(static_cast<double>(crop->height) * crop->width, 0.1 * 100 * 80 - 1e-9) << seed;
  }
  // Many boxes are fine (no fixed limit).
  const std::vector<CropBox> many(300, CropBox{0.4f, 0.4f, 0.6f, 0.6f});
  auto crowded = SampleDistortedCrop(100, 80, many, options, 3);
  ASSERT_TRUE(crowded.ok()) << crowded.status();
  EXPECT_GE(Covered(*crowded, many[0], 100, 80), 0.1);
  // A box of zero area is ignored like no box at all.
  const std::vector<CropBox> degenerate = {{0.5f, 0.5f, 0.5f, 0.9f}};
  for (uint64_t seed = 0; seed < 20; ++seed) {
    auto with = SampleDistortedCrop(100, 80, degenerate, options, seed);
    auto without = SampleDistortedCrop(100, 80, {}, options, seed);
    ASSERT_TRUE(with.ok() && without.ok());
    EXPECT_EQ(std::tie(with->y, with->x, with->height, with->width),
              std::tie(without->y, without->x, without->height, without->width));
  }
}

TEST(CropSamplerTest, FallsBackToTheWholeImageWhenNoWindowCanQualify) {
  const CropSamplerOptions defaults;
  // 10 x 1000: aspect <= 1.33 caps windows at 10 x 13, far below 5% of the area.
  for (uint64_t seed = 0; seed < 20; ++seed) {
    auto crop = SampleDistortedCrop(10, 1000, {}, defaults, seed);
    ASSERT_TRUE(crop.ok());
    EXPECT_TRUE(crop->fell_back);
    EXPECT_EQ(std::tie(crop->y, crop->x, crop->height, crop->width),
              std::make_tuple(0, 0, 10, 1000));
  }
  // A box spanning the image that must be covered whole, with at most half
  // the area allowed.
  CropSamplerOptions strict;
  strict.min_object_covered = 1.0f;
  strict.max_area = 0.5f;
  const std::vector<CropBox> whole = {{0, 0, 1, 1}};
  auto crop = SampleDistortedCrop(200, 200, whole, strict, 7);
  ASSERT_TRUE(crop.ok());
  EXPECT_TRUE(crop->fell_back);
  EXPECT_EQ(crop->height, 200);
  EXPECT_EQ(crop->width, 200);
}

TEST(CropSamplerTest, SameSeedSameWindow) {
  const std::vector<CropBox> boxes = {{0.2f, 0.2f, 0.8f, 0.7f}};
  for (uint64_t seed : {uint64_t{0}, uint64_t{1}, uint64_t{42}, ImageSeed(5, 123456)}) {
    auto a = SampleDistortedCrop(480, 640, boxes, {}, seed);
    auto b = SampleDistortedCrop(480, 640, boxes, {}, seed);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(std::tie(a->y, a->x, a->height, a->width, a->fell_back),
              std::tie(b->y, b->x, b->height, b->width, b->fell_back));
  }
  // Image seeds: deterministic, distinct per image and per run.
  EXPECT_EQ(ImageSeed(1, 2), ImageSeed(1, 2));
  EXPECT_NE(ImageSeed(1, 2), ImageSeed(1, 3));
  EXPECT_NE(ImageSeed(1, 2), ImageSeed(2, 2));
}

TEST(CropSamplerTest, BadBoxesAndOptionsAreErrors) {
  const CropSamplerOptions options;
  auto inverted = SampleDistortedCrop(10, 10, {{0.5f, 0, 0.4f, 1}}, options, 0);
  EXPECT_EQ(inverted.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(inverted.status().message(), HasSubstr("bounding box 0"));
  const std::vector<CropBox> second_outside = {{0, 0, 1, 1}, {0, 0, 1.5f, 1}};
  EXPECT_THAT(SampleDistortedCrop(10, 10, second_outside, options, 0).status().message(),
              HasSubstr("bounding box 1"));
  EXPECT_FALSE(SampleDistortedCrop(10, 10, {{NAN, 0, 1, 1}}, options, 0).ok());
  EXPECT_FALSE(SampleDistortedCrop(0, 10, {}, options, 0).ok());
  CropSamplerOptions bad = options;
  bad.min_area = 0;
  EXPECT_FALSE(SampleDistortedCrop(10, 10, {}, bad, 0).ok());
  bad = options;
  bad.max_aspect_ratio = 0.5f;
  EXPECT_FALSE(SampleDistortedCrop(10, 10, {}, bad, 0).ok());
  bad = options;
  bad.max_attempts = 0;
  EXPECT_THAT(SampleDistortedCrop(10, 10, {}, bad, 0).status().message(),
              HasSubstr("max_attempts 0"));
}

TEST(MinDecodeSizeTest, KeepsTheCropAtLeastTheOutputSize) {
  // A 100 x 200 crop of a 400 x 800 image for a 50 x 50 output: a quarter-size
  // decode still gives the crop 25 x 50, so at least half size is needed.
  const ImageSize min = MinDecodeSizeForCrop({10, 20, 100, 200, false}, {400, 800}, 50, 50);
  EXPECT_EQ(min.height, 200);
  EXPECT_EQ(min.width, 200);
  // Rounds up; never asks for more than the original.
  const ImageSize odd = MinDecodeSizeForCrop({0, 0, 3, 7, false}, {10, 10}, 2, 2);
  EXPECT_EQ(odd.height, 7);  // ceil(2 * 10 / 3)
  EXPECT_EQ(odd.width, 3);   // ceil(2 * 10 / 7)
  const ImageSize upsampling = MinDecodeSizeForCrop({0, 0, 10, 10, false}, {10, 10}, 224, 224);
  EXPECT_EQ(upsampling.height, 10);
  EXPECT_EQ(upsampling.width, 10);
}

// tf.image.resize_bilinear(align_corners=False), TensorFlow 1: source
// coordinate = output index * in/out, no half-pixel offset.
TEST(ResizeBilinearTest, UpscalesTwoByTwoAsTensorFlow) {
  const Image source = MakeImage(2, 2, 1, {0, 30, 60, 90});
  std::vector<float> out(9);
  ResizeBilinear(source, {0, 0, 2, 2, false}, 3, 3, out.data());
  // Rows/columns sample 0, 2/3, 4/3 (the last clamped to the edge).
  const float expected[9] = {0, 20, 30, 40, 60, 70, 60, 80, 90};
  for (int i = 0; i < 9; ++i) EXPECT_NEAR(out[i], expected[i], 1e-4) << i;
  // (A half-pixel convention would give 15 at (0, 1), not 20.)
}

TEST(ResizeBilinearTest, DownscalesThreeByThreeAsTensorFlow) {
  const Image source = MakeImage(3, 3, 1, {0, 10, 20, 30, 40, 50, 60, 70, 80});
  std::vector<float> out(4);
  ResizeBilinear(source, {0, 0, 3, 3, false}, 2, 2, out.data());
  // Samples 0 and 1.5 on each axis.
  const float expected[4] = {0, 15, 45, 60};
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(out[i], expected[i]) << i;
}

TEST(ResizeBilinearTest, WindowsClampToTheirOwnEdgeAndKeepChannels) {
  // 4 x 4, one channel: value 10 * row + column.
  std::vector<uint8_t> pixels;
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 4; ++x) pixels.push_back(static_cast<uint8_t>(10 * y + x));
  }
  const Image source = MakeImage(4, 4, 1, pixels);
  std::vector<float> same(4);
  ResizeBilinear(source, {1, 1, 2, 2, false}, 2, 2, same.data());
  EXPECT_EQ(same, (std::vector<float>{11, 12, 21, 22}));
  // Upscaling the window to 3 x 3: the last row/column read the window's
  // edge (row/column 2), not the image's row/column 3 beyond it.
  std::vector<float> up(9);
  ResizeBilinear(source, {1, 1, 2, 2, false}, 3, 3, up.data());
  const float f = 2.0f / 3.0f;
  const float expected[9] = {11, 11 + f, 12, 11 + 10 * f, 11 + 11 * f, 12 + 10 * f, 21, 21 + f, 22};
  for (int i = 0; i < 9; ++i) EXPECT_NEAR(up[i], expected[i], 1e-4) << i;

  // Three channels resize independently.
  const Image rgb = MakeImage(1, 2, 3, {0, 100, 200, 30, 130, 230});
  std::vector<float> wide(9);
  ResizeBilinear(rgb, {0, 0, 1, 2, false}, 1, 3, wide.data());
  const float expected_rgb[9] = {0, 100, 200, 20, 120, 220, 30, 130, 230};
  for (int i = 0; i < 9; ++i) EXPECT_NEAR(wide[i], expected_rgb[i], 1e-4) << i;
}

TEST(PreprocessTrainTest, NormalisesIntoNhwcAndNchwSlotsExactly) {
  const Image image = Pattern(2, 3);
  TrainPreprocessOptions options;
  options.random_flip = false;
  options.normalization.mean[0] = 10;
  options.normalization.mean[1] = 20;
  options.normalization.mean[2] = 30;
  options.normalization.stddev[0] = 2;
  options.normalization.stddev[1] = 4;
  options.normalization.stddev[2] = 0.5f;
  const CropWindow whole{0, 0, 2, 3, false};
  // Batch of 2, the image goes to index 1; index 0 must stay untouched.
  std::vector<float> nhwc(2 * 2 * 3 * 3, -7.0f), nchw(2 * 3 * 2 * 3, -7.0f);
  ASSERT_TRUE(PreprocessTrain(image, {2, 3}, whole, options, 1, Slot(nhwc, 2, 3, 1)).ok());
  ASSERT_TRUE(
      PreprocessTrain(image, {2, 3}, whole, options, 1, Slot(nchw, 2, 3, 1, Layout::kNCHW)).ok());
  for (int i = 0; i < 18; ++i) {
    EXPECT_EQ(nhwc[i], -7.0f);
    EXPECT_EQ(nchw[i], -7.0f);
  }
  for (int y = 0; y < 2; ++y) {
    for (int x = 0; x < 3; ++x) {
      for (int c = 0; c < 3; ++c) {
        const float expected =
            (image.at(y, x, c) - options.normalization.mean[c]) / options.normalization.stddev[c];
        EXPECT_EQ(nhwc[18 + (y * 3 + x) * 3 + c], expected) << y << x << c;
        EXPECT_EQ(nchw[18 + c * 6 + y * 3 + x], expected) << y << x << c;
      }
    }
  }

  // tf_cnn_benchmarks' default maps 0 -> -1 and 255 -> 1; bf16 rounds the same values.
  const Image extremes = MakeImage(1, 2, 3, {0, 0, 0, 255, 255, 255});
  TrainPreprocessOptions defaults;
  defaults.random_flip = false;
  std::vector<float> out(6);
  ASSERT_TRUE(
      PreprocessTrain(extremes, {1, 2}, {0, 0, 1, 2, false}, defaults, 0, Slot(out, 1, 2)).ok());
  EXPECT_EQ(out, (std::vector<float>{-1, -1, -1, 1, 1, 1}));
  std::vector<uint16_t> bf16(2 * 3 * 3);
  std::vector<float> reference(2 * 3 * 3);
  BatchSlot bf16_slot;
  bf16_slot.batch = bf16.data();
  bf16_slot.dtype = DType::kBF16;
  bf16_slot.layout = Layout::kNCHW;
  bf16_slot.height = 2;
  bf16_slot.width = 3;
  ASSERT_TRUE(PreprocessTrain(image, {2, 3}, whole, defaults, 0, bf16_slot).ok());
  ASSERT_TRUE(
      PreprocessTrain(image, {2, 3}, whole, defaults, 0, Slot(reference, 2, 3, 0, Layout::kNCHW))
          .ok());
  for (size_t i = 0; i < bf16.size(); ++i) {
    EXPECT_EQ(bf16[i], FloatToBFloat16(reference[i]).bits) << i;
  }
}

TEST(PreprocessTrainTest, FlipMirrorsTheOutputExactly) {
  const Image image = Pattern(5, 7);
  // Seeds that draw a flip and seeds that do not.
  uint64_t flip_seed = 0, keep_seed = 0;
  bool found_flip = false, found_keep = false;
  int flips = 0;
  for (uint64_t seed = 0; seed < 1000; ++seed) {
    const bool flipped = DrawTrainDistortions(seed).flipped;
    flips += flipped;
    if (flipped && !found_flip) flip_seed = seed, found_flip = true;
    if (!flipped && !found_keep) keep_seed = seed, found_keep = true;
  }
  ASSERT_TRUE(found_flip && found_keep);
  EXPECT_GT(flips, 430);  // p = 0.5
  EXPECT_LT(flips, 570);

  const CropWindow crop{1, 2, 3, 4, false};
  TrainPreprocessOptions options;
  options.normalization = Identity();
  std::vector<float> flipped(4 * 6 * 3), plain(4 * 6 * 3), kept(4 * 6 * 3);
  TrainDraws draws;
  ASSERT_TRUE(
      PreprocessTrain(image, {5, 7}, crop, options, flip_seed, Slot(flipped, 4, 6), &draws).ok());
  EXPECT_TRUE(draws.flipped);
  ASSERT_TRUE(
      PreprocessTrain(image, {5, 7}, crop, options, keep_seed, Slot(kept, 4, 6), &draws).ok());
  EXPECT_FALSE(draws.flipped);
  options.random_flip = false;
  ASSERT_TRUE(PreprocessTrain(image, {5, 7}, crop, options, flip_seed, Slot(plain, 4, 6)).ok());
  EXPECT_EQ(kept, plain);  // no flip drawn: same as flipping off
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 6; ++x) {
      for (int c = 0; c < 3; ++c) {
        EXPECT_EQ(flipped[(y * 6 + x) * 3 + c], plain[(y * 6 + (5 - x)) * 3 + c]);
      }
    }
  }
}

// The flip in every layout and type the batch takes, at a non-zero batch
// index: element (c, y, x) of the flipped image is element (c, y, W-1-x) of
// the unflipped one, and every layout/type holds the NHWC fp32 values.
TEST(PreprocessTrainTest, FlipMirrorsEveryLayoutAndType) {
  const Image image = Pattern(5, 7);
  uint64_t flip_seed = 0;
  while (!DrawTrainDistortions(flip_seed).flipped) ++flip_seed;
  const CropWindow crop{1, 2, 3, 4, false};
  constexpr int kH = 4, kW = 6, kValues = kH * kW * 3;
  TrainPreprocessOptions options;
  options.normalization = Identity();
  options.random_flip = false;
  std::vector<float> truth(2 * kValues);  // NHWC fp32, unflipped, index 1
  ASSERT_TRUE(
      PreprocessTrain(image, {5, 7}, crop, options, flip_seed, Slot(truth, kH, kW, 1)).ok());
  auto at = [&](int c, int y, int x) { return truth[kValues + (y * kW + x) * 3 + c]; };
  for (Layout layout : {Layout::kNHWC, Layout::kNCHW}) {
    for (DType dtype : {DType::kF32, DType::kBF16}) {
      SCOPED_TRACE(testing::Message() << LayoutName(layout) << " " << DTypeName(dtype));
      for (bool flip : {false, true}) {
        options.random_flip = flip;
        std::vector<float> f32(2 * kValues, NAN);
        std::vector<uint16_t> bf16(2 * kValues, 0xFFFF);
        BatchSlot slot;
        slot.batch = dtype == DType::kF32 ? static_cast<void*>(f32.data()) : bf16.data();
        slot.dtype = dtype;
        slot.layout = layout;
        slot.height = kH;
        slot.width = kW;
        slot.index = 1;
        ASSERT_TRUE(PreprocessTrain(image, {5, 7}, crop, options, flip_seed, slot).ok());
        for (int c = 0; c < 3; ++c) {
          for (int y = 0; y < kH; ++y) {
            for (int x = 0; x < kW; ++x) {
              const int64_t i = kValues + (layout == Layout::kNHWC ? (y * kW + x) * 3 + c
                                                                   : (c * kH + y) * kW + x);
              const float expected = at(c, y, flip ? kW - 1 - x : x);
              if (dtype == DType::kF32) {
                ASSERT_EQ(f32[i], expected) << "c" << c << " y" << y << " x" << x;
              } else {
                ASSERT_EQ(bf16[i], FloatToBFloat16(expected).bits)
                    << "c" << c << " y" << y << " x" << x;
              }
            }
          }
        }
        // The other example of the batch is left alone.
        for (int64_t i = 0; i < kValues; ++i) {
          if (dtype == DType::kF32) {
            ASSERT_TRUE(std::isnan(f32[i])) << i;
          } else {
            ASSERT_EQ(bf16[i], 0xFFFF) << i;
          }
        }
      }
    }
  }
}

// Brightness then saturation through an independent HSV round trip.
void ReferenceDistort(const TrainDraws& draws, float* rgb) {
  float v[3];
  for (int c = 0; c < 3; ++c) v[c] = rgb[c] / 255.0f + draws.brightness_delta;
  const float mx = std::max({v[0], v[1], v[2]}), mn = std::min({v[0], v[1], v[2]});
  const float value = mx;
  float saturation = mx > 0 ? (mx - mn) / mx : 0;
  float hue = 0;  // in [0, 6)
  if (mx > mn) {
    if (mx == v[0])
      hue = std::fmod((v[1] - v[2]) / (mx - mn) + 6, 6.0f);
    else if (mx == v[1])
      hue = (v[2] - v[0]) / (mx - mn) + 2;
    else
      hue = (v[0] - v[1]) / (mx - mn) + 4;
  }
  saturation = std::clamp(saturation * draws.saturation_factor, 0.0f, 1.0f);
  const float chroma = value * saturation;
  const float second = chroma * (1 - std::fabs(std::fmod(hue, 2.0f) - 1));
  const float m = value - chroma;
  float r = 0, g = 0, b = 0;
  switch (static_cast<int>(hue)) {
    case 0:
      r = chroma, g = second;
      break;
    case 1:
      r = second, g = chroma;
      break;
    case 2:
      g = chroma, b = second;
      break;
    case 3:
      g = second, b = chroma;
      break;
    case 4:
      r = second, b = chroma;
      break;
    default:
      r = chroma, b = second;
      break;
  }
  const float out[3] = {r + m, g + m, b + m};
  for (int c = 0; c < 3; ++c) rgb[c] = std::clamp(out[c], 0.0f, 1.0f) * 255.0f;
}

TEST(PreprocessTrainTest, FastColourDistortionIsBrightnessThenSaturation) {
  const Image image = MakeImage(1, 4, 3, {200, 100, 50, 10, 240, 30, 90, 90, 90, 250, 250, 5});
  const CropWindow whole{0, 0, 1, 4, false};
  TrainPreprocessOptions options;
  options.random_flip = false;
  options.color = ColorDistortion::kFast;
  options.normalization = Identity();
  bool saw_darker = false, saw_brighter = false, saw_desaturate = false, saw_saturate = false;
  for (uint64_t seed = 0; seed < 50; ++seed) {
    std::vector<float> out(12);
    TrainDraws draws;
    ASSERT_TRUE(PreprocessTrain(image, {1, 4}, whole, options, seed, Slot(out, 1, 4), &draws).ok());
    ASSERT_LE(std::fabs(draws.brightness_delta), 32.0f / 255.0f);
    ASSERT_GE(draws.saturation_factor, 0.5f);
    ASSERT_LT(draws.saturation_factor, 1.5f);
    saw_darker |= draws.brightness_delta < -0.05f;
    saw_brighter |= draws.brightness_delta > 0.05f;
    saw_desaturate |= draws.saturation_factor < 0.8f;
    saw_saturate |= draws.saturation_factor > 1.2f;
    for (int p = 0; p < 4; ++p) {
      float expected[3] = {float(image.pixels[3 * p]), float(image.pixels[3 * p + 1]),
                           float(image.pixels[3 * p + 2])};
      ReferenceDistort(draws, expected);
      for (int c = 0; c < 3; ++c) {
        EXPECT_NEAR(out[3 * p + c], expected[c], 0.05f) << "seed " << seed << " pixel " << p;
        EXPECT_GE(out[3 * p + c], 0.0f);
        EXPECT_LE(out[3 * p + c], 255.0f);
      }
    }
    // Grey stays grey, moved by the brightness delta only.
    EXPECT_NEAR(out[6], std::clamp(90 + 255 * draws.brightness_delta, 0.0f, 255.0f), 1e-3);
    EXPECT_EQ(out[6], out[7]);
    EXPECT_EQ(out[6], out[8]);
  }
  EXPECT_TRUE(saw_darker && saw_brighter && saw_desaturate && saw_saturate);

  // The same seed crops and flips the same way with colour on or off.
  TrainDraws with_colour = DrawTrainDistortions(9);
  EXPECT_EQ(with_colour.flipped, DrawTrainDistortions(9).flipped);
}

// tf_cnn_benchmarks' distort_color op by op, in double: adjust_saturation
// and adjust_hue each their own RGB -> HSV -> RGB round trip, contrast about
// each channel's mean over the whole image, one clip at the end. `rgb` holds
// the image's pixels (HWC) on the 0..255 scale; returns them distorted.
struct DoubleHsv {
  double h = 0, s = 0, v = 0;  // h in [0, 6)
};
DoubleHsv ToHsv(const double* p) {
  const double mx = std::max({p[0], p[1], p[2]}), mn = std::min({p[0], p[1], p[2]});
  DoubleHsv hsv;
  hsv.v = mx;
  hsv.s = mx > 0 ? (mx - mn) / mx : 0;
  if (mx > mn) {
    if (mx == p[0])
      hsv.h = std::fmod((p[1] - p[2]) / (mx - mn) + 6, 6.0);
    else if (mx == p[1])
      hsv.h = (p[2] - p[0]) / (mx - mn) + 2;
    else
      hsv.h = (p[0] - p[1]) / (mx - mn) + 4;
  }
  return hsv;
}
void FromHsv(const DoubleHsv& hsv, double* p) {
  // TensorFlow's sector form (the code under test uses the closed form
  // value - chroma * clamp(min(k, 4 - k), 0, 1) instead).
  const double chroma = hsv.v * hsv.s;
  const double x = chroma * (1 - std::fabs(std::fmod(hsv.h, 2.0) - 1));
  const double m = hsv.v - chroma;
  double r = 0, g = 0, b = 0;
  switch (static_cast<int>(hsv.h)) {
    case 0:
      r = chroma, g = x;
      break;
    case 1:
      r = x, g = chroma;
      break;
    case 2:
      g = chroma, b = x;
      break;
    case 3:
      g = x, b = chroma;
      break;
    case 4:
      r = x, b = chroma;
      break;
    default:
      r = chroma, b = x;
      break;
  }
  p[0] = r + m;
  p[1] = g + m;
  p[2] = b + m;
}
std::vector<double> ReferenceFullDistort(const std::vector<double>& rgb, const TrainDraws& d) {
  std::vector<double> v(rgb.size());
  for (size_t i = 0; i < rgb.size(); ++i) v[i] = rgb[i] / 255.0 + d.brightness_delta;
  const size_t pixels = v.size() / 3;
  auto saturation = [&] {
    for (size_t p = 0; p < pixels; ++p) {
      DoubleHsv hsv = ToHsv(&v[3 * p]);
      hsv.s = std::clamp(hsv.s * d.saturation_factor, 0.0, 1.0);
      FromHsv(hsv, &v[3 * p]);
    }
  };
  auto hue = [&] {
    for (size_t p = 0; p < pixels; ++p) {
      DoubleHsv hsv = ToHsv(&v[3 * p]);
      hsv.h = std::fmod(hsv.h + 6.0 * d.hue_delta + 6.0, 6.0);
      FromHsv(hsv, &v[3 * p]);
    }
  };
  auto contrast = [&] {
    for (int c = 0; c < 3; ++c) {
      double mean = 0;
      for (size_t p = 0; p < pixels; ++p) mean += v[3 * p + c];
      mean /= static_cast<double>(pixels);
      for (size_t p = 0; p < pixels; ++p)
        v[3 * p + c] = (v[3 * p + c] - mean) * d.contrast_factor + mean;
    }
  };
  if (d.contrast_first) {
    contrast();
    saturation();
    hue();
  } else {
    saturation();
    hue();
    contrast();
  }
  for (double& x : v) x = std::clamp(x, 0.0, 1.0) * 255.0;
  return v;
}

TEST(PreprocessTrainTest, FullColourDistortionIsTfCnnBenchmarksDistortColorOpByOp) {
  // The slot has the image's own size and the crop is the whole image, so
  // the resize hands over the pixels themselves.
  const Image image = Pattern(5, 7);
  const std::vector<double> pixels(image.pixels.begin(), image.pixels.end());
  const CropWindow whole{0, 0, 5, 7, false};
  TrainPreprocessOptions options;
  options.random_flip = false;
  options.color = ColorDistortion::kFull;
  options.normalization = Identity();
  bool saw_hue_left = false, saw_hue_right = false, saw_low_contrast = false,
       saw_high_contrast = false, saw_contrast_first = false, saw_contrast_last = false;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    std::vector<float> batch(4 * 5 * 7 * 3);
    for (int64_t index = 0; index < 4; ++index) {
      SCOPED_TRACE(testing::Message() << "seed " << seed << " position " << index);
      TrainDraws draws;
      ASSERT_TRUE(
          PreprocessTrain(image, {5, 7}, whole, options, seed, Slot(batch, 5, 7, index), &draws)
              .ok());
      EXPECT_EQ(draws.contrast_first, DrawTrainDistortions(seed).contrast_first);
      ASSERT_LE(std::fabs(draws.hue_delta), 0.2f);
      ASSERT_GE(draws.contrast_factor, 0.5f);
      ASSERT_LT(draws.contrast_factor, 1.5f);
      // kFast's draws for the same seed, plus hue, contrast and the order (the flip is off here).
      const TrainDraws plain = DrawTrainDistortions(seed);
      EXPECT_EQ(draws.brightness_delta, plain.brightness_delta);
      EXPECT_EQ(draws.saturation_factor, plain.saturation_factor);
      const std::vector<double> expected = ReferenceFullDistort(pixels, draws);
      const float* out = &batch[index * 5 * 7 * 3];
      for (size_t i = 0; i < expected.size(); ++i)
        ASSERT_NEAR(out[i], expected[i], 0.02) << "value " << i;
    }
    const TrainDraws d = DrawTrainDistortions(seed);
    saw_hue_left |= d.hue_delta < -0.1f;
    saw_hue_right |= d.hue_delta > 0.1f;
    saw_low_contrast |= d.contrast_factor < 0.7f;
    saw_high_contrast |= d.contrast_factor > 1.3f;
    saw_contrast_first |= d.contrast_first;
    saw_contrast_last |= !d.contrast_first;
    // The seed alone decides: every position holds the same image.
    for (int index = 1; index < 4; ++index)
      EXPECT_TRUE(std::equal(batch.begin(), batch.begin() + 105, batch.begin() + index * 105));
  }
  EXPECT_TRUE(saw_hue_left && saw_hue_right && saw_low_contrast && saw_high_contrast);
  EXPECT_TRUE(saw_contrast_first && saw_contrast_last);  // both orders, each checked above
}

TEST(PreprocessTrainTest, FullColourDistortionOfGreysIsBrightnessAndContrastByHand) {
  // Greys have no hue or saturation to change: only brightness (a shift)
  // and contrast (deviations from the image's mean scaled) act, then the clip.
  const Image image = MakeImage(1, 3, 3, {40, 40, 40, 120, 120, 120, 230, 230, 230});
  const CropWindow whole{0, 0, 1, 3, false};
  TrainPreprocessOptions options;
  options.random_flip = false;
  options.color = ColorDistortion::kFull;
  options.normalization = Identity();
  bool clipped = false;
  for (uint64_t seed = 0; seed < 30; ++seed) {
    for (int64_t index = 0; index < 2; ++index) {
      std::vector<float> out(2 * 9);
      TrainDraws d;
      ASSERT_TRUE(
          PreprocessTrain(image, {1, 3}, whole, options, seed, Slot(out, 1, 3, index), &d).ok());
      const double mean = (40 + 120 + 230) / 3.0 / 255.0 + d.brightness_delta;
      for (int p = 0; p < 3; ++p) {
        const double grey = image.pixels[3 * p] / 255.0 + d.brightness_delta;
        const double raw = ((grey - mean) * d.contrast_factor + mean) * 255.0;
        clipped |= raw > 255.0;
        const double expected = std::clamp(raw, 0.0, 255.0);
        for (int c = 0; c < 3; ++c)
          EXPECT_NEAR(out[index * 9 + 3 * p + c], expected, 1e-3)
              << "seed " << seed << " position " << index << " pixel " << p;
      }
    }
  }
  EXPECT_TRUE(clipped);  // a bright grey pushed past 1 by contrast is clipped
}

TEST(PreprocessTrainTest, ColourDistortionNamesParseAndBadNamesAreErrors) {
  for (ColorDistortion d :
       {ColorDistortion::kNone, ColorDistortion::kFast, ColorDistortion::kFull}) {
    absl::StatusOr<ColorDistortion> parsed = ParseColorDistortion(ColorDistortionName(d));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, d);
  }
  const absl::StatusOr<ColorDistortion> bad = ParseColorDistortion("yiq");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("\"yiq\""));
  EXPECT_THAT(bad.status().message(), HasSubstr("none, fast or full"));
}

TEST(PreprocessTrainTest, RejectsBadSlotsImagesAndWindows) {
  const Image image = Pattern(4, 4);
  std::vector<float> out(4 * 4 * 3);
  const TrainPreprocessOptions options;
  const CropWindow whole{0, 0, 4, 4, false};
  BatchSlot slot = Slot(out, 4, 4);
  slot.batch = nullptr;
  EXPECT_FALSE(PreprocessTrain(image, {4, 4}, whole, options, 0, slot).ok());
  slot = Slot(out, 4, 4);
  slot.dtype = DType::kF16;
  EXPECT_THAT(PreprocessTrain(image, {4, 4}, whole, options, 0, slot).message(),
              HasSubstr("fp32 or bf16"));
  slot = Slot(out, 4, 4);
  slot.layout = Layout::kBlocked;
  EXPECT_FALSE(PreprocessTrain(image, {4, 4}, whole, options, 0, slot).ok());
  EXPECT_THAT(
      PreprocessTrain(image, {4, 4}, {2, 2, 3, 3, false}, options, 0, Slot(out, 4, 4)).message(),
      HasSubstr("does not fit"));
  Image gray = MakeImage(4, 4, 1, std::vector<uint8_t>(16));
  EXPECT_FALSE(PreprocessTrain(gray, {4, 4}, whole, options, 0, Slot(out, 4, 4)).ok());
  TrainPreprocessOptions zero_stddev;
  zero_stddev.normalization.stddev[2] = 0;
  EXPECT_THAT(PreprocessTrain(image, {4, 4}, whole, zero_stddev, 0, Slot(out, 4, 4)).message(),
              HasSubstr("channel 2"));
}

TEST(EvalTest, WindowMatchesHandComputedSizes) {
  // 80 x 160 to 35 x 35: scale by 35/80 to cover (35 x 70), enlarge by 1.15
  // (40.25 x 80.5, truncated to 40 x 80), window at rows 2.., columns 22...
  auto window = ComputeEvalWindow({80, 160}, 35, 35, EvalPreprocessOptions{}.resize_factor);
  ASSERT_TRUE(window.ok());
  EXPECT_EQ(window->resize_height, 40);
  EXPECT_EQ(window->resize_width, 80);
  EXPECT_EQ(window->top, 2);
  EXPECT_EQ(window->left, 22);
  // 100 x 200 to 10 x 10: 10 x 20 enlarged by 1.15 is 11.5 x 23 (float32:
  // 20 * 1.15f rounds to 23 exactly, as in TensorFlow), so 11 x 23.
  window = ComputeEvalWindow({100, 200}, 10, 10, 1.15f);
  ASSERT_TRUE(window.ok());
  EXPECT_EQ(window->resize_height, 11);
  EXPECT_EQ(window->resize_width, 23);
  EXPECT_EQ(window->top, 0);
  EXPECT_EQ(window->left, 6);
  // The 0.875 central-fraction convention: 11.43 x 22.86, so 11 x 22.
  window = ComputeEvalWindow({100, 200}, 10, 10, 1 / 0.875f);
  ASSERT_TRUE(window.ok());
  EXPECT_EQ(window->resize_height, 11);
  EXPECT_EQ(window->resize_width, 22);
  // Never below the output size.
  window = ComputeEvalWindow({375, 500}, 224, 224, 1.0f);
  ASSERT_TRUE(window.ok());
  EXPECT_GE(window->resize_height, 224);
  EXPECT_GE(window->resize_width, 224);
  EXPECT_FALSE(ComputeEvalWindow({10, 10}, 5, 5, 0.9f).ok());
  EXPECT_FALSE(ComputeEvalWindow({10, 10}, 5, 5, NAN).ok());
  EXPECT_FALSE(ComputeEvalWindow({0, 10}, 5, 5, 1.15f).ok());
}

TEST(EvalTest, ResizeThenCentralCropMatchesHandComputedValues) {
  EvalPreprocessOptions options;
  options.normalization = Identity();
  // 4 x 4 to 2 x 2 enlarged by 2: no resize, the central 2 x 2.
  std::vector<uint8_t> pixels;
  for (int i = 0; i < 16; ++i) {
    for (int c = 0; c < 3; ++c) pixels.push_back(static_cast<uint8_t>(10 * i + c));
  }
  const Image four = MakeImage(4, 4, 3, pixels);
  options.resize_factor = 2.0f;
  std::vector<float> out(2 * 2 * 3);
  ASSERT_TRUE(PreprocessEval(four, {4, 4}, options, Slot(out, 2, 2)).ok());
  const int centre[4] = {5, 6, 9, 10};
  for (int p = 0; p < 4; ++p) {
    for (int c = 0; c < 3; ++c) EXPECT_EQ(out[3 * p + c], 10 * centre[p] + c) << p << c;
  }
  // 2 x 2 to 2 x 2 enlarged by 2: resized to 4 x 4 (samples 0, .5, 1, 1),
  // window from row/column 1: samples 0.5 and 1.
  const Image two = MakeImage(2, 2, 3, {0, 0, 0, 30, 30, 30, 60, 60, 60, 90, 90, 90});
  ASSERT_TRUE(PreprocessEval(two, {2, 2}, options, Slot(out, 2, 2)).ok());
  const float expected[4] = {45, 60, 75, 90};
  for (int p = 0; p < 4; ++p) {
    for (int c = 0; c < 3; ++c) EXPECT_FLOAT_EQ(out[3 * p + c], expected[p]) << p;
  }
}

TEST(JpegPathTest, TrainAndEvalFromJpegAreDeterministicAndMatchFullDecode) {
  const Image source = Smooth(240, 320);
  EncodeOptions encode;
  encode.quality = 95;
  auto jpeg = EncodeJpeg(source, encode);
  ASSERT_TRUE(jpeg.ok());
  auto decoder = JpegDecoder::Create();
  ASSERT_TRUE(decoder.ok());
  auto full = DecodeJpeg(*jpeg);
  ASSERT_TRUE(full.ok());
  Image scratch;
  const std::vector<CropBox> boxes = {{0.1f, 0.1f, 0.9f, 0.9f}};
  TrainPreprocessOptions options;
  const int out_size = 32;  // small: most crops allow a downscaled decode
  int downscaled = 0;
  for (uint64_t image_index = 0; image_index < 20; ++image_index) {
    const uint64_t seed = ImageSeed(1234, image_index);
    std::vector<float> a(out_size * out_size * 3), b(out_size * out_size * 3);
    ASSERT_TRUE(PreprocessTrainJpeg(*decoder, *jpeg, boxes, options, seed, &scratch,
                                    Slot(a, out_size, out_size))
                    .ok());
    downscaled += scratch.height < 240;
    ASSERT_TRUE(PreprocessTrainJpeg(*decoder, *jpeg, boxes, options, seed, &scratch,
                                    Slot(b, out_size, out_size))
                    .ok());
    EXPECT_EQ(a, b);  // same (seed, image): same output
    // Against the same crop taken from the full-size decode.
    auto crop = SampleDistortedCrop(240, 320, boxes, options.crop, seed);
    ASSERT_TRUE(crop.ok());
    std::vector<float> reference(a.size());
    ASSERT_TRUE(PreprocessTrain(*full, {240, 320}, *crop, options, seed,
                                Slot(reference, out_size, out_size))
                    .ok());
    double total = 0;
    for (size_t i = 0; i < a.size(); ++i) total += std::fabs(a[i] - reference[i]);
    EXPECT_LT(total / a.size(), 0.06) << "image " << image_index;  // on the [-1, 1] scale
  }
  EXPECT_GT(downscaled, 0);

  std::vector<float> eval(out_size * out_size * 3), eval_reference(eval.size());
  ASSERT_TRUE(
      PreprocessEvalJpeg(*decoder, *jpeg, EvalPreprocessOptions{}, &scratch, Slot(eval, out_size, out_size))
          .ok());
  EXPECT_LT(scratch.height, 240);  // 36 x 49 needed: a 1/4 decode (60 x 80)
  ASSERT_TRUE(
      PreprocessEval(*full, {240, 320}, EvalPreprocessOptions{}, Slot(eval_reference, out_size, out_size))
          .ok());
  double total = 0;
  for (size_t i = 0; i < eval.size(); ++i) total += std::fabs(eval[i] - eval_reference[i]);
  EXPECT_LT(total / eval.size(), 0.06);

  // Corrupt bytes: an error, not a crash.
  std::vector<float> out(out_size * out_size * 3);
  const absl::Status bad = PreprocessTrainJpeg(*decoder, "not a jpeg", boxes, options, 1, &scratch,
                                               Slot(out, out_size, out_size));
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.message(), HasSubstr("not a JPEG"));
}

TEST(JpegPathTest, OutputDependsOnSeedAndImageNotOnTheThread) {
  std::vector<std::string> jpegs;
  for (int i = 0; i < 4; ++i) {
    auto jpeg = EncodeJpeg(Smooth(60 + 10 * i, 90 - 5 * i));
    ASSERT_TRUE(jpeg.ok());
    jpegs.push_back(*jpeg);
  }
  constexpr int kImages = 24, kSize = 16, kThreads = 3;
  constexpr size_t kPerImage = kSize * kSize * 3;
  TrainPreprocessOptions options;
  options.color = ColorDistortion::kFast;
  auto run = [&](int first, int stride, std::vector<float>* batch, absl::Status* status) {
    auto decoder = JpegDecoder::Create();
    if (!decoder.ok()) {
      *status = decoder.status();
      return;
    }
    Image scratch;
    for (int i = first; i < kImages; i += stride) {
      BatchSlot slot = Slot(*batch, kSize, kSize, i, Layout::kNCHW);
      *status = PreprocessTrainJpeg(*decoder, jpegs[i % jpegs.size()], {}, options,
                                    ImageSeed(77, i), &scratch, slot);
      if (!status->ok()) return;
    }
  };
  std::vector<float> sequential(kImages * kPerImage), parallel(kImages * kPerImage);
  absl::Status sequential_status;
  run(0, 1, &sequential, &sequential_status);
  ASSERT_TRUE(sequential_status.ok()) << sequential_status;
  std::vector<absl::Status> statuses(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back(run, t, kThreads, &parallel, &statuses[t]);
  for (std::thread& thread : threads) thread.join();
  for (const absl::Status& status : statuses) ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(parallel, sequential);
  // Different images of the same JPEG differ (their own crops and flips).
  EXPECT_FALSE(std::equal(sequential.begin(), sequential.begin() + kPerImage,
                          sequential.begin() + 4 * kPerImage));
}

}  // namespace
}  // namespace cnnbench::input
