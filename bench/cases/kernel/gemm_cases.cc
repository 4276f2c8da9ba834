// gemm/<precision>/<device>/gemm:m<M>n<N>k<K>[_ta][_tb]: a square sweep and
// the kernel models' fc layers as GEMMs (forward: y(N,OC) = x(N,IC) w(OC,IC)^T,
// so m<N>n<OC>k<IC>_tb) through the backend's GEMM op (what a precision
// cannot run there skips with the backend's reason), each result checked
// against dot products in the same run; on the CPU and, where one is
// visible, on a GPU (cuBLASLt). The check multiplies small integers (exact
// in every precision); on a GPU, whose GEMM rate depends on the data (13%
// between zeros and random values was measured on Hopper), the timed
// operands are random values in [-1, 1) and the integer check runs in a
// launch of its own outside the timing. The CPU cases time the integers:
// oneDNN's rate does not depend on the values.
#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/harness/harness.h"
#include "bench/suite/names.h"
#include "bench/suite/suite.h"
#include "benchmark/benchmark.h"
#include "core/device.h"
#include "core/random.h"
#include "core/status.h"
#include "kernels/desc.h"
#include "kernels/kernel.h"
#include "models/graph.h"

namespace cnnbench::bench {
namespace {

class GemmWorkload : public Workload {
 public:
  static absl::StatusOr<std::unique_ptr<Workload>> Prepare(const GemmDesc& desc,
                                                           Precision precision,
                                                           const Device& device_of_case,
                                                           const SuiteOptions& options) {
    std::unique_ptr<GemmWorkload> w(new GemmWorkload(desc));
    ASSIGN_OR_RETURN(w->backend_, CreateCaseBackend(options, device_of_case));
    ASSIGN_OR_RETURN(w->kernel_,
                     w->backend_->Create(OpDesc(desc), KernelOptions::ForPrecision(precision), {}));
    const KernelSignature& sig = w->kernel_->signature();
    const Device device = w->backend_->device();
    const bool random_timed = !device.is_cpu();
    Rng rng(0x6e6d6d);
    // Small integers: exact in every precision, and so are the fp32 sums.
    for (size_t i = 0; i < 2; ++i) {
      const TensorSpec& spec = sig.inputs[i];
      std::vector<float>& host = i == 0 ? w->a_ : w->b_;
      host.resize(spec.shape.num_elements());
      for (size_t j = 0; j < host.size(); ++j)
        host[j] = static_cast<float>(j % (i == 0 ? 7 : 5)) - (i == 0 ? 3 : 2);
      ASSIGN_OR_RETURN(Buffer b, Buffer::Allocate(device, spec.bytes));
      RETURN_IF_ERROR(w->backend_->Upload(TensorSpec::Plain(DType::kF32, spec.shape), host.data(),
                                          spec, b.data()));
      w->check_args_.x.push_back(b.data());
      w->buffers_.push_back(std::move(b));
      if (!random_timed) continue;
      std::vector<float> values(host.size());
      for (float& v : values) v = static_cast<float>(2 * rng.Uniform() - 1);
      ASSIGN_OR_RETURN(Buffer t, Buffer::Allocate(device, spec.bytes));
      RETURN_IF_ERROR(w->backend_->Upload(TensorSpec::Plain(DType::kF32, spec.shape),
                                          values.data(), spec, t.data()));
      w->args_.x.push_back(t.data());
      w->buffers_.push_back(std::move(t));
    }
    if (!random_timed) w->args_.x = w->check_args_.x;
    w->random_timed_ = random_timed;
    ASSIGN_OR_RETURN(Buffer c, Buffer::Allocate(device, sig.output.bytes));
    ASSIGN_OR_RETURN(Buffer scratch,
                     Buffer::Allocate(device, std::max<size_t>(sig.scratch_bytes, 64)));
    w->args_.y = w->check_args_.y = c.data();
    w->args_.scratch = w->check_args_.scratch = scratch.data();
    w->buffers_.push_back(std::move(c));
    w->buffers_.push_back(std::move(scratch));
    RETURN_IF_ERROR(w->Check());
    return std::unique_ptr<Workload>(std::move(w));
  }

  const Stream& stream() const override { return backend_->stream(); }
  absl::Status Run() override { return kernel_->Forward(args_); }

  absl::Status Report(benchmark::State& state) override {
    RETURN_IF_ERROR(Check());  // the timed kernel computes the right thing
    state.counters["flops"] =
        benchmark::Counter(desc_.Flops(), benchmark::Counter::kIsIterationInvariantRate);
    state.SetLabel(absl::StrCat(kernel_->implementation(),
                                random_timed_ ? ", random operands timed, result checked on "
                                                "integers in a launch of its own"
                                              : ", result checked"));
    return absl::OkStatus();
  }

 private:
  explicit GemmWorkload(const GemmDesc& desc) : desc_(desc) {}

  // Runs the kernel on the integer operands (outside any timing) and checks
  // three rows of the last column against their dot products: exact in
  // fp32; within the output's rounding in bf16 and fp16.
  absl::Status Check() {
    RETURN_IF_ERROR(kernel_->Forward(check_args_));
    const KernelSignature& sig = kernel_->signature();
    const int64_t m = desc_.m, n = desc_.n, k = desc_.k;
    std::vector<float> out(m * n);
    RETURN_IF_ERROR(backend_->stream().Synchronize());
    RETURN_IF_ERROR(backend_->Download(
        sig.output, args_.y, TensorSpec::Plain(DType::kF32, sig.output.shape), out.data()));
    // The output's rounding, relative: none in fp32, 2^-11 in fp16, 2^-8 in bf16.
    const double tolerance = sig.output.dtype == DType::kF32   ? 0
                             : sig.output.dtype == DType::kF16 ? 1.0 / 2048
                                                               : 1.0 / 256;
    // op(A)(i,p) and op(B)(p,j) from the stored (possibly transposed) inputs.
    auto a = [&](int64_t i, int64_t p) -> double {
      return desc_.transpose_a ? a_[p * m + i] : a_[i * k + p];
    };
    auto b = [&](int64_t p, int64_t j) -> double {
      return desc_.transpose_b ? b_[j * k + p] : b_[p * n + j];
    };
    for (int64_t row : {int64_t{0}, m / 2, m - 1}) {
      double expect = 0;
      for (int64_t p = 0; p < k; ++p) expect += a(row, p) * b(p, n - 1);
      const double got = out[row * n + n - 1];
      if (std::fabs(got - expect) > tolerance * std::fabs(expect))
        return absl::InternalError(absl::StrCat(desc_.ToString(), ": result check failed at row ",
                                                row, ": ", got, " vs ", expect));
    }
    return absl::OkStatus();
  }

  GemmDesc desc_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Kernel> kernel_;  // after backend_: destroyed first
  std::vector<float> a_, b_;        // the integer inputs as uploaded
  std::vector<Buffer> buffers_;
  KernelArgs args_;        // what is timed: random operands on a GPU, the integers on the CPU
  KernelArgs check_args_;  // the integer operands, the same output and scratch
  bool random_timed_ = false;
};

}  // namespace

absl::Status RegisterGemmCases(const SuiteOptions& options, Harness& harness) {
  std::vector<GemmDesc> shapes;
  std::set<std::string> seen;
  for (int64_t s : options.kernel.gemm_sizes) {
    const GemmDesc square{s, s, s, false, false};
    if (seen.insert(square.ToString()).second) shapes.push_back(square);
  }
  // The fc layers of the kernel models at the kernel batch, as the layer
  // cases build them.
  for (const std::string& model : options.kernel.models) {
    ASSIGN_OR_RETURN(Graph graph, KernelModelGraph(options, model));
    for (const Node& node : graph.nodes)
      if (const auto* fc = std::get_if<FcDesc>(&node.op);
          fc != nullptr && node.kind == Node::Kind::kOp) {
        const GemmDesc gemm = fc->AsGemm();
        if (seen.insert(gemm.ToString()).second) shapes.push_back(gemm);
      }
  }
  for (const std::string& device_name : KernelDevices(options)) {
    ASSIGN_OR_RETURN(const Device device, Device::Parse(device_name));
    for (const GemmDesc& desc : shapes) {
      for (const std::string& precision_name : options.precisions) {
        ASSIGN_OR_RETURN(Precision precision, ParsePrecision(precision_name));
        TimedCase timed;
        timed.name = KernelCaseName(Family::kGemm, "", precision_name, device_name,
                                    desc.ToString());
        timed.family = FamilyName(Family::kGemm);
        timed.unit = benchmark::kMillisecond;
        timed.prepare = [desc, precision, device, &options] {
          return GemmWorkload::Prepare(desc, precision, device, options);
        };
        harness.Register(std::move(timed));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace cnnbench::bench
