#include "core/onednn_isa.h"

#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "dnnl.h"

namespace cnnbench {

namespace {
// cpu_isa values are bit masks: an ISA includes every ISA whose bits it has.
bool OnednnIsaIncludes(dnnl_cpu_isa_t isa) {
  const auto effective = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  return (effective & static_cast<unsigned>(isa)) == static_cast<unsigned>(isa);
}
}  // namespace

std::string OnednnCpuIsa() {
  // The widest named ISA the effective one includes (oneDNN 2.6's names).
  static const std::pair<dnnl_cpu_isa_t, const char*> kNames[] = {
      {dnnl_cpu_isa_avx512_core_amx, "avx512_core_amx"},
      {dnnl_cpu_isa_avx512_core_bf16, "avx512_core_bf16"},
      {dnnl_cpu_isa_avx512_core_vnni, "avx512_core_vnni"},
      {dnnl_cpu_isa_avx512_core, "avx512_core"},
      {dnnl_cpu_isa_avx512_mic_4ops, "avx512_mic_4ops"},
      {dnnl_cpu_isa_avx512_mic, "avx512_mic"},
      {dnnl_cpu_isa_avx2_vnni, "avx2_vnni"},
      {dnnl_cpu_isa_avx2, "avx2"},
      {dnnl_cpu_isa_avx, "avx"},
      {dnnl_cpu_isa_sse41, "sse41"}};
  for (const auto& [isa, name] : kNames)
    if (OnednnIsaIncludes(isa)) return name;
  return "none (no vector ISA oneDNN uses)";
}

std::string OnednnIsaCap() {
  for (const char* name : {"ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return absl::StrCat(name, "=", value);
  }
  return "";
}

bool OnednnHasAvx2() { return OnednnIsaIncludes(dnnl_cpu_isa_avx2); }
bool OnednnHasAvx512() { return OnednnIsaIncludes(dnnl_cpu_isa_avx512_core); }
bool OnednnHasBf16() { return OnednnIsaIncludes(dnnl_cpu_isa_avx512_core_bf16); }

std::string OnednnBf16Unavailable() {
  if (OnednnHasBf16()) return "";
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512bf16")) return "this CPU lacks avx512_bf16";
  const std::string cap = OnednnIsaCap();
  return absl::StrCat("oneDNN is capped below avx512_bf16",
                      cap.empty() ? std::string() : absl::StrCat(" (", cap, ")"),
                      ", though this CPU has it");
}

}  // namespace cnnbench
