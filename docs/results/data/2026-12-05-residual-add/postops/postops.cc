// A residual add fused into resnet50's first-stage 1x1 convolution (64 -> 256
// channels, 56x56, batch 1) with oneDNN 2.6.3, three ways: no add (mode 0),
// the binary-add post-op reading the shortcut from its own buffer (mode 1),
// the sum post-op adding what the destination holds (mode 2), each followed
// by the ReLU post-op; then the add + ReLU as a binary primitive of its own.
// Mean microseconds per execution (200 runs after 20; 3 after 1 for a
// reference kernel). Built with: g++ -O2 -std=c++17 p.cc -o p -ldnnl -lgomp;
// run with OMP_NUM_THREADS=2.
#include <string>
#include <dnnl.hpp>
#include <chrono>
#include <cstdio>
#include <vector>
using namespace dnnl;
using tag = memory::format_tag;
int main(int argc, char** argv) {
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  for (auto dt : {memory::data_type::f32, memory::data_type::bf16}) {
    // resnet50 block: 1x1 conv 64->256 at 56x56, batch 1, shortcut add + relu
    int N = 1, C = 64, K = 256, H = 56;
    memory::desc src({N, C, H, H}, dt, tag::any), wei({K, C, 1, 1}, dt, tag::any),
        dst({N, K, H, H}, dt, tag::any);
    auto d = convolution_forward::desc(prop_kind::forward_inference, algorithm::convolution_direct,
                                       src, wei, dst, {1, 1}, {0, 0}, {0, 0}, {0, 0});
    convolution_forward::primitive_desc plain(d, eng);
    memory::desc dmd = plain.dst_desc();
    for (int mode = 0; mode < 3; ++mode) {
      post_ops po;
      if (mode == 1) po.append_binary(algorithm::binary_add, dmd);
      if (mode == 2) po.append_sum(1.0f);
      po.append_eltwise(1.0f, algorithm::eltwise_relu, 0, 0);
      primitive_attr attr;
      attr.set_post_ops(po);
      auto d2 = convolution_forward::desc(prop_kind::forward_inference, algorithm::convolution_direct,
                                          plain.src_desc(), plain.weights_desc(), dmd, {1, 1}, {0, 0}, {0, 0}, {0, 0});
      try {
        convolution_forward::primitive_desc pd(d2, attr, eng);
        memory x(pd.src_desc(), eng), w(pd.weights_desc(), eng), y(pd.dst_desc(), eng), r(dmd, eng);
        convolution_forward c(pd);
        std::unordered_map<int, memory> args{{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, y}};
        if (mode == 1) args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] = r;
        const bool ref = std::string(pd.impl_info_str()).rfind("ref", 0) == 0;
        const int warm = ref ? 1 : 20, runs = ref ? 3 : 200;
        for (int i = 0; i < warm; ++i) c.execute(s, args);
        s.wait();
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < runs; ++i) c.execute(s, args);
        s.wait();
        double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / runs;
        printf("dt=%d mode=%d impl=%s %.1f us\n", (int)dt, mode, pd.impl_info_str(), us);
      } catch (error& e) { printf("dt=%d mode=%d unsupported: %s\n", (int)dt, mode, e.what()); }
    }
    // separate binary add+relu
    post_ops po; po.append_eltwise(1.0f, algorithm::eltwise_relu, 0, 0);
    primitive_attr attr; attr.set_post_ops(po);
    binary::primitive_desc bpd(binary::desc(algorithm::binary_add, dmd, dmd, dmd), attr, eng);
    memory a(dmd, eng), b(dmd, eng), c(dmd, eng);
    binary bp(bpd);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC_0, a}, {DNNL_ARG_SRC_1, b}, {DNNL_ARG_DST, c}};
    for (int i = 0; i < 20; ++i) bp.execute(s, args);
    s.wait();
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 200; ++i) bp.execute(s, args);
    s.wait();
    printf("dt=%d separate add impl=%s %.1f us\n", (int)dt, bpd.impl_info_str(),
           std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 200);
  }
}
