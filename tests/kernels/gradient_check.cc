// Kernel test helpers and the finite-difference gradient check.
#include "tests/kernels/gradient_check.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/status.h"

namespace cnnbench {
namespace kernel_test {
namespace {

// NaN in fp32 and fp64 alike (all bits set), so any read of it shows up.
void Poison(void* data, size_t bytes) {
  if (data != nullptr && bytes > 0) std::memset(data, 0xFF, bytes);
}

bool IsFloatingSpec(const TensorSpec& spec) {
  return spec.dtype == DType::kF32 || spec.dtype == DType::kF64;
}

absl::StatusOr<Buffer> AllocateLike(const TensorSpec& spec) {
  return Buffer::Allocate(Device::Cpu(), spec.bytes);
}

double Uniform(std::mt19937_64& rng, double low, double high) {
  const double unit = static_cast<double>(rng() >> 11) * 0x1.0p-53;  // [0, 1)
  return low + (high - low) * unit;
}

// Evenly spread element indices: all of them when `limit` is 0 or enough.
std::vector<int64_t> SampleIndices(int64_t count, int64_t limit) {
  std::vector<int64_t> out;
  if (limit <= 0 || count <= limit) {
    for (int64_t i = 0; i < count; ++i) out.push_back(i);
    return out;
  }
  for (int64_t j = 0; j < limit; ++j) out.push_back(limit == 1 ? 0 : j * (count - 1) / (limit - 1));
  return out;
}

}  // namespace

KernelArgs KernelBuffers::Args(bool training) const {
  KernelArgs args;
  for (const Buffer& b : x) args.x.push_back(b.data());
  for (const Buffer& b : dx) args.dx.push_back(b.data());
  for (const Buffer& b : params) args.params.push_back(b.data());
  for (const Buffer& b : dparams) args.dparams.push_back(b.data());
  for (const Buffer& b : state) args.state.push_back(b.data());
  args.y = y.data();
  args.dy = dy.data();
  args.saved = signature.saved_bytes > 0 ? saved.data() : nullptr;
  args.scratch = signature.scratch_bytes > 0 ? scratch.data() : nullptr;
  args.training = training;
  return args;
}

absl::StatusOr<KernelBuffers> AllocateBuffers(const KernelSignature& signature) {
  KernelBuffers b;
  b.signature = signature;
  for (const TensorSpec& spec : signature.inputs) {
    ASSIGN_OR_RETURN(Buffer x, AllocateLike(spec));
    ASSIGN_OR_RETURN(Buffer dx, AllocateLike(spec));
    b.x.push_back(std::move(x));
    b.dx.push_back(std::move(dx));
  }
  for (const TensorSpec& spec : signature.params) {
    ASSIGN_OR_RETURN(Buffer p, AllocateLike(spec));
    ASSIGN_OR_RETURN(Buffer dp, AllocateLike(spec));
    b.params.push_back(std::move(p));
    b.dparams.push_back(std::move(dp));
  }
  for (const TensorSpec& spec : signature.state) {
    ASSIGN_OR_RETURN(Buffer s, AllocateLike(spec));
    b.state.push_back(std::move(s));
  }
  ASSIGN_OR_RETURN(b.y, AllocateLike(signature.output));
  ASSIGN_OR_RETURN(b.dy, AllocateLike(signature.output));
  ASSIGN_OR_RETURN(b.saved, Buffer::Allocate(Device::Cpu(), signature.saved_bytes));
  ASSIGN_OR_RETURN(b.scratch, Buffer::Allocate(Device::Cpu(), signature.scratch_bytes));
  return b;
}

absl::StatusOr<KernelUnderTest> CreateKernelUnderTest(Backend& backend, const OpDesc& desc,
                                                      DType dtype,
                                                      const std::vector<TensorSpec>& inputs) {
  return CreateKernelUnderTest(backend, desc, KernelOptions::ForDType(dtype), inputs);
}

absl::StatusOr<KernelUnderTest> CreateKernelUnderTest(Backend& backend, const OpDesc& desc,
                                                      const KernelOptions& options,
                                                      const std::vector<TensorSpec>& inputs) {
  KernelUnderTest out;
  ASSIGN_OR_RETURN(out.kernel, backend.Create(desc, options, inputs));
  ASSIGN_OR_RETURN(out.buffers, AllocateBuffers(out.kernel->signature()));
  return out;
}

double GetElement(const TensorSpec& spec, const void* data, int64_t i) {
  switch (spec.dtype) {
    case DType::kF32:
      return static_cast<const float*>(data)[i];
    case DType::kF64:
      return static_cast<const double*>(data)[i];
    case DType::kI32:
      return static_cast<const int32_t*>(data)[i];
    default:
      return std::nan("");
  }
}

void SetElement(const TensorSpec& spec, void* data, int64_t i, double value) {
  switch (spec.dtype) {
    case DType::kF32:
      static_cast<float*>(data)[i] = static_cast<float>(value);
      break;
    case DType::kF64:
      static_cast<double*>(data)[i] = value;
      break;
    case DType::kI32:
      static_cast<int32_t*>(data)[i] = static_cast<int32_t>(value);
      break;
    default:
      break;
  }
}

std::vector<double> ToDoubles(const TensorSpec& spec, const void* data) {
  std::vector<double> out(static_cast<size_t>(spec.shape.num_elements()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = GetElement(spec, data, i);
  return out;
}

absl::Status FromDoubles(const TensorSpec& spec, void* data, const std::vector<double>& values) {
  if (static_cast<int64_t>(values.size()) != spec.shape.num_elements())
    return absl::InvalidArgumentError(
        absl::StrCat(values.size(), " values for ", spec.DebugString()));
  for (size_t i = 0; i < values.size(); ++i) SetElement(spec, data, i, values[i]);
  return absl::OkStatus();
}

void FillUniform(const TensorSpec& spec, void* data, uint64_t seed, double low, double high) {
  std::mt19937_64 rng(seed);
  for (int64_t i = 0; i < spec.shape.num_elements(); ++i)
    SetElement(spec, data, i, Uniform(rng, low, high));
}

void FillIntegers(const TensorSpec& spec, void* data, uint64_t seed, int64_t low, int64_t high) {
  std::mt19937_64 rng(seed);
  const uint64_t span = static_cast<uint64_t>(high - low + 1);
  for (int64_t i = 0; i < spec.shape.num_elements(); ++i)
    SetElement(spec, data, i, static_cast<double>(low + static_cast<int64_t>(rng() % span)));
}

void FillDefaults(KernelBuffers& b, uint64_t seed) {
  const KernelSignature& sig = b.signature;
  uint64_t stream = seed * 1000;
  for (size_t i = 0; i < sig.inputs.size(); ++i)
    if (IsFloatingSpec(sig.inputs[i])) FillUniform(sig.inputs[i], b.x[i].data(), ++stream, -1, 1);
  for (size_t j = 0; j < sig.params.size(); ++j)
    FillUniform(sig.params[j], b.params[j].data(), ++stream, -1, 1);
  for (size_t k = 0; k < sig.state.size(); ++k)
    FillUniform(sig.state[k], b.state[k].data(), ++stream, 0.5, 1.5);
}

absl::Status CompareTensors(absl::string_view what, const std::vector<double>& actual,
                            const std::vector<double>& expected, double rtol, double atol) {
  if (actual.size() != expected.size())
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", actual.size(), " values, expected ", expected.size()));
  int64_t bad = 0;
  size_t worst = 0;
  double worst_excess = -1.0;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double limit = atol + rtol * std::fabs(expected[i]);
    const double diff = std::fabs(actual[i] - expected[i]);
    if (!(diff <= limit)) {  // NaN fails too
      ++bad;
      const double excess = std::isnan(diff) ? INFINITY : diff - limit;
      if (excess > worst_excess) {
        worst_excess = excess;
        worst = i;
      }
    }
  }
  if (bad == 0) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, ": ", bad, " of ", actual.size(),
                                          " values differ; worst [", worst, "]: ", actual[worst],
                                          " vs expected ", expected[worst], " (rtol ", rtol,
                                          ", atol ", atol, ")"));
}

absl::Status CheckGradients(Kernel& kernel, KernelBuffers& b, const GradientCheckOptions& o) {
  const KernelSignature& sig = b.signature;
  auto plain = [](const TensorSpec& s) { return s.is_plain(); };
  if (!plain(sig.output) || !std::all_of(sig.inputs.begin(), sig.inputs.end(), plain) ||
      !std::all_of(sig.params.begin(), sig.params.end(), plain))
    return absl::UnimplementedError("gradient check needs plain layouts (reorder first)");

  // The objective's weights r, which are also dy.
  const int64_t outputs = sig.output.shape.num_elements();
  std::vector<double> r(static_cast<size_t>(outputs), 1.0);
  if (o.unit_output_gradient) {
    if (outputs != 1)
      return absl::InvalidArgumentError("unit_output_gradient needs a scalar output");
  } else {
    std::mt19937_64 rng(o.seed);
    for (double& v : r) v = Uniform(rng, -1.0, 1.0);
  }
  RETURN_IF_ERROR(FromDoubles(sig.output, b.dy.data(), r));

  // The analytic gradients, with everything the signature says is not read
  // (or is overwritten) filled with NaN.
  const KernelArgs args = b.Args(o.training);
  Poison(args.saved, sig.saved_bytes);
  Poison(args.scratch, sig.scratch_bytes);
  RETURN_IF_ERROR(kernel.Forward(args));
  std::vector<std::vector<char>> kept_inputs(sig.inputs.size());
  if (!sig.backward_reads_inputs)
    for (size_t i = 0; i < sig.inputs.size(); ++i)
      if (IsFloatingSpec(sig.inputs[i])) {
        const char* p = static_cast<const char*>(b.x[i].data());
        kept_inputs[i].assign(p, p + sig.inputs[i].bytes);
        Poison(b.x[i].data(), sig.inputs[i].bytes);
      }
  if (!sig.backward_reads_output) Poison(b.y.data(), sig.output.bytes);
  for (size_t i = 0; i < sig.inputs.size(); ++i) Poison(b.dx[i].data(), sig.inputs[i].bytes);
  for (size_t j = 0; j < sig.params.size(); ++j) Poison(b.dparams[j].data(), sig.params[j].bytes);
  Poison(args.scratch, sig.scratch_bytes);
  absl::Status backward = kernel.BackwardData(args);
  Poison(args.scratch, sig.scratch_bytes);
  if (backward.ok()) backward = kernel.BackwardWeights(args);
  for (size_t i = 0; i < sig.inputs.size(); ++i)
    if (!kept_inputs[i].empty())
      std::memcpy(b.x[i].data(), kept_inputs[i].data(), kept_inputs[i].size());
  RETURN_IF_ERROR(backward);

  // What to differentiate: floating inputs not skipped, and every param.
  struct Target {
    std::string name;
    const TensorSpec* spec;
    void* data;
    std::vector<double> analytic;
  };
  std::vector<Target> targets;
  for (size_t i = 0; i < sig.inputs.size(); ++i) {
    if (!IsFloatingSpec(sig.inputs[i]) ||
        std::count(o.skip_inputs.begin(), o.skip_inputs.end(), static_cast<int>(i)) > 0)
      continue;
    targets.push_back({absl::StrCat("dx", i), &sig.inputs[i], b.x[i].data(),
                       ToDoubles(sig.inputs[i], b.dx[i].data())});
  }
  for (size_t j = 0; j < sig.params.size(); ++j)
    targets.push_back({absl::StrCat("dparam", j), &sig.params[j], b.params[j].data(),
                       ToDoubles(sig.params[j], b.dparams[j].data())});

  auto objective = [&]() -> absl::StatusOr<double> {
    Kernel* run = &kernel;
    std::unique_ptr<Kernel> fresh;
    if (o.fresh_kernel) {
      ASSIGN_OR_RETURN(fresh, o.fresh_kernel());
      run = fresh.get();
    }
    RETURN_IF_ERROR(run->Forward(b.Args(o.training)));
    double sum = 0.0;
    for (int64_t i = 0; i < outputs; ++i) sum += GetElement(sig.output, b.y.data(), i) * r[i];
    return sum;
  };

  int64_t checked = 0, bad = 0;
  std::string report;
  for (Target& t : targets) {
    const std::vector<int64_t> indices =
        SampleIndices(t.spec->shape.num_elements(), o.max_elements_per_tensor);
    std::vector<double> numeric;
    for (int64_t i : indices) {
      const double original = GetElement(*t.spec, t.data, i);
      SetElement(*t.spec, t.data, i, original + o.step);
      const double up = GetElement(*t.spec, t.data, i);  // as stored (fp32 rounds)
      absl::StatusOr<double> plus = objective();
      SetElement(*t.spec, t.data, i, original - o.step);
      const double down = GetElement(*t.spec, t.data, i);
      absl::StatusOr<double> minus = objective();
      SetElement(*t.spec, t.data, i, original);
      if (!plus.ok()) return plus.status();
      if (!minus.ok()) return minus.status();
      numeric.push_back((*plus - *minus) / (up - down));
    }
    double scale = 0.0;
    for (double v : numeric) scale = std::max(scale, std::fabs(v));
    for (size_t s = 0; s < indices.size(); ++s) {
      const double analytic = t.analytic[indices[s]], fd = numeric[s];
      const double limit = o.tolerance * std::max(std::fabs(fd), 0.01 * scale) + 1e-9;
      ++checked;
      if (!(std::fabs(analytic - fd) <= limit)) {
        if (++bad <= 8)
          absl::StrAppend(&report, "\n  ", t.name, "[", indices[s], "]: analytic ", analytic,
                          ", finite difference ", fd, " (limit ", limit, ")");
      }
    }
  }
  // Restore the forward's outputs and saved state at the unperturbed point.
  RETURN_IF_ERROR(objective().status());
  if (bad > 0)
    return absl::InternalError(absl::StrCat(
        bad, " of ", checked, " gradient entries differ from finite differences:", report));
  return absl::OkStatus();
}

}  // namespace kernel_test
}  // namespace cnnbench
