#include <dnnl.hpp>
#include <chrono>
#include <cstdio>
#include <vector>
using namespace dnnl;
using tag = memory::format_tag;
using dt = memory::data_type;
double Time(primitive& p, std::unordered_map<int, memory>& args, stream& s) {
  for (int i = 0; i < 2; ++i) p.execute(s, args);
  s.wait();
  double best = 1e9;
  for (int r = 0; r < 5; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    p.execute(s, args); s.wait();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}
void Run(const char* name, memory::desc src_md, memory::dims wdims, int oc, dt type, engine& eng, stream& s) {
  memory::desc w_any(wdims, type, tag::any), dst_any({32, oc}, type, tag::any), b_md({oc}, dt::f32, tag::x);
  inner_product_forward::primitive_desc fpd({prop_kind::forward_training, src_md, w_any, b_md, dst_any}, eng);
  inner_product_backward_data::primitive_desc dpd({src_md, w_any, dst_any}, eng, fpd);
  inner_product_backward_weights::primitive_desc wpd({src_md, w_any, b_md, dst_any}, eng, fpd);
  memory src(fpd.src_desc(), eng), w(fpd.weights_desc(), eng), b(b_md, eng), dst(fpd.dst_desc(), eng);
  memory dsrc(dpd.diff_src_desc(), eng), ddst(dpd.diff_dst_desc(), eng), dw(wpd.diff_weights_desc(), eng), db(b_md, eng);
  memory ddst_w(wpd.diff_dst_desc(), eng);
  inner_product_forward f(fpd); inner_product_backward_data d(dpd); inner_product_backward_weights wk(wpd);
  std::unordered_map<int, memory> fa{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_BIAS, b}, {DNNL_ARG_DST, dst}};
  std::unordered_map<int, memory> da{{DNNL_ARG_DIFF_SRC, dsrc}, {DNNL_ARG_WEIGHTS, memory(dpd.weights_desc(), eng)}, {DNNL_ARG_DIFF_DST, ddst}};
  std::unordered_map<int, memory> wa{{DNNL_ARG_SRC, memory(wpd.src_desc(), eng)}, {DNNL_ARG_DIFF_WEIGHTS, dw}, {DNNL_ARG_DIFF_BIAS, db}, {DNNL_ARG_DIFF_DST, ddst_w}};
  double tf = Time(f, fa, s), td = Time(d, da, s), tw = Time(wk, wa, s);
  printf("%-28s fwd %7.2f ms (%s)  bwd_d %7.2f (%s)  bwd_w %7.2f (%s)  wsame=%d %d\n", name, tf, fpd.impl_info_str(), td, dpd.impl_info_str(), tw, wpd.impl_info_str(),
         fpd.weights_desc() == dpd.weights_desc(), fpd.weights_desc() == wpd.diff_weights_desc());
}
int main(int argc, char** argv) {
  engine eng(engine::kind::cpu, 0); stream s(eng);
  for (dt type : {dt::f32, dt::bf16}) {
    printf("%s\n", type == dt::f32 ? "fp32" : "bf16");
    Run("4d nChw16c 256x6x6", memory::desc({32, 256, 6, 6}, type, tag::nChw16c), {4096, 256, 6, 6}, 4096, type, eng, s);
    Run("4d nchw", memory::desc({32, 256, 6, 6}, type, tag::nchw), {4096, 256, 6, 6}, 4096, type, eng, s);
    Run("4d nhwc", memory::desc({32, 256, 6, 6}, type, tag::nhwc), {4096, 256, 6, 6}, 4096, type, eng, s);
    Run("4d any", memory::desc({32, 256, 6, 6}, type, tag::any), {4096, 256, 6, 6}, 4096, type, eng, s);
    Run("2d nc 9216", memory::desc({32, 9216}, type, tag::nc), {4096, 9216}, 4096, type, eng, s);
    Run("2d nc 4096->4096", memory::desc({32, 4096}, type, tag::nc), {4096, 4096}, 4096, type, eng, s);
  }
}
