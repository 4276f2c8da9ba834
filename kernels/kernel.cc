#include "kernels/kernel.h"

#include "absl/strings/str_cat.h"

namespace cnnbench {

TensorSpec TensorSpec::Plain(DType dtype, Shape shape) {
  TensorSpec spec;
  spec.dtype = dtype;
  spec.layout = shape.rank() == 4 ? Layout::kNCHW : shape.rank() == 2 ? Layout::kNC : Layout::kX;
  spec.bytes = static_cast<size_t>(shape.num_elements()) * SizeOf(dtype);
  spec.shape = std::move(shape);
  return spec;
}

std::string TensorSpec::DebugString() const {
  return absl::StrCat(DTypeName(dtype), shape.ToString(), " ", LayoutName(layout), " ", bytes,
                      "B");
}

}  // namespace cnnbench
