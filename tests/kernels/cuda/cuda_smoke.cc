// cuda_smoke: the first thing a GPU machine runs (tools/bundle/gpu_check.sh's
// smoke stage, under a minute): one small case of each library path the
// suite depends on, each checked against the CPU reference backend and
// printed with the engine it ran and the seconds its kernel took to build.
//
//   cuda_smoke [--json=PATH] [--only=SUBSTRING]
//
// Checks: a 3x3 convolution in fp32, tf32, fp16 and bf16 (forward, data
// and weight gradients), the 3-channel 7x7 stride-2 first layer in bf16 and
// fp16 (its weight gradient is where the numerics filter can leave no
// engine), an fc layer's GEMMs on cuBLASLt (bf16 and fp32), a kernel
// captured as a CUDA graph and replayed (its output equal to the eager
// run's, bit for bit), and last batch norm with its ReLU as cuDNN graphs
// (forward and backward, bf16 and fp16; its engines may be compiled at run
// time, seconds each). One line per check on stdout:
//
//   smoke <check> ok|FAILED|skipped <seconds>s <implementation> [<detail>]
//
// and with --json a list of {"check", "status" ("ok", "failed: ...",
// "skipped: ..."), "seconds", "implementation", "detail"}. Exit status 0
// when every check passed, 1 when one failed, 2 when there is no usable
// GPU (every check skipped, the reason said).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/compile_log.h"
#include "core/crash_handler.h"
#include "core/device.h"
#include "core/gpu_runtime.h"
#include "core/status.h"
#include "kernels/desc.h"
#include "kernels/kernel.h"
#include "nlohmann/json.hpp"
#include "tests/kernels/cuda/cuda_test_util.h"

ABSL_FLAG(std::string, json, "", "write the checks' results here as a JSON list");
ABSL_FLAG(std::string, only, "", "run only the checks whose name contains this");

namespace cnnbench {
namespace {

struct Result {
  std::string check, status, implementation, detail;
  double seconds = 0;
};

// The kernel's implementation and the seconds Create took (its plans).
absl::StatusOr<std::pair<std::string, double>> Build(const OpDesc& desc, Precision precision) {
  const auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel,
                   cuda_test::Cuda()->Create(desc, KernelOptions::ForPrecision(precision), {}));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::make_pair(kernel->implementation(), seconds);
}

cuda_test::CompareOptions Tolerance(Precision p) {
  cuda_test::CompareOptions o;
  o.precision = p;
  // Small integers: fp32 products and sums are exact; the low precisions
  // round each result once (bf16 keeps 8 bits).
  const double tol = p == Precision::kFp32 ? 1e-5 : p == Precision::kFp16 ? 4e-3 : 2e-2;
  o.forward_rtol = o.backward_rtol = tol;
  o.forward_atol = o.backward_atol = p == Precision::kFp32 ? 1e-3 : 2e-2;
  return o;
}

// A kernel against the reference: builds it (implementation, seconds), then
// compares every pass.
Result CompareOp(const std::string& check, const std::string& text, Precision precision,
                 const std::function<absl::Status(const std::string&)>& require = nullptr) {
  Result r{check, "", "", "", 0};
  auto desc = ParseOpDesc(text);
  if (!desc.ok()) {
    r.status = absl::StrCat("failed: ", desc.status().message());
    return r;
  }
  auto built = Build(*desc, precision);
  if (!built.ok()) {
    r.status = absl::StrCat("failed: creating ", text, ": ", built.status().message());
    return r;
  }
  r.implementation = built->first;
  r.seconds = built->second;
  r.detail = text;
  if (require) {
    absl::Status wanted = require(r.implementation);
    if (!wanted.ok()) {
      r.status = absl::StrCat("failed: ", wanted.message());
      return r;
    }
  }
  cuda_test::CompareOptions tolerance = Tolerance(precision);
  if (absl::StrContains(r.implementation, "reduced-precision reduction")) {
    // An engine that reduces in the activation type: looser, and said so.
    tolerance.backward_rtol = tolerance.backward_atol = 1e-1;
    r.detail = absl::StrCat(text, " (reduced-precision reduction: backward within 1e-1)");
  }
  absl::Status compared = cuda_test::CompareWithReference(*desc, tolerance);
  r.status = compared.ok() ? "ok" : absl::StrCat("failed: ", compared.message());
  return r;
}

// A convolution's forward captured as a CUDA graph and replayed: the same
// output as the eager call, bit for bit.
absl::Status CaptureAndReplay(std::string* implementation) {
  ASSIGN_OR_RETURN(OpDesc desc, ParseOpDesc("conv:mb4_ic16oc16_ih8oh8kh3sh1ph1_iw8ow8kw3sw1pw1"));
  Backend* cuda = cuda_test::Cuda();
  ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel,
                   cuda->Create(desc, KernelOptions::ForPrecision(Precision::kBf16), {}));
  *implementation = kernel->implementation();
  const KernelSignature& sig = kernel->signature();
  ASSIGN_OR_RETURN(cuda_test::DeviceBuffers buffers, cuda_test::AllocateFor(sig));
  std::vector<double> x(static_cast<size_t>(sig.inputs[0].shape.num_elements()));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(static_cast<int>(i % 7) - 3);
  RETURN_IF_ERROR(cuda_test::Write(sig.inputs[0], buffers.x[0].data(), x));
  for (size_t p = 0; p < sig.params.size(); ++p) {
    std::vector<double> w(static_cast<size_t>(sig.params[p].shape.num_elements()));
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<double>(static_cast<int>(i % 5) - 2);
    RETURN_IF_ERROR(cuda_test::Write(sig.params[p], buffers.params[p].data(), w));
  }
  const KernelArgs args = buffers.Args(/*training=*/false);
  RETURN_IF_ERROR(kernel->Forward(args));
  RETURN_IF_ERROR(cuda->stream().Synchronize());
  ASSIGN_OR_RETURN(std::vector<double> eager, cuda_test::Read(sig.output, buffers.y.data()));
  RETURN_IF_ERROR(cuda_test::Poison(buffers.y));
  RETURN_IF_ERROR(cuda->stream().Synchronize());
  RETURN_IF_ERROR(CapturedWork::BeginCapture(cuda->stream()));
  absl::Status enqueued = kernel->Forward(args);
  absl::StatusOr<CapturedWork> captured = CapturedWork::EndCapture(cuda->stream());
  RETURN_IF_ERROR(enqueued);
  RETURN_IF_ERROR(captured.status());
  RETURN_IF_ERROR(captured->Launch(cuda->stream()));
  RETURN_IF_ERROR(cuda->stream().Synchronize());
  ASSIGN_OR_RETURN(std::vector<double> replayed, cuda_test::Read(sig.output, buffers.y.data()));
  for (size_t i = 0; i < eager.size(); ++i)
    if (std::memcmp(&eager[i], &replayed[i], sizeof(double)) != 0)
      return absl::InternalError(absl::StrCat("the replay's output differs at ", i, ": ",
                                              replayed[i], " (eager ", eager[i], ")"));
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  InstallCrashHandler(argv[0]);
  absl::ParseCommandLine(argc, argv);
  SetCompileLog(true);  // which engine each pass took, as it is chosen (stderr)
  const std::string only = absl::GetFlag(FLAGS_only);
  std::vector<Result> results;
  const bool gpu = cuda_test::Cuda() != nullptr;

  using Check = std::function<Result()>;
  std::vector<std::pair<std::string, Check>> checks;
  const char* conv3x3 = "conv:mb4_ic16oc16_ih8oh8kh3sh1ph1_iw8ow8kw3sw1pw1";
  const char* stem = "conv:mb2_ic3oc16_ih32oh16kh7sh2ph3_iw32ow16kw7sw2pw3";
  for (Precision p : {Precision::kFp32, Precision::kTf32, Precision::kFp16, Precision::kBf16}) {
    const std::string name = absl::StrCat("conv3x3_", PrecisionName(p));
    checks.push_back({name, [=] { return CompareOp(name, conv3x3, p); }});
  }
  for (Precision p : {Precision::kBf16, Precision::kFp16}) {
    const std::string name = absl::StrCat("conv_stem_", PrecisionName(p));
    checks.push_back({name, [=] { return CompareOp(name, stem, p); }});
  }
  for (Precision p : {Precision::kBf16, Precision::kFp32}) {
    const std::string name = absl::StrCat("gemm_fc_", PrecisionName(p));
    checks.push_back({name, [=] { return CompareOp(name, "fc:mb32ic256oc128", p); }});
  }
  checks.push_back({"cuda_graph_replay", [] {
                      Result r{"cuda_graph_replay", "", "", "conv bf16 forward", 0};
                      const auto start = std::chrono::steady_clock::now();
                      absl::Status s = CaptureAndReplay(&r.implementation);
                      r.seconds = std::chrono::duration<double>(
                                      std::chrono::steady_clock::now() - start)
                                      .count();
                      r.status = s.ok() ? "ok" : absl::StrCat("failed: ", s.message());
                      return r;
                    }});
  // Batch norm last: its graphs may compile engines at run time (seconds).
  for (Precision p : {Precision::kBf16, Precision::kFp16}) {
    const std::string name = absl::StrCat("bn_graph_relu_", PrecisionName(p));
    checks.push_back({name, [=] {
                        return CompareOp(name, "bn:mb8ic64ih14iw14_eps1e-05mom0.9_relu", p,
                                         [](const std::string& impl) {
                                           if (absl::StartsWith(impl, "cudnn:bn_graph:"))
                                             return absl::OkStatus();
                                           return absl::UnavailableError(absl::StrCat(
                                               "batch norm did not run as cuDNN graphs: ", impl));
                                         });
                      }});
  }

  int failed = 0;
  // The descriptors parse on any machine: a typo shows here, not on the GPU.
  for (const char* text : {conv3x3, stem, "bn:mb8ic64ih14iw14_eps1e-05mom0.9_relu",
                           "fc:mb32ic256oc128"}) {
    auto parsed = ParseOpDesc(text);
    if (!parsed.ok()) {
      std::printf("smoke descriptors FAILED %s: %s\n", text,
                  std::string(parsed.status().message()).c_str());
      return 1;
    }
  }
  for (const auto& [name, check] : checks) {
    if (!only.empty() && !absl::StrContains(name, only)) continue;
    Result r;
    if (!gpu) {
      r = {name, absl::StrCat("skipped: ", cuda_test::NoGpuReason()), "", "", 0};
    } else {
      const auto start = std::chrono::steady_clock::now();
      r = check();
      if (r.seconds == 0)
        r.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    if (absl::StartsWith(r.status, "failed")) ++failed;
    const char* word = r.status == "ok"                        ? "ok"
                       : absl::StartsWith(r.status, "skipped") ? "skipped"
                                                               : "FAILED";
    std::printf("smoke %-20s %-7s %7.2fs %s%s%s\n", r.check.c_str(), word, r.seconds,
                r.implementation.empty() ? "-" : r.implementation.c_str(),
                r.detail.empty() ? "" : absl::StrCat(" ", r.detail).c_str(),
                r.status == "ok" ? "" : absl::StrCat("\n      ", r.status).c_str());
    std::fflush(stdout);
    results.push_back(r);
    // Written after every check: a crash or a timeout keeps what ran.
    const std::string path = absl::GetFlag(FLAGS_json);
    if (!path.empty()) {
      nlohmann::json out = nlohmann::json::array();
      for (const Result& done : results)
        out.push_back({{"check", done.check},
                       {"status", done.status},
                       {"seconds", done.seconds},
                       {"implementation", done.implementation},
                       {"detail", done.detail}});
      std::ofstream(path) << out.dump(1) << "\n";
    }
  }
  if (!gpu) return 2;
  return failed > 0 ? 1 : 0;
}

}  // namespace
}  // namespace cnnbench

int main(int argc, char** argv) { return cnnbench::Main(argc, argv); }
