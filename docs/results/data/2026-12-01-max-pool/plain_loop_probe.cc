// The probe that motivated kernels/onednn/max_pool.cc: a plain AVX2 max pool
// over nChw8c (argmax kept as a blend) on googlenet's three max pool shapes,
// batch 32, best of 8. Build and run:
//   g++ -O2 -mavx2 -fopenmp plain_loop_probe.cc -o probe && ./probe
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <cfloat>
#include <omp.h>
#include <immintrin.h>
// nChw8c max pool forward with a uint8 argmax workspace.
void Pool(const float* x, float* y, uint8_t* ws, int N, int CB, int H, int W, int OH, int OW, int K, int S, int P) {
#pragma omp parallel for collapse(2)
  for (int n = 0; n < N; ++n)
    for (int cb = 0; cb < CB; ++cb) {
      const float* xp = x + ((size_t)(n * CB + cb) * H * W) * 8;
      float* yp = y + ((size_t)(n * CB + cb) * OH * OW) * 8;
      uint8_t* wp = ws + ((size_t)(n * CB + cb) * OH * OW) * 8;
      for (int oh = 0; oh < OH; ++oh)
        for (int ow = 0; ow < OW; ++ow) {
          __m256 m = _mm256_set1_ps(-FLT_MAX); __m256 a = _mm256_setzero_ps();
          for (int kh = 0; kh < K; ++kh) {
            int ih = oh * S - P + kh; if (ih < 0 || ih >= H) continue;
            for (int kw = 0; kw < K; ++kw) {
              int iw = ow * S - P + kw; if (iw < 0 || iw >= W) continue;
              __m256 v = _mm256_loadu_ps(xp + ((size_t)ih * W + iw) * 8);
              __m256 b = _mm256_cmp_ps(v, m, _CMP_GT_OQ);
              m = _mm256_blendv_ps(m, v, b);
              a = _mm256_blendv_ps(a, _mm256_set1_ps((float)(kh * K + kw)), b);
            }
          }
          _mm256_storeu_ps(yp + ((size_t)oh * OW + ow) * 8, m);
          __m256i ai = _mm256_cvtps_epi32(a);
          alignas(32) int32_t t[8]; _mm256_store_si256((__m256i*)t, ai);
          uint8_t* w = wp + ((size_t)oh * OW + ow) * 8; for (int c = 0; c < 8; ++c) w[c] = (uint8_t)t[c];
        }
    }
}
int main() {
  struct S { int C, H, OH, K, St, P; } shapes[] = {{64,112,56,3,2,0},{192,56,28,3,2,0},{192,28,28,3,1,1}};
  for (auto s : shapes) {
    int N = 32, CB = s.C / 8;
    std::vector<float> x((size_t)N * s.C * s.H * s.H), y((size_t)N * s.C * s.OH * s.OH);
    std::vector<uint8_t> ws(y.size());
    for (size_t i = 0; i < x.size(); ++i) x[i] = (i * 2654435761u % 1000) / 1000.f;
    double best = 1e9;
    for (int r = 0; r < 8; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      Pool(x.data(), y.data(), ws.data(), N, CB, s.H, s.H, s.OH, s.OH, s.K, s.St, s.P);
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (ms < best) best = ms;
    }
    std::printf("C%d H%d->%d k%d s%d: %.2f ms (%d threads)\n", s.C, s.H, s.OH, s.K, s.St, best, omp_get_max_threads());
  }
}
