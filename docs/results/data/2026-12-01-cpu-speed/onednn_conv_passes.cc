// Times resnet50's 53 convolutions at batch 32 (forward_training,
// backward_data, backward_weights; best of REPS after one warm-up) on the
// oneDNN it is built against, layouts chosen by oneDNN (`any`) or NHWC.
//   Debian's 2.6.3:  g++ -O2 -std=c++17 onednn_conv_passes.cc -ldnnl -o cb26
//   PyPI's 3.2 (onednn-cpu-gomp + onednn-devel-cpu-gomp 2023.2.0, unzipped in D):
//     g++ -O2 -std=c++17 -ID/include onednn_conv_passes.cc -LD/lib -l:libdnnl.so.3 \
//         -Wl,-rpath,D/lib -o cb32
//   OMP_NUM_THREADS=2 ./cb26 f32 any 3 [shapes.txt]   (./cb32 f32 nhwc 3)
// Shapes: resnet50_conv_shapes.txt (count and oneDNN problem string per line).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>
#include "oneapi/dnnl/dnnl.hpp"
using namespace dnnl;
using tag = memory::format_tag;
using dt = memory::data_type;
static double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
struct Shape { int n, mb, ic, oc, ih, oh, kh, sh, ph, iw, ow; };
template <class F> double Best(F f, int reps) { f(); double best = 1e9; for (int i = 0; i < reps; ++i) { double t = Now(); f(); best = std::min(best, Now() - t); } return best * 1e3; }
std::string Impl(const primitive_desc_base& pd) { return pd.impl_info_str(); }
int main(int argc, char** argv) {
  dt type = (argc > 1 && !strcmp(argv[1], "bf16")) ? dt::bf16 : dt::f32;
  tag act = (argc > 2 && !strcmp(argv[2], "nhwc")) ? tag::nhwc : tag::any;
  int reps = argc > 3 ? atoi(argv[3]) : 3;
  engine eng(engine::kind::cpu, 0); stream s(eng);
  std::ifstream in(argc > 4 ? argv[4] : "resnet50_conv_shapes.txt"); std::vector<Shape> shapes; int cnt; std::string d;
  while (in >> cnt >> d) { Shape x{}; x.n = cnt; int dh, dw, pw, kw, sw;
    sscanf(d.c_str(), "mb%d_ic%doc%d_ih%doh%dkh%dsh%ddh%dph%d_iw%dow%dkw%dsw%ddw%dpw%d", &x.mb, &x.ic, &x.oc, &x.ih, &x.oh, &x.kh, &x.sh, &dh, &x.ph, &x.iw, &x.ow, &kw, &sw, &dw, &pw); shapes.push_back(x); }
  double tf = 0, td = 0, tw = 0, flops = 0;
  for (auto& x : shapes) {
    memory::dims src{x.mb, x.ic, x.ih, x.iw}, wei{x.oc, x.ic, x.kh, x.kh}, dst{x.mb, x.oc, x.oh, x.ow};
    memory::dims st{x.sh, x.sh}, dil{0, 0}, pl{x.ph, x.ph};
    int pr = (x.oh - 1) * x.sh + x.kh - x.ih - x.ph; if (pr < 0) pr = 0; memory::dims prr{pr, pr};
    memory::desc smd(src, type, act), wmd(wei, type, tag::any), dmd(dst, type, act);
    memory::desc wmdf(wei, dt::f32, tag::any);
#if DNNL_VERSION_MAJOR >= 3
    convolution_forward::primitive_desc fpd(eng, prop_kind::forward_training, algorithm::convolution_direct, smd, wmd, dmd, st, dil, pl, prr);
    convolution_backward_data::primitive_desc bdpd(eng, algorithm::convolution_direct, smd, wmd, dmd, st, dil, pl, prr, fpd);
    convolution_backward_weights::primitive_desc bwpd(eng, algorithm::convolution_direct, smd, type == dt::bf16 ? wmdf : wmd, dmd, st, dil, pl, prr, fpd);
#else
    convolution_forward::primitive_desc fpd({prop_kind::forward_training, algorithm::convolution_direct, smd, wmd, dmd, st, dil, pl, prr}, eng);
    convolution_backward_data::primitive_desc bdpd({algorithm::convolution_direct, smd, wmd, dmd, st, dil, pl, prr}, eng, fpd);
    convolution_backward_weights::primitive_desc bwpd({algorithm::convolution_direct, smd, type == dt::bf16 ? wmdf : wmd, dmd, st, dil, pl, prr}, eng, fpd);
#endif
    auto mk = [&](const memory::desc& m) { memory r(m, eng); memset(r.get_data_handle(), 0, m.get_size()); return r; };
    memory S = mk(fpd.src_desc()), W = mk(fpd.weights_desc()), D = mk(fpd.dst_desc());
    memory dS = mk(bdpd.diff_src_desc()), dW = mk(bdpd.weights_desc()), dD = mk(bdpd.diff_dst_desc());
    memory wS = mk(bwpd.src_desc()), wdW = mk(bwpd.diff_weights_desc()), wdD = mk(bwpd.diff_dst_desc());
    memory sp1 = mk(fpd.scratchpad_desc()), sp2 = mk(bdpd.scratchpad_desc()), sp3 = mk(bwpd.scratchpad_desc());
    convolution_forward f(fpd); convolution_backward_data bd(bdpd); convolution_backward_weights bw(bwpd);
    double a = Best([&] { f.execute(s, {{DNNL_ARG_SRC, S}, {DNNL_ARG_WEIGHTS, W}, {DNNL_ARG_DST, D}, {DNNL_ARG_SCRATCHPAD, sp1}}); s.wait(); }, reps);
    double b = Best([&] { bd.execute(s, {{DNNL_ARG_DIFF_SRC, dS}, {DNNL_ARG_WEIGHTS, dW}, {DNNL_ARG_DIFF_DST, dD}, {DNNL_ARG_SCRATCHPAD, sp2}}); s.wait(); }, reps);
    double c = Best([&] { bw.execute(s, {{DNNL_ARG_SRC, wS}, {DNNL_ARG_DIFF_WEIGHTS, wdW}, {DNNL_ARG_DIFF_DST, wdD}, {DNNL_ARG_SCRATCHPAD, sp3}}); s.wait(); }, reps);
    double fl = 2.0 * x.mb * x.oc * x.oh * x.ow * x.ic * x.kh * x.kh;
    printf("x%d ic%d oc%d %dx%d k%d s%d: fwd %7.2f ms (%5.0f GF/s %s) bwd_d %7.2f (%5.0f %s) bwd_w %7.2f (%5.0f %s)\n", x.n, x.ic, x.oc, x.ih, x.iw, x.kh, x.sh,
           a, fl / a / 1e6, Impl(fpd).c_str(), b, fl / b / 1e6, Impl(bdpd).c_str(), c, fl / c / 1e6, Impl(bwpd).c_str());
    tf += a * x.n; td += b * x.n; tw += c * x.n; flops += fl * x.n;
  }
  printf("oneDNN %d.%d.%d total ms: fwd %.1f bwd_data %.1f bwd_weights %.1f sum %.1f | GF/s fwd %.0f bwd_d %.0f bwd_w %.0f\n", dnnl_version()->major, dnnl_version()->minor, dnnl_version()->patch, tf, td, tw, tf + td + tw, flops / tf / 1e6, flops / td / 1e6, flops / tw / 1e6);
}
