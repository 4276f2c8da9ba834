// The oneDNN CPU backend (also declared in kernels/backends.h, which this
// library cannot include: //kernels:backends depends on it).
#ifndef CNNBENCH_KERNELS_ONEDNN_ONEDNN_BACKEND_H_
#define CNNBENCH_KERNELS_ONEDNN_ONEDNN_BACKEND_H_

#include <memory>

#include "absl/status/statusor.h"
#include "kernels/kernel.h"
#include "kernels/onednn/conv_choices.h"

namespace cnnbench {

// oneDNN primitives on the CPU: fp32 everywhere, bf16 where the CPU has
// avx512_bf16 (else Unimplemented "unsupported: bf16 needs avx512_bf16").
// Layouts are oneDNN's choice (format_tag::any) and are reported as
// Layout::kBlocked specs whose `native` is the dnnl::memory::desc.
//
// Input layouts: a blocked producer spec is always read as it is (the
// signature's input is that very spec). For a plain or absent spec,
// convolution and fully connected layers let oneDNN choose the input layout
// (the caller reorders at that edge when SameLayout says so); the other ops
// read plain inputs as they are.
//
// Convolutions run the algorithm `conv_algorithm` says (conv_choices.h);
// each conv kernel's pass_implementation names what each pass runs.
// A backend made without options (or by name, CreateBackend("onednn"))
// runs direct convolution: its bits do not depend on a timing. The suite
// passes its --cpu_conv_algorithm, whose default is timed.
struct OneDnnOptions {
  CpuConvAlgorithm conv_algorithm = CpuConvAlgorithm::kDirect;
  // Where timed choices are kept; nullptr: ConvChoices::Process().
  ConvChoices* choices = nullptr;
};
absl::StatusOr<std::unique_ptr<Backend>> CreateOneDnnBackend(const OneDnnOptions& options);
absl::StatusOr<std::unique_ptr<Backend>> CreateOneDnnBackend();

}  // namespace cnnbench

#endif  // CNNBENCH_KERNELS_ONEDNN_ONEDNN_BACKEND_H_
