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

bool Backend::SameLayout(const TensorSpec& a, const TensorSpec& b) const {
  if (a.dtype != b.dtype || a.shape != b.shape || a.layout != b.layout || a.bytes != b.bytes)
    return false;
  if (a.is_plain()) return true;
  return a.native == b.native;
}

}  // namespace cnnbench
