// //bench:cuda_overhead: what the cuda backend's Kernel interface costs over
// cuDNN and cuBLASLt called directly, on a GPU. resnet50's 3x3 convolution
// (256x64x56x56 -> 64, bf16, NHWC: forward, backward data, backward
// filter) and an 8192^3 bf16 GEMM, each run through the backend's Kernel
// and as the vendor library called directly: cudnn-frontend graphs built
// here (heuristics mode A then the fallback list) running the same engine
// configuration our kernel chose, found by its name in the listing, so the
// ratio measures our layer and not the autotuner (where ours is not in the
// listing, the first that builds, and the row says so); cuBLASLt's first
// heuristic algorithm. Both paths are checked to agree on the forward output before
// timing; then each pass is timed with device events (a warm-up, then
// --reps repetitions of --iters calls; the median) and the ratio
// direct/ours of the times, i.e. our speed over the library's, printed per
// pass (the bar: >= 0.95) and written to --json.
//
//   bundle/run.sh cuda_overhead --json=overhead.json      (on a GPU machine)
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <cudnn_frontend.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "core/crash_handler.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/random.h"
#include "core/status.h"
#include "kernels/backends.h"
#include "kernels/desc.h"
#include "kernels/kernel.h"
#include "nlohmann/json.hpp"

ABSL_FLAG(std::string, json, "", "write the ratios here");
ABSL_FLAG(int, iters, 20, "calls per timed repetition");
ABSL_FLAG(int, reps, 5, "timed repetitions (the median counts)");

namespace cnnbench::bench {
namespace {

namespace fe = cudnn_frontend;

#define CHECK_CUDA(expr)                                                             \
  do {                                                                               \
    if (cudaError_t e_ = (expr); e_ != cudaSuccess)                                  \
      return absl::InternalError(absl::StrCat(#expr, ": ", cudaGetErrorString(e_))); \
  } while (0)
#define CHECK_FE(expr)                                                         \
  do {                                                                         \
    if (fe::error_t e_ = (expr); e_.is_bad())                                  \
      return absl::InternalError(absl::StrCat(#expr, ": ", e_.get_message())); \
  } while (0)
#define CHECK_LT(expr)                                                                           \
  do {                                                                                           \
    if (cublasStatus_t e_ = (expr); e_ != CUBLAS_STATUS_SUCCESS)                                 \
      return absl::InternalError(absl::StrCat(#expr, ": cuBLAS status ", static_cast<int>(e_))); \
  } while (0)

// Device memory freed on scope exit.
struct DeviceMemory {
  void* p = nullptr;
  DeviceMemory() = default;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  ~DeviceMemory() {
    if (p != nullptr) cudaFree(p);
  }
  absl::Status Allocate(size_t bytes) {
    if (cudaMalloc(&p, std::max<size_t>(bytes, 1)) != cudaSuccess) {
      cudaGetLastError();
      return OutOfMemoryError(absl::StrCat("cudaMalloc of ", bytes, " bytes"));
    }
    return absl::OkStatus();
  }
};

// Random bf16 values in [-1, 1) (never zeros: they time faster than data).
absl::Status FillRandom(void* device, int64_t count, uint64_t seed) {
  std::vector<uint16_t> host(static_cast<size_t>(count));
  Rng rng(seed);
  for (uint16_t& v : host) v = FloatToBFloat16(static_cast<float>(2 * rng.Uniform() - 1)).bits;
  CHECK_CUDA(cudaMemcpy(device, host.data(), host.size() * 2, cudaMemcpyHostToDevice));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> ReadBf16(const void* device, int64_t count) {
  std::vector<uint16_t> host(static_cast<size_t>(count));
  CHECK_CUDA(cudaMemcpy(host.data(), device, host.size() * 2, cudaMemcpyDeviceToHost));
  std::vector<float> out(host.size());
  for (size_t i = 0; i < host.size(); ++i) out[i] = BFloat16ToFloat(BFloat16{host[i]});
  return out;
}

// ||a - b|| / ||b||.
double RelativeError(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    norm += static_cast<double>(b[i]) * b[i];
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

// The median over `reps` of the mean time of `iters` calls, in ms.
absl::StatusOr<double> TimeMs(const std::function<absl::Status()>& call, cudaStream_t stream) {
  const int iters = std::max(1, absl::GetFlag(FLAGS_iters));
  const int reps = std::max(1, absl::GetFlag(FLAGS_reps));
  cudaEvent_t start = nullptr, stop = nullptr;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  std::vector<double> times;
  absl::Status status = call();  // warm-up
  for (int r = 0; r < reps && status.ok(); ++r) {
    if (cudaEventRecord(start, stream) != cudaSuccess) status = absl::InternalError("record");
    for (int i = 0; i < iters && status.ok(); ++i) status = call();
    if (status.ok() &&
        (cudaEventRecord(stop, stream) != cudaSuccess || cudaEventSynchronize(stop) != cudaSuccess))
      status = absl::InternalError(cudaGetErrorString(cudaGetLastError()));
    float ms = 0;
    if (status.ok() && cudaEventElapsedTime(&ms, start, stop) == cudaSuccess)
      times.push_back(ms / iters);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  RETURN_IF_ERROR(status);
  if (times.empty()) return absl::InternalError("no repetition could be timed");
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

struct Row {
  std::string layer, pass, ours_engine, direct_engine;
  double ours_ms = 0, direct_ms = 0;
};

// Our kernel of `desc` in bf16 with its buffers; the passes by name.
struct OurKernel {
  std::unique_ptr<Kernel> kernel;
  std::vector<std::unique_ptr<DeviceMemory>> memory;
  KernelArgs args;

  absl::Status Create(Backend& backend, const OpDesc& desc) {
    ASSIGN_OR_RETURN(kernel, backend.Create(desc, KernelOptions::ForPrecision(Precision::kBf16),
                                            std::vector<TensorSpec>{}));
    const KernelSignature& s = kernel->signature();
    auto make = [&](size_t bytes, uint64_t seed, bool random) -> absl::StatusOr<void*> {
      memory.push_back(std::make_unique<DeviceMemory>());
      RETURN_IF_ERROR(memory.back()->Allocate(bytes));
      if (random) RETURN_IF_ERROR(FillRandom(memory.back()->p, bytes / 2, seed));
      return memory.back()->p;
    };
    uint64_t seed = 1;
    for (const TensorSpec& t : s.inputs) {
      ASSIGN_OR_RETURN(void* x, make(t.bytes, ++seed, true));
      ASSIGN_OR_RETURN(void* dx, make(t.bytes, 0, false));
      args.x.push_back(x);
      args.dx.push_back(dx);
    }
    for (const TensorSpec& t : s.params) {
      ASSIGN_OR_RETURN(void* p, make(t.bytes, ++seed, true));
      ASSIGN_OR_RETURN(void* dp, make(t.bytes, 0, false));
      args.params.push_back(p);
      args.dparams.push_back(dp);
    }
    ASSIGN_OR_RETURN(args.y, make(s.output.bytes, 0, false));
    ASSIGN_OR_RETURN(void* dy, make(s.output.bytes, ++seed, true));
    args.dy = dy;
    ASSIGN_OR_RETURN(args.saved, make(s.saved_bytes, 0, false));
    ASSIGN_OR_RETURN(args.scratch, make(s.scratch_bytes, 0, false));
    return absl::OkStatus();
  }
};

// Our convolution's engine per pass, from its implementation()
// ("cudnn:fprop=<engine>,dgrad=<engine>,wgrad=<engine>", an engine possibly
// followed by " (...)" or "+cuda:epilogue(...)").
std::vector<std::string> OurConvEngines(const std::string& implementation) {
  std::vector<std::string> engines;
  for (const char* key : {"fprop=", "dgrad=", "wgrad="}) {
    const size_t at = implementation.find(key);
    std::string engine;
    if (at != std::string::npos) {
      engine = implementation.substr(at + std::strlen(key));
      engine = engine.substr(0, engine.find_first_of(", +"));
    }
    engines.push_back(engine);
  }
  return engines;
}

// resnet50's 3x3 convolution, NHWC bf16, as three cudnn-frontend graphs
// built here, each running `engines[pass]` (our kernel's choice) where the
// heuristics list it, else the first that builds (no timing either way).
class DirectConv {
 public:
  absl::Status Build(const ConvDesc& d, cudnnHandle_t cudnn,
                     const std::vector<std::string>& engines) {
    const std::vector<int64_t> x_dims = {d.n, d.c, d.h.in, d.w.in},
                               w_dims = {d.k, d.c, d.h.kernel, d.w.kernel},
                               y_dims = {d.n, d.k, d.h.out, d.w.out};
    auto nhwc = [](const std::vector<int64_t>& v) {
      return std::vector<int64_t>{v[1] * v[2] * v[3], 1, v[3] * v[1], v[1]};
    };
    const std::vector<int64_t> pre = {d.h.pad_before, d.w.pad_before},
                               post = {d.h.pad_after, d.w.pad_after},
                               stride = {d.h.stride, d.w.stride}, dilation = {1, 1};
    for (int pass = 0; pass < 3; ++pass) {
      auto g = std::make_shared<fe::graph::Graph>();
      g->set_io_data_type(fe::DataType_t::BFLOAT16)
          .set_intermediate_data_type(fe::DataType_t::FLOAT)
          .set_compute_data_type(fe::DataType_t::FLOAT);
      auto tensor = [&](const char* name, int64_t uid, const std::vector<int64_t>& dims) {
        return g->tensor(
            fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim(dims).set_stride(
                nhwc(dims)));
      };
      std::shared_ptr<fe::graph::Tensor_attributes> out;
      std::vector<int64_t> out_dims;
      if (pass == 0) {
        out = g->conv_fprop(tensor("x", 1, x_dims), tensor("w", 2, w_dims),
                            fe::graph::Conv_fprop_attributes()
                                .set_pre_padding(pre)
                                .set_post_padding(post)
                                .set_stride(stride)
                                .set_dilation(dilation));
        out->set_uid(3);
        out_dims = y_dims;
      } else if (pass == 1) {
        out = g->conv_dgrad(tensor("dy", 3, y_dims), tensor("w", 2, w_dims),
                            fe::graph::Conv_dgrad_attributes()
                                .set_pre_padding(pre)
                                .set_post_padding(post)
                                .set_stride(stride)
                                .set_dilation(dilation));
        out->set_uid(1);
        out_dims = x_dims;
      } else {
        out = g->conv_wgrad(tensor("dy", 3, y_dims), tensor("x", 1, x_dims),
                            fe::graph::Conv_wgrad_attributes()
                                .set_pre_padding(pre)
                                .set_post_padding(post)
                                .set_stride(stride)
                                .set_dilation(dilation));
        out->set_uid(2);
        out_dims = w_dims;
      }
      out->set_output(true).set_dim(out_dims).set_stride(nhwc(out_dims));
      CHECK_FE(g->validate());
      CHECK_FE(g->build_operation_graph(cudnn));
      CHECK_FE(g->create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}));
      // The numerics the backend allows bf16 (its engines' choice differs
      // only in being timed).
      g->deselect_numeric_notes({fe::NumericalNote_t::REDUCED_PRECISION_REDUCTION,
                                 fe::NumericalNote_t::DOWN_CONVERT_INPUTS});
      const int64_t count = g->get_execution_plan_count();
      int64_t chosen = -1;
      for (int64_t i = 0; i < count && chosen < 0; ++i) {
        std::string name;
        if (g->get_plan_name_at_index(i, name).is_good() && name == engines[pass] &&
            g->build_plan_at_index(i).is_good())
          chosen = i;
      }
      same_[pass] = chosen >= 0;
      for (int64_t i = 0; i < count && chosen < 0; ++i)
        if (g->build_plan_at_index(i).is_good()) chosen = i;
      if (chosen < 0)
        return absl::UnimplementedError(
            absl::StrCat("unsupported: no engine of the direct conv's pass ", pass, " builds"));
      CHECK_FE(g->get_plan_name_at_index(chosen, names_[pass]));
      CHECK_FE(g->prepare_variant_pack_template());
      int64_t bytes = 0;
      CHECK_FE(g->get_workspace_size_plan_at_index(chosen, bytes));
      workspace_bytes_ = std::max(workspace_bytes_, bytes);
      graphs_[pass] = g;
      plans_[pass] = chosen;
    }
    return workspace_.Allocate(static_cast<size_t>(workspace_bytes_));
  }

  // pass 0: y from x, w; 1: dx from dy, w; 2: dw from x, dy.
  absl::Status Run(int pass, cudnnHandle_t cudnn, void* x, void* w, void* y) {
    std::unordered_map<int64_t, void*> pack = {{1, x}, {2, w}, {3, y}};
    CHECK_FE(graphs_[pass]->execute_plan_at_index(cudnn, pack, workspace_.p, plans_[pass]));
    return absl::OkStatus();
  }

  // For the row: the engine this pass runs and whether it is ours.
  std::string Label(int pass) const {
    return same_[pass] ? absl::StrCat("the same engine (", names_[pass], ")")
                       : absl::StrCat("heuristics' first that builds (", names_[pass],
                                      "; ours is not in its listing)");
  }

 private:
  std::shared_ptr<fe::graph::Graph> graphs_[3];
  int64_t plans_[3] = {-1, -1, -1};
  bool same_[3] = {false, false, false};
  std::string names_[3];
  int64_t workspace_bytes_ = 0;
  DeviceMemory workspace_;
};

// Row-major y(M,N) = a(M,K) b(K,N) in bf16 as one cuBLASLt matmul in
// column-major terms (y^T = b^T a^T), cuBLASLt's first heuristic algorithm.
class DirectGemm {
 public:
  ~DirectGemm() {
    if (pref_ != nullptr) cublasLtMatmulPreferenceDestroy(pref_);
    for (cublasLtMatrixLayout_t l : {a_, b_, c_})
      if (l != nullptr) cublasLtMatrixLayoutDestroy(l);
    if (op_ != nullptr) cublasLtMatmulDescDestroy(op_);
  }
  absl::Status Build(const GemmDesc& d, cublasLtHandle_t lt) {
    CHECK_LT(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CHECK_LT(cublasLtMatrixLayoutCreate(&a_, CUDA_R_16BF, d.n, d.k, d.n));  // b, (N,K) col-major
    CHECK_LT(cublasLtMatrixLayoutCreate(&b_, CUDA_R_16BF, d.k, d.m, d.k));  // a, (K,M) col-major
    CHECK_LT(cublasLtMatrixLayoutCreate(&c_, CUDA_R_16BF, d.n, d.m, d.n));  // y, (N,M) col-major
    CHECK_LT(cublasLtMatmulPreferenceCreate(&pref_));
    size_t limit = size_t{32} << 20;
    CHECK_LT(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                  &limit, sizeof(limit)));
    int found = 0;
    CHECK_LT(
        cublasLtMatmulAlgoGetHeuristic(lt, op_, a_, b_, c_, c_, pref_, 1, &heuristic_, &found));
    if (found < 1) return absl::UnimplementedError("unsupported: no cuBLASLt algorithm");
    return workspace_.Allocate(heuristic_.workspaceSize);
  }
  absl::Status Run(cublasLtHandle_t lt, const void* a, const void* b, void* y,
                   cudaStream_t stream) {
    const float one = 1, zero = 0;
    CHECK_LT(cublasLtMatmul(lt, op_, &one, b, a_, a, b_, &zero, y, c_, y, c_, &heuristic_.algo,
                            workspace_.p, heuristic_.workspaceSize, stream));
    return absl::OkStatus();
  }

 private:
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic_{};
  DeviceMemory workspace_;
};

// The convolution: ours (x, w -> y; dy, w -> dx; x, dy -> dw) and direct,
// on the same buffers, outputs compared, then each pass timed both ways.
absl::Status RunConv(Backend& backend, cudnnHandle_t cudnn, cudaStream_t stream,
                     std::vector<Row>* rows) {
  const ConvDesc conv = *ConvDesc::Parse("conv:mb256_ic64oc64_ih56oh56kh3sh1ph1_iw56ow56kw3sw1pw1");
  OurKernel ours;
  RETURN_IF_ERROR(ours.Create(backend, conv));
  DirectConv direct;
  RETURN_IF_ERROR(direct.Build(conv, cudnn, OurConvEngines(ours.kernel->implementation())));
  void* x = const_cast<void*>(ours.args.x[0]);
  void* w = ours.args.params[0];
  DeviceMemory y_direct, dx_direct, dw_direct;
  RETURN_IF_ERROR(y_direct.Allocate(ours.kernel->signature().output.bytes));
  RETURN_IF_ERROR(dx_direct.Allocate(ours.kernel->signature().inputs[0].bytes));
  RETURN_IF_ERROR(dw_direct.Allocate(ours.kernel->signature().params[0].bytes));
  // Every pass of both paths once, outputs compared, before any timing.
  const auto& sig = ours.kernel->signature();
  auto elements = [](const TensorSpec& t) { return t.shape.num_elements(); };
  RETURN_IF_ERROR(ours.kernel->Forward(ours.args));
  RETURN_IF_ERROR(ours.kernel->BackwardData(ours.args));
  RETURN_IF_ERROR(ours.kernel->BackwardWeights(ours.args));
  RETURN_IF_ERROR(direct.Run(0, cudnn, x, w, y_direct.p));
  RETURN_IF_ERROR(direct.Run(1, cudnn, dx_direct.p, w, const_cast<void*>(ours.args.dy)));
  RETURN_IF_ERROR(direct.Run(2, cudnn, x, dw_direct.p, const_cast<void*>(ours.args.dy)));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  const struct {
    const char* what;
    const void* ours;
    const void* lib;
    int64_t count;
  } outputs[] = {{"forward y", ours.args.y, y_direct.p, elements(sig.output)},
                 {"backward dx", ours.args.dx[0], dx_direct.p, elements(sig.inputs[0])},
                 {"backward dw", ours.args.dparams[0], dw_direct.p, elements(sig.params[0])}};
  for (const auto& o : outputs) {
    ASSIGN_OR_RETURN(std::vector<float> a, ReadBf16(o.ours, o.count));
    ASSIGN_OR_RETURN(std::vector<float> b, ReadBf16(o.lib, o.count));
    const double error = RelativeError(a, b);
    std::printf("conv %s: ours vs direct, relative error %.2e\n", o.what, error);
    if (!(error < 1e-2))
      return absl::InternalError(
          absl::StrCat("conv ", o.what, " disagrees: relative error ", error));
  }
  const std::string conv_name = "conv3x3 " + conv.ToString();
  struct ConvPass {
    const char* name;
    std::function<absl::Status()> ours, direct;
  };
  const ConvPass passes[] = {
      {"fwd", [&] { return ours.kernel->Forward(ours.args); },
       [&] { return direct.Run(0, cudnn, x, w, y_direct.p); }},
      {"bwd_data", [&] { return ours.kernel->BackwardData(ours.args); },
       [&] { return direct.Run(1, cudnn, dx_direct.p, w, const_cast<void*>(ours.args.dy)); }},
      {"bwd_filter", [&] { return ours.kernel->BackwardWeights(ours.args); },
       [&] { return direct.Run(2, cudnn, x, dw_direct.p, const_cast<void*>(ours.args.dy)); }},
  };
  for (int pass = 0; pass < 3; ++pass) {
    const ConvPass& p = passes[pass];
    Row row{conv_name, p.name, ours.kernel->implementation(), direct.Label(pass)};
    ASSIGN_OR_RETURN(row.ours_ms, TimeMs(p.ours, stream));
    ASSIGN_OR_RETURN(row.direct_ms, TimeMs(p.direct, stream));
    rows->push_back(row);
  }
  return absl::OkStatus();
}

// The GEMM: ours (a, b -> y) and direct, outputs compared, then timed.
absl::Status RunGemm(Backend& backend, cublasLtHandle_t lt, cudaStream_t stream,
                     std::vector<Row>* rows) {
  const GemmDesc gemm = *GemmDesc::Parse("gemm:m8192n8192k8192");
  OurKernel ours_gemm;
  RETURN_IF_ERROR(ours_gemm.Create(backend, gemm));
  DirectGemm direct_gemm;
  RETURN_IF_ERROR(direct_gemm.Build(gemm, lt));
  DeviceMemory y_gemm;
  RETURN_IF_ERROR(y_gemm.Allocate(ours_gemm.kernel->signature().output.bytes));
  const void* a = ours_gemm.args.x[0];
  const void* b = ours_gemm.args.x[1];
  RETURN_IF_ERROR(ours_gemm.kernel->Forward(ours_gemm.args));
  RETURN_IF_ERROR(direct_gemm.Run(lt, a, b, y_gemm.p, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  ASSIGN_OR_RETURN(std::vector<float> g_ours, ReadBf16(ours_gemm.args.y, gemm.m * gemm.n));
  ASSIGN_OR_RETURN(std::vector<float> g_lib, ReadBf16(y_gemm.p, gemm.m * gemm.n));
  const double gemm_error = RelativeError(g_ours, g_lib);
  std::printf("gemm: ours vs direct, relative error %.2e\n", gemm_error);
  if (!(gemm_error < 1e-2))
    return absl::InternalError(absl::StrCat("gemm outputs disagree: relative error ", gemm_error));
  Row row{"gemm " + gemm.ToString(), "fwd", ours_gemm.kernel->implementation(),
          "cublasLt heuristic #1"};
  ASSIGN_OR_RETURN(row.ours_ms,
                   TimeMs([&] { return ours_gemm.kernel->Forward(ours_gemm.args); }, stream));
  ASSIGN_OR_RETURN(row.direct_ms,
                   TimeMs([&] { return direct_gemm.Run(lt, a, b, y_gemm.p, stream); }, stream));
  rows->push_back(row);
  return absl::OkStatus();
}

absl::Status Run(std::vector<Row>* rows) {
  ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, CreateBackend("cuda", Device::Cuda(0)));
  cudaStream_t stream = static_cast<cudaStream_t>(backend->stream().native_handle());
  cudnnHandle_t cudnn = nullptr;
  cublasLtHandle_t lt = nullptr;
  if (cudnnCreate(&cudnn) != CUDNN_STATUS_SUCCESS) return absl::InternalError("cudnnCreate");
  std::unique_ptr<cudnnContext, decltype(&cudnnDestroy)> cudnn_owner(cudnn, cudnnDestroy);
  if (cudnnSetStream(cudnn, stream) != CUDNN_STATUS_SUCCESS)
    return absl::InternalError("cudnnSetStream");
  CHECK_LT(cublasLtCreate(&lt));
  std::unique_ptr<cublasLtContext, decltype(&cublasLtDestroy)> lt_owner(lt, cublasLtDestroy);
  RETURN_IF_ERROR(RunConv(*backend, cudnn, stream, rows));
  return RunGemm(*backend, lt, stream, rows);
}

int Main(int argc, char** argv) {
  InstallCrashHandler(argv[0]);
  absl::ParseCommandLine(argc, argv);
  nlohmann::json out = nlohmann::json::array();
  std::vector<Row> rows;
  absl::Status status =
      CudaDeviceCount() == 0 ? absl::UnimplementedError("unsupported: no GPU visible") : Run(&rows);
  std::printf("%-64s %-10s %10s %10s %12s\n", "layer", "pass", "ours ms", "direct ms",
              "direct/ours");
  for (const Row& r : rows) {
    std::printf("%-64s %-10s %10.3f %10.3f %12.3f\n", r.layer.c_str(), r.pass.c_str(), r.ours_ms,
                r.direct_ms, r.direct_ms / r.ours_ms);
    out.push_back({{"layer", r.layer},
                   {"pass", r.pass},
                   {"ours_ms", r.ours_ms},
                   {"direct_ms", r.direct_ms},
                   {"ratio", r.direct_ms / r.ours_ms},
                   {"ours_engine", r.ours_engine},
                   {"direct_engine", r.direct_engine}});
  }
  if (!status.ok()) {
    std::printf("cuda_overhead: %s\n", std::string(status.message()).c_str());
    out.push_back({{"skipped", std::string(status.message())}});
  }
  const std::string path = absl::GetFlag(FLAGS_json);
  if (!path.empty()) std::ofstream(path) << out.dump(1) << "\n";
  return status.ok() || absl::IsUnimplemented(status) ? 0 : 1;
}

}  // namespace
}  // namespace cnnbench::bench

int main(int argc, char** argv) { return cnnbench::bench::Main(argc, argv); }
