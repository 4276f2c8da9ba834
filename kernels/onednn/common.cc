#include "kernels/onednn/common.h"

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/onednn_isa.h"
#include "core/random.h"

namespace cnnbench {
namespace onednn {

using dnnl::memory;

bool CpuHasBf16() { return OnednnHasBf16(); }

absl::Status ErrorFromDnnl(const dnnl::error& e, absl::string_view what) {
  std::string message = absl::StrCat(what, ": oneDNN: ", e.what());
  switch (e.status) {
    case dnnl_unimplemented:
      return absl::UnimplementedError(absl::StrCat("unsupported: ", message));
    case dnnl_out_of_memory:
      return OutOfMemoryError(message);
    case dnnl_invalid_arguments:
      return absl::InvalidArgumentError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::StatusOr<memory::data_type> ToDnnlType(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return memory::data_type::f32;
    case DType::kBF16:
      return memory::data_type::bf16;
    case DType::kF16:
      return memory::data_type::f16;
    case DType::kI32:
      return memory::data_type::s32;
    case DType::kU8:
      return memory::data_type::u8;
    default:
      return absl::UnimplementedError(
          absl::StrCat("unsupported: oneDNN has no ", DTypeName(dtype), " tensors"));
  }
}

memory::format_tag PlainTag(int rank) {
  switch (rank) {
    case 1:
      return memory::format_tag::a;
    case 2:
      return memory::format_tag::ab;
    case 3:
      return memory::format_tag::abc;
    case 4:
      return memory::format_tag::abcd;
    case 5:
      return memory::format_tag::abcde;
    default:
      return memory::format_tag::undef;
  }
}

memory::desc PlainDesc(const memory::dims& dims, memory::data_type type) {
  return memory::desc(dims, type, PlainTag(static_cast<int>(dims.size())));
}

memory::desc AnyDesc(const memory::dims& dims, memory::data_type type) {
  return memory::desc(dims, type, memory::format_tag::any);
}

const memory::desc* NativeDesc(const TensorSpec& spec) {
  if (spec.is_plain()) return nullptr;
  return static_cast<const memory::desc*>(spec.native.get());
}

absl::StatusOr<memory::desc> DescFromSpec(const TensorSpec& spec, const memory::dims& dims,
                                          absl::string_view role, absl::string_view what) {
  auto error = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", role, " spec ", spec.DebugString(), ": ", why));
  };
  int64_t elements = 1;
  for (int64_t d : dims) elements *= d;
  if (spec.shape.num_elements() != elements)
    return error(
        absl::StrCat("expected ", elements, " elements as (", absl::StrJoin(dims, ","), ")"));
  ASSIGN_OR_RETURN(memory::data_type type, ToDnnlType(spec.dtype));
  if (!spec.is_plain()) {
    const memory::desc* native = NativeDesc(spec);
    if (native == nullptr) return error("blocked layout without a oneDNN descriptor");
    if (native->dims() != dims)
      return error(absl::StrCat("its oneDNN descriptor has dims (",
                                absl::StrJoin(native->dims(), ","), "), expected (",
                                absl::StrJoin(dims, ","), ")"));
    if (native->data_type() != type) return error("its oneDNN descriptor has another type");
    if (native->get_size() != spec.bytes)
      return error(absl::StrCat("bytes ", spec.bytes, " but its oneDNN descriptor needs ",
                                native->get_size()));
    return *native;
  }
  if (spec.bytes != 0 && spec.bytes < static_cast<size_t>(elements) * SizeOf(spec.dtype))
    return error("fewer bytes than elements");
  if (spec.layout == Layout::kNHWC) {
    if (dims.size() != 4) return error("NHWC needs rank 4");
    return memory::desc(dims, type, memory::format_tag::nhwc);
  }
  if (PlainTag(static_cast<int>(dims.size())) == memory::format_tag::undef)
    return error("unsupported rank");
  return PlainDesc(dims, type);
}

absl::Status CheckInputCount(const std::vector<TensorSpec>& inputs, size_t count,
                             absl::string_view what) {
  if (!inputs.empty() && inputs.size() != count)
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", inputs.size(), " input specs given, expected ", count));
  return absl::OkStatus();
}

absl::StatusOr<const TensorSpec*> GivenInput(const std::vector<TensorSpec>& inputs, size_t i,
                                             DType dtype, const Shape& shape,
                                             absl::string_view what) {
  if (inputs.empty()) return nullptr;
  const TensorSpec& spec = inputs[i];
  if (spec.dtype != dtype || spec.shape != shape)
    return absl::InvalidArgumentError(absl::StrCat(what, ": input ", i, " spec ",
                                                   spec.DebugString(), " should be ",
                                                   DTypeName(dtype), shape.ToString()));
  return &spec;
}

memory::dims ToDims(const Shape& shape) {
  return memory::dims(shape.dims().begin(), shape.dims().end());
}

bool IsReferenceKernel(const dnnl::primitive_desc_base& pd) {
  return absl::string_view(pd.impl_info_str()).substr(0, 4) == "ref:";
}

TensorSpec SpecFromDesc(const memory::desc& desc, DType dtype, Shape shape) {
  if (desc == PlainDesc(desc.dims(), desc.data_type())) {
    return TensorSpec::Plain(dtype, std::move(shape));
  }
  TensorSpec spec;
  spec.dtype = dtype;
  spec.shape = std::move(shape);
  spec.layout = Layout::kBlocked;
  spec.bytes = desc.get_size();
  spec.native = std::make_shared<const memory::desc>(desc);
  return spec;
}

dnnl::primitive_attr UserScratchpadAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

std::vector<EltwiseActivation> OneDnnActivationSteps(ActivationKind kind, bool use_dst) {
  using dnnl::algorithm;
  switch (kind) {
    case ActivationKind::kNone:
    case ActivationKind::kCount:
    case ActivationKind::kRelu:
      break;
    case ActivationKind::kRelu6:
      return {{use_dst ? algorithm::eltwise_clip_v2_use_dst_for_bwd : algorithm::eltwise_clip_v2,
               0.0f, 6.0f}};
    case ActivationKind::kSigmoid:
      return {{use_dst ? algorithm::eltwise_logistic_use_dst_for_bwd : algorithm::eltwise_logistic,
               0.0f, 0.0f}};
    case ActivationKind::kSilu:
      return {{algorithm::eltwise_swish, 1.0f, 0.0f}};
    case ActivationKind::kHardSigmoid:
      return {{algorithm::eltwise_clip_v2, -3.0f, 3.0f},
              {algorithm::eltwise_linear, 1.0f / 6.0f, 0.5f}};
    case ActivationKind::kHardSwish:
      return {{algorithm::eltwise_hardswish, 0.0f, 0.0f}};
    case ActivationKind::kGelu:
      return {{algorithm::eltwise_gelu_erf, 0.0f, 0.0f}};
    case ActivationKind::kGeluTanh:
      return {{algorithm::eltwise_gelu_tanh, 0.0f, 0.0f}};
  }
  return {
      {use_dst ? algorithm::eltwise_relu_use_dst_for_bwd : algorithm::eltwise_relu, 0.0f, 0.0f}};
}

EltwiseActivation OneDnnActivation(ActivationKind kind, bool use_dst) {
  return OneDnnActivationSteps(kind, use_dst).front();
}

dnnl::primitive_attr UserScratchpadActivationAttr(ActivationKind kind) {
  return UserScratchpadEpilogueAttr(/*sum=*/false, kind);
}

dnnl::primitive_attr UserScratchpadEpilogueAttr(bool sum, ActivationKind kind) {
  dnnl::post_ops ops;
  if (sum) ops.append_sum(1.0f);
  if (kind != ActivationKind::kNone)
    for (const EltwiseActivation& step : OneDnnActivationSteps(kind, /*use_dst=*/false))
      ops.append_eltwise(1.0f, step.algorithm, step.alpha, step.beta);
  dnnl::primitive_attr attr = UserScratchpadAttr();
  attr.set_post_ops(ops);
  return attr;
}

BoundPrimitive::BoundPrimitive(const dnnl::primitive_desc_base& pd, dnnl::primitive primitive,
                               const std::vector<int>& arg_ids, const dnnl::engine& engine)
    : valid_(true), primitive_(std::move(primitive)) {
  for (int id : arg_ids) {
    memory::desc desc = pd.query_md(dnnl::query::exec_arg_md, id);
    descs_.emplace(id, desc);
    args_.emplace(id, memory(desc, engine, DNNL_MEMORY_NONE));
  }
  memory::desc scratchpad = pd.scratchpad_desc();
  scratchpad_bytes_ = scratchpad.get_size();
  if (scratchpad_bytes_ > 0)
    args_.emplace(DNNL_ARG_SCRATCHPAD, memory(scratchpad, engine, DNNL_MEMORY_NONE));
  implementation_ = pd.impl_info_str();
  for (const auto& [id, m] : args_) exec_args_.push_back({id, m.get()});
}

void BoundPrimitive::SetScratchpad(void* scratch) {
  if (scratchpad_bytes_ > 0) args_.at(DNNL_ARG_SCRATCHPAD).set_data_handle(scratch);
}

void BoundPrimitive::Execute(dnnl::stream& stream) const {
  dnnl::error::wrap_c_api(
      dnnl_primitive_execute(primitive_.get(), stream.get(), static_cast<int>(exec_args_.size()),
                             exec_args_.data()),
      "could not execute a primitive");
  stream.wait();
}

double TimeExecution(const Context& context, BoundPrimitive& primitive,
                     const std::vector<int>& args, int runs) {
  std::vector<memory> buffers;
  Rng rng(1);
  auto uniform = [&rng] { return static_cast<float>(2 * rng.Uniform() - 1); };  // [-1, 1)
  for (int arg : args) {
    const memory::desc& desc = primitive.desc(arg);
    buffers.emplace_back(desc, context.engine);
    void* data = buffers.back().get_data_handle();
    const size_t bytes = desc.get_size();
    if (desc.data_type() == memory::data_type::f32) {
      float* f = static_cast<float*>(data);
      for (size_t i = 0; i < bytes / 4; ++i) f[i] = uniform();
    } else if (desc.data_type() == memory::data_type::bf16) {
      uint16_t* h = static_cast<uint16_t*>(data);
      for (size_t i = 0; i < bytes / 2; ++i) {
        const float v = uniform();
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        h[i] = static_cast<uint16_t>(bits >> 16);
      }
    } else {
      std::memset(data, 0, bytes);
    }
    primitive.Set(arg, data);
  }
  std::unique_ptr<char[], void (*)(void*)> scratch(nullptr, std::free);
  if (primitive.scratchpad_bytes() > 0) {
    scratch.reset(
        static_cast<char*>(std::aligned_alloc(64, AlignUp(primitive.scratchpad_bytes()))));
    if (scratch == nullptr) throw std::bad_alloc();
    std::memset(scratch.get(), 0, primitive.scratchpad_bytes());
    primitive.SetScratchpad(scratch.get());
  }
  dnnl::stream stream(context.engine);
  double best = 0;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    primitive.Execute(stream);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (i == 0 || seconds < best) best = seconds;
  }
  return best;
}

BoundPrimitive MakeReorder(const Context& context, const memory::desc& from,
                           const memory::desc& to) {
  dnnl::reorder::primitive_desc pd(context.engine, from, context.engine, to, UserScratchpadAttr());
  return BoundPrimitive(pd, dnnl::reorder(pd), {DNNL_ARG_FROM, DNNL_ARG_TO}, context.engine);
}

absl::Status OneDnnKernel::Require(const void* pointer, absl::string_view name) const {
  if (pointer == nullptr)
    return absl::InvalidArgumentError(absl::StrCat(what_, ": ", name, " is null"));
  return absl::OkStatus();
}

absl::StatusOr<const void*> OneDnnKernel::Input(const KernelArgs& args, size_t i) const {
  if (i >= args.x.size() || args.x[i] == nullptr)
    return absl::InvalidArgumentError(absl::StrCat(what_, ": input x", i, " is missing"));
  return args.x[i];
}

absl::StatusOr<void*> OneDnnKernel::Param(const std::vector<void*>& list, size_t i,
                                          absl::string_view name) const {
  if (i >= list.size() || list[i] == nullptr)
    return absl::InvalidArgumentError(absl::StrCat(what_, ": ", name, " is missing"));
  return list[i];
}

absl::Status OneDnnKernel::RequireScratch(const KernelArgs& args) const {
  if (signature_.scratch_bytes > 0 && args.scratch == nullptr)
    return absl::InvalidArgumentError(
        absl::StrCat(what_, ": scratch (", signature_.scratch_bytes, " bytes) is null"));
  return absl::OkStatus();
}

absl::Status OneDnnKernel::RequireSaved(const KernelArgs& args) const {
  if (signature_.saved_bytes > 0 && args.saved == nullptr)
    return absl::InvalidArgumentError(
        absl::StrCat(what_, ": saved (", signature_.saved_bytes, " bytes) is null"));
  return absl::OkStatus();
}

}  // namespace onednn
}  // namespace cnnbench
