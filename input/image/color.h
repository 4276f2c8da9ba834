// The colour operations of tf_cnn_benchmarks' training distortions (see
// preprocess.h), over planes of n values each (r, g, b), as branch-free
// loops the compiler vectorises. Values are on [0, 1] between them (ToUnit
// adds brightness on the way in, FromUnit clips on the way out). Internal to
// //input/image:preprocess. Each is compiled for AVX-512, AVX2 and the
// baseline; the loader picks the CPU's best (the library itself is built for
// the baseline).
#ifndef CNNBENCH_INPUT_IMAGE_COLOR_H_
#define CNNBENCH_INPUT_IMAGE_COLOR_H_

#include <cstdint>

namespace cnnbench::input::color {

// value / 255 + brightness.
void ToUnit(float* const v[3], int64_t n, float brightness);

// Clipped to [0, 1], back on 0..255.
void FromUnit(float* const v[3], int64_t n);

// tf.image.adjust_saturation alone, at fixed hue and value: each channel
// moves towards (factor < 1) or away from (factor > 1) the largest, the HSV
// saturation clamped to 1; pixels with no saturation, or a value <= 0, not
// saturated (TensorFlow makes the latter grey: after the clip both are 0).
void Saturate(float* const v[3], int64_t n, float factor);

// tf.image.adjust_saturation then adjust_hue in one HSV round trip (the
// second's conversion would give back the first's hue, saturation and
// value). HSV as TensorFlow's kernels compute it: value the largest
// channel, saturation range / value when value > 0 (else 0), hue in
// sectors [0, 6) (0 when the range is 0); back to RGB in the closed form
// channel(k) = value - chroma * clamp(min(k, 4 - k), 0, 1), k = (n + hue) mod 6
// with n = 5, 3, 1 for r, g, b.
void SaturateAndTurnHue(float* const v[3], int64_t n, float factor, float hue_delta);

// Each channel's deviations from `mean` scaled by `factor`.
void Contrast(float* const v[3], int64_t n, const float mean[3], float factor);

}  // namespace cnnbench::input::color

#endif  // CNNBENCH_INPUT_IMAGE_COLOR_H_
