// tf_cnn_benchmarks' training and evaluation preprocessing (see preprocess.h).
#include "input/image/preprocess.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/random.h"
#include "core/status.h"
#include "input/image/color.h"

namespace cnnbench::input {
namespace {

using color::Contrast;
using color::FromUnit;
using color::Saturate;
using color::SaturateAndTurnHue;
using color::ToUnit;

// Independent random streams of one image's seed.
constexpr uint64_t kCropStream = 0x63726f70ull;     // "crop"
constexpr uint64_t kDistortStream = 0x64697374ull;  // "dist"

// A uniform integer in [0, n].
int UniformInt(Rng& rng, int n) {
  const int value = static_cast<int>(rng.Uniform() * (static_cast<double>(n) + 1));
  return std::min(value, n);
}

// How output indices along one axis map to source pixels: output index i
// reads the original-image coordinate origin + float(i + index_offset) * step
// (float, as TensorFlow computes it), which lands at that coordinate times
// to_source in the (possibly downscaled) decoded image; neighbours are
// clamped to [clamp_lo, clamp_hi].
struct Axis {
  int index_offset = 0;
  int origin = 0;
  float step = 1;
  double to_source = 1;
  int clamp_lo = 0;
  int clamp_hi = 0;
};

struct Tap {
  int lo = 0;
  int hi = 0;
  float frac = 0;
};

Tap AxisTap(const Axis& axis, int i) {
  const float v = static_cast<float>(i + axis.index_offset) * axis.step;
  Tap tap;
  if (axis.to_source == 1.0) {
    // Exact integer offset, as when the window is a separate image.
    const float floor_v = std::floor(v);
    tap.lo = axis.origin + static_cast<int>(floor_v);
    tap.frac = v - floor_v;
  } else {
    const double s = (axis.origin + static_cast<double>(v)) * axis.to_source;
    const double floor_s = std::floor(s);
    tap.lo = static_cast<int>(floor_s);
    tap.frac = static_cast<float>(s - floor_s);
  }
  tap.lo = std::clamp(tap.lo, axis.clamp_lo, axis.clamp_hi);
  tap.hi = std::min(tap.lo + 1, axis.clamp_hi);
  return tap;
}

// An axis over a window [start, start+length) of the original image.
Axis WindowAxis(int start, int length, int out_length, int original, int decoded) {
  Axis axis;
  axis.origin = start;
  axis.step = static_cast<float>(length) / static_cast<float>(out_length);
  axis.to_source = static_cast<double>(decoded) / original;
  if (decoded == original) axis.to_source = 1.0;
  axis.clamp_lo = std::clamp(static_cast<int>(std::floor(start * axis.to_source)), 0, decoded - 1);
  axis.clamp_hi = std::clamp(static_cast<int>(std::ceil((start + length) * axis.to_source)) - 1,
                             axis.clamp_lo, decoded - 1);
  return axis;
}

// Samples every output pixel bilinearly, a row at a time: the x taps are
// computed once, and emit_row(i, planes) gets the row's source.channels
// channels as planes of out_width floats on the 0..255 scale
// (planes[c][j]), which the colour and writing loops below run over with
// unit stride.
template <typename EmitRow>
void SampleBilinearRows(const Image& source, const Axis& y_axis, const Axis& x_axis, int out_height,
                        int out_width, EmitRow&& emit_row) {
  const int channels = source.channels;
  thread_local std::vector<Tap> x_taps;
  thread_local std::vector<float> row;
  thread_local std::vector<float*> planes;
  x_taps.resize(out_width);
  for (int j = 0; j < out_width; ++j) {
    x_taps[j] = AxisTap(x_axis, j);
    x_taps[j].lo *= channels;
    x_taps[j].hi *= channels;
  }
  row.resize(static_cast<size_t>(out_width) * channels);
  planes.resize(channels);
  for (int c = 0; c < channels; ++c) planes[c] = row.data() + static_cast<size_t>(c) * out_width;
  const size_t row_stride = static_cast<size_t>(source.width) * channels;
  for (int i = 0; i < out_height; ++i) {
    const Tap ty = AxisTap(y_axis, i);
    const uint8_t* top = source.data() + ty.lo * row_stride;
    const uint8_t* bottom = source.data() + ty.hi * row_stride;
    for (int j = 0; j < out_width; ++j) {
      const Tap& tx = x_taps[j];
      for (int c = 0; c < channels; ++c) {
        const float top_left = top[tx.lo + c];
        const float top_right = top[tx.hi + c];
        const float bottom_left = bottom[tx.lo + c];
        const float bottom_right = bottom[tx.hi + c];
        const float upper = top_left + (top_right - top_left) * tx.frac;
        const float lower = bottom_left + (bottom_right - bottom_left) * tx.frac;
        planes[c][j] = upper + (lower - upper) * ty.frac;
      }
    }
    emit_row(i, planes.data());
  }
}

absl::Status CheckImage(const Image& image, const char* what) {
  if (image.height <= 0 || image.width <= 0 || image.channels != 3 ||
      image.pixels.size() != static_cast<size_t>(image.height) * image.width * 3) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": needs a non-empty RGB image, got ", image.width, "x", image.height,
                     "x", image.channels, " with ", image.pixels.size(), " bytes"));
  }
  return absl::OkStatus();
}

absl::Status CheckSlot(const BatchSlot& slot) {
  if (slot.batch == nullptr) return absl::InvalidArgumentError("batch slot: no batch memory");
  if (slot.dtype != DType::kF32 && slot.dtype != DType::kBF16) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch slot: dtype must be fp32 or bf16, not ", DTypeName(slot.dtype)));
  }
  if (slot.layout != Layout::kNHWC && slot.layout != Layout::kNCHW) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch slot: layout must be NHWC or NCHW, not ", LayoutName(slot.layout)));
  }
  if (slot.height <= 0 || slot.width <= 0 || slot.index < 0) {
    return absl::InvalidArgumentError(absl::StrCat("batch slot: bad size ", slot.width, "x",
                                                   slot.height, " or index ", slot.index));
  }
  return absl::OkStatus();
}

// Writes normalised values into the slot.
class SlotWriter {
 public:
  SlotWriter(const BatchSlot& slot, const Normalization& normalization) : slot_(slot) {
    for (int c = 0; c < 3; ++c) {
      mean_[c] = normalization.mean[c];
      stddev_[c] = normalization.stddev[c];
    }
    plane_ = static_cast<int64_t>(slot.height) * slot.width;
    base_ = slot.index * plane_ * 3;
  }

  // Row i from three planes of slot.width values (0..255 scale), mirrored
  // when `flipped`.
  void WriteRow(int i, const float* const planes[3], bool flipped) const {
    const int width = slot_.width;
    const int64_t row = static_cast<int64_t>(i) * width;
    for (int c = 0; c < 3; ++c) {
      const float mean = mean_[c], stddev = stddev_[c];
      const float* in = planes[c];
      // Element j goes to column j, or width - 1 - j when flipped.
      const int64_t first = flipped ? width - 1 : 0;
      const int64_t step = flipped ? -1 : 1;
      if (slot_.layout == Layout::kNCHW) {
        const int64_t out = base_ + c * plane_ + row + first;
        if (slot_.dtype == DType::kF32) {
          float* dst = static_cast<float*>(slot_.batch) + out;
          if (flipped) {
#pragma omp simd
            for (int j = 0; j < width; ++j) dst[-j] = (in[j] - mean) / stddev;
          } else {
#pragma omp simd
            for (int j = 0; j < width; ++j) dst[j] = (in[j] - mean) / stddev;
          }
        } else {
          uint16_t* dst = static_cast<uint16_t*>(slot_.batch) + out;
          for (int j = 0; j < width; ++j)
            dst[step * j] = FloatToBFloat16((in[j] - mean) / stddev).bits;
        }
      } else {
        const int64_t out = base_ + (row + first) * 3 + c;
        if (slot_.dtype == DType::kF32) {
          float* dst = static_cast<float*>(slot_.batch) + out;
          for (int j = 0; j < width; ++j) dst[step * 3 * j] = (in[j] - mean) / stddev;
        } else {
          uint16_t* dst = static_cast<uint16_t*>(slot_.batch) + out;
          for (int j = 0; j < width; ++j)
            dst[step * 3 * j] = FloatToBFloat16((in[j] - mean) / stddev).bits;
        }
      }
    }
  }

 private:
  const BatchSlot& slot_;
  float mean_[3];
  float stddev_[3];
  int64_t plane_ = 0;
  int64_t base_ = 0;
};

absl::Status CheckNormalization(const Normalization& normalization) {
  for (int c = 0; c < 3; ++c) {
    if (!std::isfinite(normalization.mean[c]) || !std::isfinite(normalization.stddev[c]) ||
        normalization.stddev[c] == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "normalisation of channel ", c, ": mean ", normalization.mean[c], ", stddev ",
          normalization.stddev[c], " (needs finite values and a non-zero stddev)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ColorDistortion> ParseColorDistortion(absl::string_view name) {
  if (name == "none") return ColorDistortion::kNone;
  if (name == "fast") return ColorDistortion::kFast;
  if (name == "full") return ColorDistortion::kFull;
  return absl::InvalidArgumentError(
      absl::StrCat("colour distortion \"", name, "\": expected none, fast or full"));
}

const char* ColorDistortionName(ColorDistortion distortion) {
  switch (distortion) {
    case ColorDistortion::kNone:
      return "none";
    case ColorDistortion::kFast:
      return "fast";
    case ColorDistortion::kFull:
      return "full";
  }
  return "?";
}

uint64_t ImageSeed(uint64_t run_seed, uint64_t image_index) {
  return MixBits64(MixBits64(run_seed) ^ image_index);
}

absl::StatusOr<CropWindow> SampleDistortedCrop(int height, int width,
                                               absl::Span<const CropBox> boxes,
                                               const CropSamplerOptions& options, uint64_t seed) {
  if (height <= 0 || width <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("crop sampler: empty image ", width, "x", height));
  }
  const CropSamplerOptions& o = options;
  if (!(o.min_object_covered >= 0 && o.min_object_covered <= 1) ||
      !(o.min_aspect_ratio > 0 && o.min_aspect_ratio <= o.max_aspect_ratio) ||
      !std::isfinite(o.max_aspect_ratio) ||
      !(o.min_area > 0 && o.min_area <= o.max_area && o.max_area <= 1) || o.max_attempts < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "crop sampler options: min_object_covered ", o.min_object_covered, " (0..1), aspect ",
        o.min_aspect_ratio, "..", o.max_aspect_ratio, " (0 < min <= max), area ", o.min_area, "..",
        o.max_area, " (0 < min <= max <= 1), max_attempts ", o.max_attempts, " (>= 1)"));
  }
  // Boxes in pixels; the whole image when none has area.
  struct PixelBox {
    double y0, x0, y1, x1, area;
  };
  auto to_pixels = [&](const CropBox& box) {
    PixelBox p{box.ymin * static_cast<double>(height), box.xmin * static_cast<double>(width),
               box.ymax * static_cast<double>(height), box.xmax * static_cast<double>(width), 0};
    p.area = (p.y1 - p.y0) * (p.x1 - p.x0);
    return p;
  };
  bool any_box = false;
  for (size_t b = 0; b < boxes.size(); ++b) {
    const CropBox& box = boxes[b];
    const bool ok = box.ymin >= 0 && box.xmin >= 0 && box.ymax <= 1 && box.xmax <= 1 &&
                    box.ymin <= box.ymax && box.xmin <= box.xmax;  // false for NaN
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat("bounding box ", b, " (ymin ", box.ymin, ", xmin ", box.xmin, ", ymax ",
                       box.ymax, ", xmax ", box.xmax, ") is not within [0, 1] with min <= max"));
    }
    any_box |= to_pixels(box).area > 0;
  }
  const CropBox whole_image;  // 0, 0, 1, 1
  const absl::Span<const CropBox> candidates =
      any_box ? boxes : absl::Span<const CropBox>(&whole_image, 1);

  const double image_area = static_cast<double>(height) * width;
  const double min_area = o.min_area * image_area;
  const double max_area = o.max_area * image_area;
  Rng rng(MixBits64(seed ^ kCropStream));
  for (int attempt = 0; attempt < o.max_attempts; ++attempt) {
    const double aspect =
        o.min_aspect_ratio + (o.max_aspect_ratio - o.min_aspect_ratio) * rng.Uniform();
    const double area = min_area + (max_area - min_area) * rng.Uniform();
    const int crop_height = static_cast<int>(std::lround(std::sqrt(area / aspect)));
    const int crop_width = static_cast<int>(std::lround(std::sqrt(area * aspect)));
    if (crop_height < 1 || crop_width < 1 || crop_height > height || crop_width > width) continue;
    const double crop_area = static_cast<double>(crop_height) * crop_width;
    if (crop_area < min_area || crop_area > max_area) continue;
    const double crop_aspect = static_cast<double>(crop_width) / crop_height;
    if (crop_aspect < o.min_aspect_ratio || crop_aspect > o.max_aspect_ratio) continue;
    const int y = UniformInt(rng, height - crop_height);
    const int x = UniformInt(rng, width - crop_width);
    for (const CropBox& box : candidates) {
      const PixelBox p = to_pixels(box);
      if (!(p.area > 0)) continue;
      const double overlap_h = std::min<double>(p.y1, y + crop_height) - std::max<double>(p.y0, y);
      const double overlap_w = std::min<double>(p.x1, x + crop_width) - std::max<double>(p.x0, x);
      const double overlap = overlap_h > 0 && overlap_w > 0 ? overlap_h * overlap_w : 0;
      if (overlap >= o.min_object_covered * p.area) {
        return CropWindow{y, x, crop_height, crop_width, false};
      }
    }
  }
  return CropWindow{0, 0, height, width, true};
}

ImageSize MinDecodeSizeForCrop(const CropWindow& crop, ImageSize original, int out_height,
                               int out_width) {
  auto side = [](int out, int full, int window) {
    if (window <= 0 || out <= 0) return 0;
    const int64_t needed = (static_cast<int64_t>(out) * full + window - 1) / window;
    return static_cast<int>(std::min<int64_t>(needed, full));
  };
  return ImageSize{side(out_height, original.height, crop.height),
                   side(out_width, original.width, crop.width)};
}

void ResizeBilinear(const Image& source, const CropWindow& window, int out_height, int out_width,
                    float* out) {
  const Axis y_axis = WindowAxis(window.y, window.height, out_height, source.height, source.height);
  const Axis x_axis = WindowAxis(window.x, window.width, out_width, source.width, source.width);
  const int channels = source.channels;
  SampleBilinearRows(source, y_axis, x_axis, out_height, out_width,
                     [&](int i, const float* const* planes) {
                       float* pixel = out + static_cast<size_t>(i) * out_width * channels;
                       for (int j = 0; j < out_width; ++j)
                         for (int c = 0; c < channels; ++c) *pixel++ = planes[c][j];
                     });
}

TrainDraws DrawTrainDistortions(uint64_t seed) {
  Rng rng(MixBits64(seed ^ kDistortStream));
  TrainDraws draws;
  draws.flipped = rng.Uniform() < 0.5;
  constexpr double kMaxBrightnessDelta = 32.0 / 255.0;
  draws.brightness_delta = static_cast<float>((2 * rng.Uniform() - 1) * kMaxBrightnessDelta);
  draws.saturation_factor = static_cast<float>(0.5 + rng.Uniform());
  constexpr double kMaxHueDelta = 0.2;
  draws.hue_delta = static_cast<float>((2 * rng.Uniform() - 1) * kMaxHueDelta);
  draws.contrast_factor = static_cast<float>(0.5 + rng.Uniform());
  draws.contrast_first = rng.Uniform() < 0.5;
  return draws;
}

absl::Status PreprocessTrain(const Image& image, ImageSize original, const CropWindow& crop,
                             const TrainPreprocessOptions& options, uint64_t seed, const BatchSlot& slot,
                             TrainDraws* draws_out) {
  RETURN_IF_ERROR(CheckImage(image, "training preprocessing"));
  RETURN_IF_ERROR(CheckSlot(slot));
  RETURN_IF_ERROR(CheckNormalization(options.normalization));
  if (original.height <= 0 || original.width <= 0 || crop.height <= 0 || crop.width <= 0 ||
      crop.y < 0 || crop.x < 0 || crop.y + crop.height > original.height ||
      crop.x + crop.width > original.width) {
    return absl::InvalidArgumentError(
        absl::StrCat("crop window ", crop.width, "x", crop.height, " at (", crop.y, ", ", crop.x,
                     ") does not fit the ", original.width, "x", original.height, " image"));
  }
  TrainDraws draws = DrawTrainDistortions(seed);
  if (!options.random_flip) draws.flipped = false;
  if (options.color == ColorDistortion::kNone) {
    draws.brightness_delta = 0;
    draws.saturation_factor = 1;
  }
  if (options.color != ColorDistortion::kFull) {
    draws.hue_delta = 0;
    draws.contrast_factor = 1;
    draws.contrast_first = false;
  }
  if (draws_out != nullptr) *draws_out = draws;

  const Axis y_axis = WindowAxis(crop.y, crop.height, slot.height, original.height, image.height);
  const Axis x_axis = WindowAxis(crop.x, crop.width, slot.width, original.width, image.width);
  const SlotWriter writer(slot, options.normalization);
  const int width = slot.width;
  if (options.color == ColorDistortion::kFull) {
    // Contrast needs each channel's mean over the whole image at its turn
    // in the order: a first pass resamples and applies what comes before
    // it, a second applies it and what follows.
    thread_local std::vector<float> work;
    const int64_t pixels = static_cast<int64_t>(slot.height) * width;
    if (work.size() < static_cast<size_t>(pixels) * 3) work.resize(static_cast<size_t>(pixels) * 3);
    float* const image_planes[3] = {work.data(), work.data() + pixels, work.data() + 2 * pixels};
    double sum[3] = {0, 0, 0};
    SampleBilinearRows(image, y_axis, x_axis, slot.height, width,
                       [&](int i, const float* const* row) {
                         float* v[3];
                         for (int c = 0; c < 3; ++c) {
                           v[c] = image_planes[c] + static_cast<int64_t>(i) * width;
                           std::copy(row[c], row[c] + width, v[c]);
                         }
                         ToUnit(v, width, draws.brightness_delta);
                         if (!draws.contrast_first)
                           SaturateAndTurnHue(v, width, draws.saturation_factor, draws.hue_delta);
                         for (int c = 0; c < 3; ++c) {
                           double row_sum = 0;
                           const float* x = v[c];
#pragma omp simd reduction(+ : row_sum)
                           for (int j = 0; j < width; ++j) row_sum += x[j];
                           sum[c] += row_sum;
                         }
                       });
    float mean[3];
    for (int c = 0; c < 3; ++c) mean[c] = static_cast<float>(sum[c] / static_cast<double>(pixels));
    Contrast(image_planes, pixels, mean, draws.contrast_factor);
    if (draws.contrast_first)
      SaturateAndTurnHue(image_planes, pixels, draws.saturation_factor, draws.hue_delta);
    FromUnit(image_planes, pixels);
    for (int i = 0; i < slot.height; ++i) {
      const int64_t offset = static_cast<int64_t>(i) * width;
      const float* const row[3] = {image_planes[0] + offset, image_planes[1] + offset,
                                   image_planes[2] + offset};
      writer.WriteRow(i, row, draws.flipped);
    }
    return absl::OkStatus();
  }
  const bool distort = options.color == ColorDistortion::kFast;
  SampleBilinearRows(image, y_axis, x_axis, slot.height, width, [&](int i, float* const* row) {
    if (distort) {
      ToUnit(row, width, draws.brightness_delta);
      Saturate(row, width, draws.saturation_factor);
      FromUnit(row, width);
    }
    writer.WriteRow(i, row, draws.flipped);
  });
  return absl::OkStatus();
}

absl::Status PreprocessTrainJpeg(JpegDecoder& decoder, absl::string_view jpeg,
                                 absl::Span<const CropBox> boxes, const TrainPreprocessOptions& options,
                                 uint64_t seed, Image* scratch, const BatchSlot& slot) {
  ASSIGN_OR_RETURN(const JpegHeader header, decoder.ReadHeader(jpeg));
  const ImageSize original{header.height, header.width};
  ASSIGN_OR_RETURN(const CropWindow crop,
                   SampleDistortedCrop(header.height, header.width, boxes, options.crop, seed));
  const ImageSize minimum = MinDecodeSizeForCrop(crop, original, slot.height, slot.width);
  DecodeOptions decode;
  decode.min_height = minimum.height;
  decode.min_width = minimum.width;
  RETURN_IF_ERROR(decoder.Decode(jpeg, decode, scratch).status());
  return PreprocessTrain(*scratch, original, crop, options, seed, slot);
}

absl::StatusOr<EvalWindow> ComputeEvalWindow(ImageSize original, int out_height, int out_width,
                                             float resize_factor) {
  if (original.height <= 0 || original.width <= 0 || out_height <= 0 || out_width <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("eval window: image ", original.width, "x",
                                                   original.height, ", output ", out_width, "x",
                                                   out_height));
  }
  if (!(resize_factor >= 1 && std::isfinite(resize_factor))) {
    return absl::InvalidArgumentError(
        absl::StrCat("eval resize_factor must be finite and >= 1, not ", resize_factor));
  }
  const float ratio = std::max(static_cast<float>(out_height) / original.height,
                               static_cast<float>(out_width) / original.width);
  EvalWindow window;
  // float32 products truncated as tf.cast(..., tf.int32); never below the
  // output (original * (out / original) can round to just under it).
  const float height = static_cast<float>(original.height) * ratio * resize_factor;
  const float width = static_cast<float>(original.width) * ratio * resize_factor;
  window.resize_height = std::max(out_height, static_cast<int>(height));
  window.resize_width = std::max(out_width, static_cast<int>(width));
  window.top = (window.resize_height - out_height) / 2;
  window.left = (window.resize_width - out_width) / 2;
  return window;
}

absl::Status PreprocessEval(const Image& image, ImageSize original, const EvalPreprocessOptions& options,
                            const BatchSlot& slot) {
  RETURN_IF_ERROR(CheckImage(image, "evaluation preprocessing"));
  RETURN_IF_ERROR(CheckSlot(slot));
  RETURN_IF_ERROR(CheckNormalization(options.normalization));
  ASSIGN_OR_RETURN(const EvalWindow window,
                   ComputeEvalWindow(original, slot.height, slot.width, options.resize_factor));
  // The whole image resized to the window's size, read from row `top`.
  Axis y_axis = WindowAxis(0, original.height, window.resize_height, original.height, image.height);
  y_axis.index_offset = window.top;
  Axis x_axis = WindowAxis(0, original.width, window.resize_width, original.width, image.width);
  x_axis.index_offset = window.left;
  const SlotWriter writer(slot, options.normalization);
  SampleBilinearRows(image, y_axis, x_axis, slot.height, slot.width,
                     [&](int i, const float* const* row) { writer.WriteRow(i, row, false); });
  return absl::OkStatus();
}

absl::Status PreprocessEvalJpeg(JpegDecoder& decoder, absl::string_view jpeg,
                                const EvalPreprocessOptions& options, Image* scratch, const BatchSlot& slot) {
  ASSIGN_OR_RETURN(const JpegHeader header, decoder.ReadHeader(jpeg));
  const ImageSize original{header.height, header.width};
  ASSIGN_OR_RETURN(const EvalWindow window,
                   ComputeEvalWindow(original, slot.height, slot.width, options.resize_factor));
  DecodeOptions decode;
  decode.min_height = window.resize_height;
  decode.min_width = window.resize_width;
  RETURN_IF_ERROR(decoder.Decode(jpeg, decode, scratch).status());
  return PreprocessEval(*scratch, original, options, slot);
}

}  // namespace cnnbench::input
