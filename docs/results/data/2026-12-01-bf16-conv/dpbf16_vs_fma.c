#include <immintrin.h>
#include <stdio.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(void){
  const long n = 100000000;
  __m512 a0=_mm512_set1_ps(1e-3f),a1=a0,a2=a0,a3=a0; __m512 x=_mm512_set1_ps(1.0001f), y=_mm512_set1_ps(0.9999f);
  double t=now();
  for(long i=0;i<n;i++){a0=_mm512_fmadd_ps(x,y,a0);a1=_mm512_fmadd_ps(x,y,a1);a2=_mm512_fmadd_ps(x,y,a2);a3=_mm512_fmadd_ps(x,y,a3);}
  double fma=now()-t;
  __m512bh bx=(__m512bh)_mm512_set1_epi16(0x3f80), by=bx;
  __m512 b0=_mm512_setzero_ps(),b1=b0,b2=b0,b3=b0;
  t=now();
  for(long i=0;i<n;i++){b0=_mm512_dpbf16_ps(b0,bx,by);b1=_mm512_dpbf16_ps(b1,bx,by);b2=_mm512_dpbf16_ps(b2,bx,by);b3=_mm512_dpbf16_ps(b3,bx,by);}
  double dp=now()-t;
  float s[16]; _mm512_storeu_ps(s,_mm512_add_ps(_mm512_add_ps(a0,a1),_mm512_add_ps(b0,b1)));
  printf("fma: %.3f s (%.1f GFLOP/s)  dpbf16: %.3f s (%.1f GFLOP/s)  ratio dp/fma time %.2f  [%g]\n", fma, 4.0*n*32/fma/1e9, dp, 4.0*n*64/dp/1e9, dp/fma, s[0]);
  return 0;
}
