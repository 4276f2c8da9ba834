#include "tests/kernels/onednn_test_util.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <variant>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "gtest/gtest.h"
#include "kernels/onednn/onednn_backend.h"
#include "kernels/reference/reference_backend.h"

namespace cnnbench {
namespace onednn_test {
namespace {

using kernel_test::KernelUnderTest;

TensorSpec PlainF32(const TensorSpec& spec) { return TensorSpec::Plain(DType::kF32, spec.shape); }

std::vector<double> Fill(const Shape& shape, uint64_t seed, const CompareOptions& o) {
  return o.integers
             ? IntegerValues(shape, seed, o.low, o.high)
             : RealValues(shape, seed, static_cast<double>(o.low), static_cast<double>(o.high));
}

// Writes the same values into the reference's plain buffer and the oneDNN
// kernel's buffer (in its layout).
absl::Status SetBoth(const TensorSpec& ref_spec, const Buffer& ref, const TensorSpec& dnn_spec,
                     const Buffer& dnn, const std::vector<double>& values) {
  RETURN_IF_ERROR(kernel_test::FromDoubles(ref_spec, ref.data(), values));
  return WritePlain(dnn_spec, dnn.data(), values);
}

absl::Status Compare(absl::string_view what, const TensorSpec& dnn_spec, const Buffer& dnn,
                     const TensorSpec& ref_spec, const Buffer& ref, double rtol, double atol) {
  ASSIGN_OR_RETURN(std::vector<double> actual, ReadPlain(dnn_spec, dnn.data()));
  return kernel_test::CompareTensors(what, actual, kernel_test::ToDoubles(ref_spec, ref.data()),
                                     rtol, atol);
}

}  // namespace

Backend* OneDnn() {
  static Backend* backend = [] {
    // Direct convolution: the exact comparisons on integers assume it (the
    // other algorithms are tested with their own tolerances).
    OneDnnOptions options;
    options.conv_algorithm = CpuConvAlgorithm::kDirect;
    auto created = CreateOneDnnBackend(options);
    if (!created.ok()) {
      std::fprintf(stderr, "CreateOneDnnBackend: %s\n", created.status().ToString().c_str());
      return static_cast<Backend*>(nullptr);
    }
    return created->release();
  }();
  return backend;
}

Backend* Reference() {
  static Backend* backend = CreateReferenceBackend().release();
  return backend;
}

std::vector<double> IntegerValues(const Shape& shape, uint64_t seed, int64_t low, int64_t high) {
  TensorSpec spec = TensorSpec::Plain(DType::kF64, shape);
  std::vector<double> values(static_cast<size_t>(shape.num_elements()));
  kernel_test::FillIntegers(spec, values.data(), seed, low, high);
  return values;
}

std::vector<double> RealValues(const Shape& shape, uint64_t seed, double low, double high) {
  TensorSpec spec = TensorSpec::Plain(DType::kF64, shape);
  std::vector<double> values(static_cast<size_t>(shape.num_elements()));
  kernel_test::FillUniform(spec, values.data(), seed, low, high);
  return values;
}

void Poison(const Buffer& buffer) {
  if (buffer.data() != nullptr) std::memset(buffer.data(), 0xff, buffer.size());
}

absl::StatusOr<std::vector<double>> ReadPlain(const TensorSpec& spec, const void* data) {
  if (spec.is_plain() && spec.layout != Layout::kNHWC &&
      (spec.dtype == DType::kF32 || spec.dtype == DType::kI32))
    return kernel_test::ToDoubles(spec, data);
  const TensorSpec plain = PlainF32(spec);
  std::vector<float> values(static_cast<size_t>(plain.shape.num_elements()));
  RETURN_IF_ERROR(OneDnn()->Reorder(spec, data, plain, values.data()));
  return std::vector<double>(values.begin(), values.end());
}

absl::Status WritePlain(const TensorSpec& spec, void* data, const std::vector<double>& values) {
  if (spec.is_plain() && spec.layout != Layout::kNHWC &&
      (spec.dtype == DType::kF32 || spec.dtype == DType::kI32))
    return kernel_test::FromDoubles(spec, data, values);
  const TensorSpec plain = PlainF32(spec);
  if (static_cast<int64_t>(values.size()) != plain.shape.num_elements())
    return absl::InvalidArgumentError("WritePlain: wrong number of values");
  std::vector<float> floats(values.begin(), values.end());
  return OneDnn()->Reorder(plain, floats.data(), spec, data);
}

TensorSpec ConvOutputSpec(int64_t n, int64_t k, int64_t hw, DType dtype) {
  ConvDesc conv;
  conv.n = n;
  conv.c = 8;
  conv.k = k;
  conv.h = MakeWindowDim(hw, 1, 1, Padding::kValid).value();
  conv.w = conv.h;
  auto kernel = OneDnn()->Create(conv, dtype, {});
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  return kernel.ok() ? (*kernel)->signature().output : TensorSpec();
}

absl::Status CompareWithReference(const OpDesc& desc, const CompareOptions& o) {
  Backend* onednn = o.onednn != nullptr ? o.onednn : OneDnn();
  if (onednn == nullptr) return absl::InternalError("no oneDNN backend");
  const std::string name = OpDescToString(desc);
  std::vector<TensorSpec> ref_inputs;
  for (const TensorSpec& spec : o.onednn_inputs)
    ref_inputs.push_back(spec.dtype == DType::kI32 ? spec : PlainF32(spec));
  KernelOptions ref_options = KernelOptions::ForDType(DType::kF32);
  KernelOptions dnn_options = KernelOptions::ForDType(o.dtype);
  ref_options.forward_only = dnn_options.forward_only = o.forward_only;
  ASSIGN_OR_RETURN(KernelUnderTest ref,
                   kernel_test::CreateKernelUnderTest(*Reference(), desc, ref_options, ref_inputs));
  ASSIGN_OR_RETURN(KernelUnderTest dnn,
                   kernel_test::CreateKernelUnderTest(*onednn, desc, dnn_options, o.onednn_inputs));
  const KernelSignature& rs = ref.kernel->signature();
  const KernelSignature& ds = dnn.kernel->signature();
  if (rs.inputs.size() != ds.inputs.size() || rs.params.size() != ds.params.size() ||
      rs.state.size() != ds.state.size())
    return absl::InternalError(absl::StrCat(name, ": signatures differ in arity"));
  for (size_t i = 0; i < ds.params.size(); ++i)
    if (ds.params[i].shape != rs.params[i].shape)
      return absl::InternalError(absl::StrCat(name, ": param ", i, " shape ",
                                              ds.params[i].DebugString(), " vs reference ",
                                              rs.params[i].DebugString()));

  uint64_t seed = o.seed * 1000;
  for (size_t i = 0; i < rs.inputs.size(); ++i) {
    std::vector<double> values;
    if (rs.inputs[i].dtype == DType::kI32) {  // labels
      const auto* xent = std::get_if<SoftmaxXentDesc>(&desc);
      values = IntegerValues(rs.inputs[i].shape, ++seed, 0, xent ? xent->classes - 1 : 0);
    } else {
      values = Fill(rs.inputs[i].shape, ++seed, o);
    }
    RETURN_IF_ERROR(
        SetBoth(rs.inputs[i], ref.buffers.x[i], ds.inputs[i], dnn.buffers.x[i], values));
  }
  for (size_t i = 0; i < rs.params.size(); ++i)
    RETURN_IF_ERROR(SetBoth(rs.params[i], ref.buffers.params[i], ds.params[i],
                            dnn.buffers.params[i], Fill(rs.params[i].shape, ++seed, o)));
  for (size_t i = 0; i < rs.state.size(); ++i)  // running variance must stay positive
    RETURN_IF_ERROR(SetBoth(rs.state[i], ref.buffers.state[i], ds.state[i], dnn.buffers.state[i],
                            IntegerValues(rs.state[i].shape, ++seed, 1, 4)));

  Poison(dnn.buffers.y);
  Poison(dnn.buffers.saved);
  Poison(dnn.buffers.scratch);
  KernelArgs ref_args = ref.buffers.Args(o.training), dnn_args = dnn.buffers.Args(o.training);
  if (const int k = o.y_over_input; k >= 0) {
    if (k >= static_cast<int>(rs.inputs.size()) || ds.inputs[k].bytes != ds.output.bytes ||
        rs.inputs[k].bytes != rs.output.bytes || o.forward_calls != 1)
      return absl::InvalidArgumentError(absl::StrCat(name, ": y cannot be input ", k, "'s buffer"));
    std::memcpy(ref.buffers.y.data(), ref.buffers.x[k].data(), rs.output.bytes);
    std::memcpy(dnn.buffers.y.data(), dnn.buffers.x[k].data(), ds.output.bytes);
    ref_args.x[k] = ref_args.y;
    dnn_args.x[k] = dnn_args.y;
  }
  for (int call = 0; call < o.forward_calls; ++call) {
    RETURN_IF_ERROR(ref.kernel->Forward(ref_args));
    RETURN_IF_ERROR(dnn.kernel->Forward(dnn_args));
  }
  RETURN_IF_ERROR(Compare(absl::StrCat(name, " forward y"), ds.output, dnn.buffers.y, rs.output,
                          ref.buffers.y, o.forward_rtol, o.forward_atol));
  for (size_t i = 0; i < rs.state.size(); ++i)
    RETURN_IF_ERROR(Compare(absl::StrCat(name, " forward state ", i), ds.state[i],
                            dnn.buffers.state[i], rs.state[i], ref.buffers.state[i], o.forward_rtol,
                            o.forward_atol));
  if (!o.backward || o.forward_only) return absl::OkStatus();

  RETURN_IF_ERROR(SetBoth(rs.output, ref.buffers.dy, ds.output, dnn.buffers.dy,
                          Fill(rs.output.shape, ++seed, o)));
  for (const Buffer& b : dnn.buffers.dx) Poison(b);
  for (const Buffer& b : dnn.buffers.dparams) Poison(b);
  Poison(dnn.buffers.scratch);
  RETURN_IF_ERROR(ref.kernel->BackwardData(ref.buffers.Args(o.training)));
  RETURN_IF_ERROR(dnn.kernel->BackwardData(dnn.buffers.Args(o.training)));
  for (size_t i = 0; i < rs.inputs.size(); ++i) {
    if (rs.inputs[i].dtype == DType::kI32) continue;
    RETURN_IF_ERROR(Compare(absl::StrCat(name, " backward dx", i), ds.inputs[i], dnn.buffers.dx[i],
                            rs.inputs[i], ref.buffers.dx[i], o.backward_rtol, o.backward_atol));
  }
  if (rs.params.empty()) return absl::OkStatus();
  // dparams from BackwardWeights alone, on fresh (poisoned) buffers.
  for (const Buffer& b : dnn.buffers.dparams) Poison(b);
  Poison(dnn.buffers.scratch);
  RETURN_IF_ERROR(ref.kernel->BackwardWeights(ref.buffers.Args(o.training)));
  RETURN_IF_ERROR(dnn.kernel->BackwardWeights(dnn.buffers.Args(o.training)));
  for (size_t i = 0; i < rs.params.size(); ++i)
    RETURN_IF_ERROR(Compare(absl::StrCat(name, " backward dparam", i), ds.params[i],
                            dnn.buffers.dparams[i], rs.params[i], ref.buffers.dparams[i],
                            o.backward_rtol, o.backward_atol));
  // Both passes in one Backward call (as the executor runs them; a kernel
  // may share work between them there), on fresh (poisoned) buffers.
  for (const Buffer& b : dnn.buffers.dx) Poison(b);
  for (const Buffer& b : dnn.buffers.dparams) Poison(b);
  Poison(dnn.buffers.scratch);
  RETURN_IF_ERROR(dnn.kernel->Backward(dnn.buffers.Args(o.training)));
  for (size_t i = 0; i < rs.inputs.size(); ++i) {
    if (rs.inputs[i].dtype == DType::kI32) continue;
    RETURN_IF_ERROR(Compare(absl::StrCat(name, " Backward dx", i), ds.inputs[i], dnn.buffers.dx[i],
                            rs.inputs[i], ref.buffers.dx[i], o.backward_rtol, o.backward_atol));
  }
  for (size_t i = 0; i < rs.params.size(); ++i)
    RETURN_IF_ERROR(Compare(absl::StrCat(name, " Backward dparam", i), ds.params[i],
                            dnn.buffers.dparams[i], rs.params[i], ref.buffers.dparams[i],
                            o.backward_rtol, o.backward_atol));
  return absl::OkStatus();
}

}  // namespace onednn_test
}  // namespace cnnbench
