#include "input/image/color.h"

#include <cmath>

// Each loop is compiled for AVX-512, AVX2 and the baseline: the clones are
// this file's own (the callers call the plain functions at the end), as a
// clone set must be declared and defined in one translation unit.
#define CNNBENCH_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

namespace cnnbench::input::color {
namespace {

// Select-based min and max (by value, the same results as std::min and
// std::max, whose references keep GCC from vectorising the loops below).
inline float Min(float a, float b) { return b < a ? b : a; }
inline float Max(float a, float b) { return a < b ? b : a; }
inline float Clip01(float x) { return Min(Max(x, 0.0f), 1.0f); }

CNNBENCH_VECTOR_CLONES void ToUnitLoop(float* const v[3], int64_t n, float brightness) {
  for (int c = 0; c < 3; ++c) {
    float* x = v[c];
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) x[j] = x[j] / 255.0f + brightness;
  }
}

CNNBENCH_VECTOR_CLONES void FromUnitLoop(float* const v[3], int64_t n) {
  for (int c = 0; c < 3; ++c) {
    float* x = v[c];
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) x[j] = Clip01(x[j]) * 255.0f;
  }
}

CNNBENCH_VECTOR_CLONES void SaturateLoop(float* const v[3], int64_t n, float factor) {
  float* r = v[0];
  float* g = v[1];
  float* b = v[2];
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) {
    const float red = r[j], green = g[j], blue = b[j];
    const float mx = Max(red, Max(green, blue));
    const float mn = Min(red, Min(green, blue));
    const float range = mx - mn;
    const bool apply = (mx > 0) & (range > 0);
    // Not applied: a scale of 1 (greys come back exactly; pixels with
    // value <= 0 stay <= 0, which the clip that follows makes 0 either way).
    const float ratio = apply ? Min(factor, mx / (apply ? range : 1.0f)) : 1.0f;
    r[j] = mx - (mx - red) * ratio;
    g[j] = mx - (mx - green) * ratio;
    b[j] = mx - (mx - blue) * ratio;
  }
}

CNNBENCH_VECTOR_CLONES void SaturateAndTurnHueLoop(float* const v[3], int64_t n, float factor,
                                               float hue_delta) {
  float* r = v[0];
  float* g = v[1];
  float* b = v[2];
  const float turn = 6.0f * hue_delta;
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) {
    const float mx = Max(r[j], Max(g[j], b[j]));
    const float mn = Min(r[j], Min(g[j], b[j]));
    const float range = mx - mn;
    const float s = mx > 0 ? range / mx : 0.0f;
    const float safe = range > 0 ? range : 1.0f;
    float h = r[j] == mx   ? (g[j] - b[j]) / safe
              : g[j] == mx ? 2.0f + (b[j] - r[j]) / safe
                           : 4.0f + (r[j] - g[j]) / safe;
    h = range > 0 ? h : 0.0f;
    h = h < 0 ? h + 6.0f : h;
    h += turn;
    h = h < 0 ? h + 6.0f : h;
    h = h >= 6.0f ? h - 6.0f : h;
    const float chroma = mx * Clip01(s * factor);
    float k = 5.0f + h;
    k = k >= 6.0f ? k - 6.0f : k;
    r[j] = mx - chroma * Clip01(Min(k, 4.0f - k));
    k = 3.0f + h;
    k = k >= 6.0f ? k - 6.0f : k;
    g[j] = mx - chroma * Clip01(Min(k, 4.0f - k));
    k = 1.0f + h;
    k = k >= 6.0f ? k - 6.0f : k;
    b[j] = mx - chroma * Clip01(Min(k, 4.0f - k));
  }
}

CNNBENCH_VECTOR_CLONES void ContrastLoop(float* const v[3], int64_t n, const float mean[3],
                                     float factor) {
  for (int c = 0; c < 3; ++c) {
    float* x = v[c];
    const float m = mean[c];
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) x[j] = (x[j] - m) * factor + m;
  }
}

}  // namespace

void ToUnit(float* const v[3], int64_t n, float brightness) { ToUnitLoop(v, n, brightness); }
void FromUnit(float* const v[3], int64_t n) { FromUnitLoop(v, n); }
void Saturate(float* const v[3], int64_t n, float factor) { SaturateLoop(v, n, factor); }
void SaturateAndTurnHue(float* const v[3], int64_t n, float factor, float hue_delta) {
  SaturateAndTurnHueLoop(v, n, factor, hue_delta);
}
void Contrast(float* const v[3], int64_t n, const float mean[3], float factor) {
  ContrastLoop(v, n, mean, factor);
}

}  // namespace cnnbench::input::color
