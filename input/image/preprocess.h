// tf_cnn_benchmarks' image preprocessing: the training crop sampler
// (sample_distorted_bounding_box), bilinear resize, random flip, optional
// colour distortion and normalisation into a batch slot; and the evaluation
// path (aspect-preserving resize then central crop). Every random choice
// comes from a per-image seed, so (seed, image) always gives the same image
// on any thread.
//
// Typical use by a pipeline worker (one JpegDecoder and one Image per thread):
//   header = decoder.ReadHeader(bytes)
//   crop   = SampleDistortedCrop(header.height, header.width, boxes, options.crop, seed)
//   decode with MinDecodeSizeForCrop(...) as DecodeOptions' minimum
//   PreprocessTrain(image, {header.height, header.width}, crop, options, seed, slot)
// or all of it at once with PreprocessTrainJpeg.
#ifndef CNNBENCH_INPUT_IMAGE_PREPROCESS_H_
#define CNNBENCH_INPUT_IMAGE_PREPROCESS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "input/image/jpeg.h"

namespace cnnbench::input {

// A box in fractions of the image, as tf.Example's image/object/bbox/*.
struct CropBox {
  float ymin = 0, xmin = 0, ymax = 1, xmax = 1;
};

// A pixel window of an image: rows [y, y+height), columns [x, x+width).
struct CropWindow {
  int y = 0;
  int x = 0;
  int height = 0;
  int width = 0;
  bool fell_back = false;  // no attempt succeeded: the whole image
};

// sample_distorted_bounding_box's parameters, tf_cnn_benchmarks' values.
struct CropSamplerOptions {
  float min_object_covered = 0.1f;
  float min_aspect_ratio = 0.75f;  // width / height
  float max_aspect_ratio = 1.33f;
  float min_area = 0.05f;  // fraction of the image
  float max_area = 1.0f;
  int max_attempts = 100;
};

// The seed of image `image_index` of a run seeded with `run_seed`.
uint64_t ImageSeed(uint64_t run_seed, uint64_t image_index);

// Samples a crop of a height x width image as tf.image.sample_distorted_
// bounding_box does: up to max_attempts tries, each drawing an aspect ratio
// (width/height) uniformly in [min, max] and an area uniformly in [min_area,
// max_area] of the image, rounding to whole pixels (a try whose rounded
// window leaves either range, or the image, fails), a uniform position, and
// accepting the window when it covers at least min_object_covered of some
// box's area. No boxes: the whole image is the box. Boxes of zero pixel
// area are ignored (when all are, the whole image is the box). No try
// succeeds: the whole image, fell_back = true. Pure: the result depends only
// on its arguments. Errors: non-positive sizes, boxes outside [0,1] or with
// min > max (naming the box), option values out of range.
absl::StatusOr<CropWindow> SampleDistortedCrop(int height, int width,
                                               absl::Span<const CropBox> boxes,
                                               const CropSamplerOptions& options, uint64_t seed);

// The smallest decoded size (of the whole image) under which `crop` (in
// original_height x original_width coordinates) still spans at least
// out_height x out_width pixels: DecodeOptions' minimum, so the decoder
// downscales in the DCT domain only as far as the crop allows.
struct ImageSize {
  int height = 0;
  int width = 0;
};
ImageSize MinDecodeSizeForCrop(const CropWindow& crop, ImageSize original, int out_height,
                               int out_width);

// Bilinear resize as tf.image.resize_bilinear(align_corners=False) in
// TensorFlow 1 (half_pixel_centers=False): output pixel i samples source
// coordinate i * (in/out) from the window's top-left corner, neighbours
// floor and floor+1, the latter clamped to the window's last row/column.
// Writes out_height x out_width x channels floats (HWC, 0..255 scale).
// The window must lie within the source and the output be non-empty (the
// checked entry points below validate their inputs before calling it).
void ResizeBilinear(const Image& source, const CropWindow& window, int out_height, int out_width,
                    float* out);

// (value - mean) / stddev per channel; tf_cnn_benchmarks' default maps
// 0..255 to [-1, 1].
struct Normalization {
  float mean[3] = {127.5f, 127.5f, 127.5f};
  float stddev[3] = {127.5f, 127.5f, 127.5f};
};

// Where one preprocessed image goes: example `index` of a batch of
// (N, height, width, 3) (kNHWC) or (N, 3, height, width) (kNCHW) values of
// type kF32 or kBF16.
struct BatchSlot {
  void* batch = nullptr;
  DType dtype = DType::kF32;
  Layout layout = Layout::kNHWC;
  int height = 0;
  int width = 0;
  int64_t index = 0;
};

enum class ColorDistortion {
  kNone,
  // Brightness (uniform delta in [-32/255, 32/255]) then saturation (factor
  // uniform in [0.5, 1.5]) on values scaled to [0, 1], then clipped to
  // [0, 1]: the fast mode of the Inception-style distort_color.
  kFast,
  // tf_cnn_benchmarks' distort_color (its --distortions with
  // --nodistort_color_in_yiq, the RGB path TensorFlow 2 requires): on
  // values scaled to [0, 1], brightness as kFast, saturation (factor in
  // [0.5, 1.5]) and hue (a turn of the colour circle by a uniform delta in
  // [-0.2, 0.2]) in HSV, and contrast (each channel's mean over the image
  // kept, deviations scaled by a factor uniform in [0.5, 1.5]), in one of
  // its two orders: brightness, saturation, hue, contrast; or brightness,
  // contrast, saturation, hue. tf_cnn_benchmarks picks the order by the
  // parity of a counter its data set attaches to each record before
  // shuffling, so half the records take each; here a per-image draw does
  // the same and keeps an image's pixels a function of its seed alone.
  // Clipped to [0, 1] at the end only, as TensorFlow's ops do not clip in
  // between.
  kFull,
};
// "none", "fast", "full"; errors list the accepted names.
absl::StatusOr<ColorDistortion> ParseColorDistortion(absl::string_view name);
const char* ColorDistortionName(ColorDistortion distortion);

struct TrainPreprocessOptions {
  CropSamplerOptions crop;
  // Horizontal, p = 0.5, applied to the resized output (tf_cnn_benchmarks
  // flips the crop before resizing; under the top-left sampling convention
  // the two differ by a sub-pixel shift).
  bool random_flip = true;
  ColorDistortion color = ColorDistortion::kNone;
  Normalization normalization;
};

// What the random draws of one training image were (for tests and logs).
struct TrainDraws {
  bool flipped = false;
  float brightness_delta = 0;  // on the [0, 1] scale
  float saturation_factor = 1;
  float hue_delta = 0;          // in turns of the colour circle (kFull)
  float contrast_factor = 1;    // (kFull)
  bool contrast_first = false;  // kFull's second order (p = 0.5)
};

// The flip and colour draws for `seed`: independent of the crop's draws and
// of the options (the same seed flips the same way with or without colour,
// and draws the same brightness and saturation under kFast and kFull).
TrainDraws DrawTrainDistortions(uint64_t seed);

// The training path after decode: resizes `crop` (in original coordinates;
// `image` may be the DCT-downscaled decode of an original-sized JPEG) to
// the slot's size, flips and distorts by `seed`'s draws, normalises and
// writes the slot. Thread-safe (writes only the slot; kFull's two passes
// use a per-thread buffer that grows to the largest slot and is kept).
absl::Status PreprocessTrain(const Image& image, ImageSize original, const CropWindow& crop,
                             const TrainPreprocessOptions& options, uint64_t seed, const BatchSlot& slot,
                             TrainDraws* draws = nullptr);

// Header, crop, downscaled decode into `scratch`, PreprocessTrain. Uses the
// decoder (one per thread).
absl::Status PreprocessTrainJpeg(JpegDecoder& decoder, absl::string_view jpeg,
                                 absl::Span<const CropBox> boxes, const TrainPreprocessOptions& options,
                                 uint64_t seed, Image* scratch, const BatchSlot& slot);

// tf_cnn_benchmarks' eval_image: scale the image (aspect kept) so it just
// covers out_height x out_width, enlarge that by resize_factor (sizes
// computed in float32 and truncated, as tf.cast(..., tf.int32)), and keep the
// central out_height x out_width window (offsets rounded down).
// tf_cnn_benchmarks uses 1.15 (a central fraction of about 0.87); the
// Inception/slim convention of central_fraction 0.875 is 1/0.875.
struct EvalPreprocessOptions {
  float resize_factor = 1.15f;  // >= 1
  Normalization normalization;
};
struct EvalWindow {
  int resize_height = 0;  // the whole image resized to this...
  int resize_width = 0;
  int top = 0;  // ...then this window of the slot's size is kept
  int left = 0;
};
absl::StatusOr<EvalWindow> ComputeEvalWindow(ImageSize original, int out_height, int out_width,
                                             float resize_factor);

// The evaluation path after decode (`image` may be a downscaled decode of an
// `original`-sized JPEG; decode with the window's resize size as minimum).
absl::Status PreprocessEval(const Image& image, ImageSize original, const EvalPreprocessOptions& options,
                            const BatchSlot& slot);
absl::Status PreprocessEvalJpeg(JpegDecoder& decoder, absl::string_view jpeg,
                                const EvalPreprocessOptions& options, Image* scratch, const BatchSlot& slot);

}  // namespace cnnbench::input

#endif  // CNNBENCH_INPUT_IMAGE_PREPROCESS_H_
