#include "core/tensor.h"

#include "absl/strings/str_cat.h"

namespace cnnbench {

std::string Tensor::DebugString() const {
  return absl::StrCat(DTypeName(dtype_), shape_.ToString(), " ", LayoutName(layout_), " @",
                      device_.ToString());
}

}  // namespace cnnbench
