// oneDNN's instruction set as the CPU backend's kernels see it: the
// effective ISA oneDNN dispatches to, the variable that caps it, and why
// bf16 cannot run here. One place, so the platform context, the backend's
// refusals, the peak loops and onednn_overhead say the same thing.
#ifndef CNNBENCH_CORE_ONEDNN_ISA_H_
#define CNNBENCH_CORE_ONEDNN_ISA_H_

#include <string>

namespace cnnbench {

// oneDNN's effective instruction set by name ("avx512_core_bf16", "avx2",
// "sse41", ...), the one the CPU backend's kernels dispatch to.
std::string OnednnCpuIsa();
// The variable capping oneDNN's instruction set as "NAME=VALUE"
// (ONEDNN_MAX_CPU_ISA, or its older name DNNL_MAX_CPU_ISA), "" when none.
std::string OnednnIsaCap();
// oneDNN's effective ISA has AVX2, AVX-512 (avx512_core and above), or
// bf16 (avx512_core_bf16 and above).
bool OnednnHasAvx2();
bool OnednnHasAvx512();
bool OnednnHasBf16();
// Why the CPU cannot run bf16 here, "" when it can: "this CPU lacks
// avx512_bf16", or "oneDNN is capped below avx512_bf16
// (ONEDNN_MAX_CPU_ISA=AVX2)" where the CPU has it. Every bf16 refusal on
// the CPU (the backend, the peak loop, onednn_overhead) says this.
std::string OnednnBf16Unavailable();

}  // namespace cnnbench

#endif  // CNNBENCH_CORE_ONEDNN_ISA_H_
