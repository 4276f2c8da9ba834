#include "tests/kernels/cuda/cuda_test_util.h"

#include <variant>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/reference/reference_backend.h"
#include "tests/kernels/gradient_check.h"

namespace cnnbench::cuda_test {
namespace {

std::string& Reason() {
  static std::string reason;
  return reason;
}

std::vector<double> Values(const Shape& shape, uint64_t seed, const CompareOptions& o) {
  TensorSpec spec = TensorSpec::Plain(DType::kF64, shape);
  std::vector<double> values(static_cast<size_t>(shape.num_elements()));
  if (o.integers) {
    kernel_test::FillIntegers(spec, values.data(), seed, o.low, o.high);
  } else {
    kernel_test::FillUniform(spec, values.data(), seed, static_cast<double>(o.low),
                             static_cast<double>(o.high));
  }
  return values;
}

TensorSpec HostSpec(const TensorSpec& spec) {
  return TensorSpec::Plain(spec.dtype == DType::kI32 ? DType::kI32 : DType::kF32, spec.shape);
}

}  // namespace

Backend* Cuda() {
  static Backend* backend = []() -> Backend* {
    if (CudaDeviceCount() == 0) {
      Reason() = "no GPU";
      return nullptr;
    }
    auto created = CreateCudaBackend(Device::Cuda(0));
    if (!created.ok()) {
      Reason() = std::string(created.status().message());
      return nullptr;
    }
    return created->release();
  }();
  return backend;
}

std::string NoGpuReason() {
  Cuda();
  return Reason();
}

Backend* Reference() {
  static Backend* backend = CreateReferenceBackend().release();
  return backend;
}

KernelArgs DeviceBuffers::Args(bool training) const {
  KernelArgs a;
  for (const Buffer& b : x) a.x.push_back(b.data());
  a.y = y.data();
  for (const Buffer& b : params) a.params.push_back(b.data());
  for (const Buffer& b : state) a.state.push_back(b.data());
  a.saved = saved.data();
  a.scratch = scratch.data();
  a.dy = dy.data();
  for (const Buffer& b : dx) a.dx.push_back(b.data());
  for (const Buffer& b : dparams) a.dparams.push_back(b.data());
  a.training = training;
  return a;
}

absl::StatusOr<DeviceBuffers> AllocateFor(const KernelSignature& sig) {
  const Device gpu = Device::Cuda(0);
  DeviceBuffers b;
  for (const TensorSpec& s : sig.inputs) {
    ASSIGN_OR_RETURN(Buffer x, Buffer::Allocate(gpu, s.bytes));
    ASSIGN_OR_RETURN(Buffer dx, Buffer::Allocate(gpu, s.bytes));
    b.x.push_back(std::move(x));
    b.dx.push_back(std::move(dx));
  }
  for (const TensorSpec& s : sig.params) {
    ASSIGN_OR_RETURN(Buffer p, Buffer::Allocate(gpu, s.bytes));
    ASSIGN_OR_RETURN(Buffer dp, Buffer::Allocate(gpu, s.bytes));
    b.params.push_back(std::move(p));
    b.dparams.push_back(std::move(dp));
  }
  for (const TensorSpec& s : sig.state) {
    ASSIGN_OR_RETURN(Buffer st, Buffer::Allocate(gpu, s.bytes));
    b.state.push_back(std::move(st));
  }
  ASSIGN_OR_RETURN(b.y, Buffer::Allocate(gpu, sig.output.bytes));
  ASSIGN_OR_RETURN(b.dy, Buffer::Allocate(gpu, sig.output.bytes));
  ASSIGN_OR_RETURN(b.saved, Buffer::Allocate(gpu, sig.saved_bytes));
  ASSIGN_OR_RETURN(b.scratch, Buffer::Allocate(gpu, sig.scratch_bytes));
  return b;
}

absl::Status Write(const TensorSpec& spec, void* device, const std::vector<double>& values,
                   Backend* backend) {
  const TensorSpec host = HostSpec(spec);
  if (static_cast<int64_t>(values.size()) != host.shape.num_elements())
    return absl::InvalidArgumentError("Write: wrong number of values");
  std::vector<char> bytes(host.bytes);
  RETURN_IF_ERROR(kernel_test::FromDoubles(host, bytes.data(), values));
  return (backend != nullptr ? backend : Cuda())->Upload(host, bytes.data(), spec, device);
}

absl::StatusOr<std::vector<double>> Read(const TensorSpec& spec, const void* device,
                                         Backend* backend) {
  const TensorSpec host = HostSpec(spec);
  std::vector<char> bytes(host.bytes);
  RETURN_IF_ERROR(
      (backend != nullptr ? backend : Cuda())->Download(spec, device, host, bytes.data()));
  return kernel_test::ToDoubles(host, bytes.data());
}

absl::Status Poison(const Buffer& buffer, Backend* backend) {
  if (buffer.data() == nullptr || buffer.size() == 0) return absl::OkStatus();
  if (backend == nullptr) backend = Cuda();
  RETURN_IF_ERROR(backend->Fill(buffer.data(), 0xff, buffer.size()));
  return backend->stream().Synchronize();
}

absl::Status CompareWithReference(const OpDesc& desc, const CompareOptions& o) {
  if (Cuda() == nullptr) return absl::FailedPreconditionError(NoGpuReason());
  const std::string name = OpDescToString(desc);
  // The truth in fp64, plain layouts.
  std::vector<TensorSpec> ref_inputs;
  for (const TensorSpec& spec : o.cuda_inputs)
    ref_inputs.push_back(spec.dtype == DType::kI32 ? spec
                                                   : TensorSpec::Plain(DType::kF64, spec.shape));
  ASSIGN_OR_RETURN(kernel_test::KernelUnderTest ref,
                   kernel_test::CreateKernelUnderTest(*Reference(), desc, DType::kF64, ref_inputs));
  KernelOptions options = KernelOptions::ForPrecision(o.precision);
  options.forward_only = !o.backward;  // an inference plan's kernel
  Backend* const cuda = o.backend != nullptr ? o.backend : Cuda();
  ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, cuda->Create(desc, options, o.cuda_inputs));
  const KernelSignature& rs = ref.kernel->signature();
  const KernelSignature& cs = kernel->signature();
  if (rs.inputs.size() != cs.inputs.size() || rs.params.size() != cs.params.size() ||
      rs.state.size() != cs.state.size())
    return absl::InternalError(absl::StrCat(name, ": signatures differ in arity"));
  ASSIGN_OR_RETURN(DeviceBuffers dev, AllocateFor(cs));

  auto set_both = [&](const TensorSpec& rspec, const Buffer& rbuf, const TensorSpec& cspec,
                      const Buffer& cbuf, const std::vector<double>& values) -> absl::Status {
    RETURN_IF_ERROR(kernel_test::FromDoubles(rspec, rbuf.data(), values));
    return Write(cspec, cbuf.data(), values, cuda);
  };
  auto compare = [&](const std::string& what, const TensorSpec& cspec, const Buffer& cbuf,
                     const TensorSpec& rspec, const Buffer& rbuf, double rtol,
                     double atol) -> absl::Status {
    RETURN_IF_ERROR(cuda->stream().Synchronize());
    ASSIGN_OR_RETURN(std::vector<double> actual, Read(cspec, cbuf.data(), cuda));
    return kernel_test::CompareTensors(absl::StrCat(name, " ", what), actual,
                                       kernel_test::ToDoubles(rspec, rbuf.data()), rtol, atol);
  };

  uint64_t seed = o.seed * 1000;
  for (size_t i = 0; i < rs.inputs.size(); ++i) {
    std::vector<double> values;
    if (rs.inputs[i].dtype == DType::kI32) {  // labels
      const auto* xent = std::get_if<SoftmaxXentDesc>(&desc);
      TensorSpec spec = TensorSpec::Plain(DType::kF64, rs.inputs[i].shape);
      values.resize(static_cast<size_t>(spec.shape.num_elements()));
      kernel_test::FillIntegers(spec, values.data(), ++seed, 0, xent ? xent->classes - 1 : 0);
    } else {
      values = Values(rs.inputs[i].shape, ++seed, o);
    }
    RETURN_IF_ERROR(set_both(rs.inputs[i], ref.buffers.x[i], cs.inputs[i], dev.x[i], values));
  }
  for (size_t i = 0; i < rs.params.size(); ++i)
    RETURN_IF_ERROR(set_both(rs.params[i], ref.buffers.params[i], cs.params[i], dev.params[i],
                             Values(rs.params[i].shape, ++seed, o)));
  for (size_t i = 0; i < rs.state.size(); ++i) {  // running variance must stay positive
    CompareOptions positive = o;
    positive.integers = true;
    positive.low = 1;
    positive.high = 4;
    RETURN_IF_ERROR(set_both(rs.state[i], ref.buffers.state[i], cs.state[i], dev.state[i],
                             Values(rs.state[i].shape, ++seed, positive)));
  }

  RETURN_IF_ERROR(Poison(dev.y, cuda));
  RETURN_IF_ERROR(Poison(dev.saved, cuda));
  RETURN_IF_ERROR(Poison(dev.scratch, cuda));
  RETURN_IF_ERROR(ref.kernel->Forward(ref.buffers.Args(o.training)));
  RETURN_IF_ERROR(kernel->Forward(dev.Args(o.training)));
  RETURN_IF_ERROR(compare("forward y", cs.output, dev.y, rs.output, ref.buffers.y, o.forward_rtol,
                          o.forward_atol));
  for (size_t i = 0; i < rs.state.size(); ++i)
    RETURN_IF_ERROR(compare(absl::StrCat("forward state ", i), cs.state[i], dev.state[i],
                            rs.state[i], ref.buffers.state[i], o.forward_rtol, o.forward_atol));
  if (!o.backward) return absl::OkStatus();

  RETURN_IF_ERROR(
      set_both(rs.output, ref.buffers.dy, cs.output, dev.dy, Values(rs.output.shape, ++seed, o)));
  for (const Buffer& b : dev.dx) RETURN_IF_ERROR(Poison(b, cuda));
  RETURN_IF_ERROR(Poison(dev.scratch, cuda));
  RETURN_IF_ERROR(ref.kernel->BackwardData(ref.buffers.Args(o.training)));
  RETURN_IF_ERROR(kernel->BackwardData(dev.Args(o.training)));
  for (size_t i = 0; i < rs.inputs.size(); ++i) {
    if (rs.inputs[i].dtype == DType::kI32) continue;
    RETURN_IF_ERROR(compare(absl::StrCat("backward dx", i), cs.inputs[i], dev.dx[i], rs.inputs[i],
                            ref.buffers.dx[i], o.backward_rtol, o.backward_atol));
  }
  if (rs.params.empty()) return absl::OkStatus();
  for (const Buffer& b : dev.dparams) RETURN_IF_ERROR(Poison(b, cuda));
  RETURN_IF_ERROR(Poison(dev.scratch, cuda));
  RETURN_IF_ERROR(ref.kernel->BackwardWeights(ref.buffers.Args(o.training)));
  RETURN_IF_ERROR(kernel->BackwardWeights(dev.Args(o.training)));
  for (size_t i = 0; i < rs.params.size(); ++i)
    RETURN_IF_ERROR(compare(absl::StrCat("backward dparam", i), cs.params[i], dev.dparams[i],
                            rs.params[i], ref.buffers.dparams[i], o.backward_rtol,
                            o.backward_atol));
  return absl::OkStatus();
}

}  // namespace cnnbench::cuda_test
