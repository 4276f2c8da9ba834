// Tensor: a non-owning view (dtype, shape, layout, device, data pointer) over
// memory that the executor or a test owns.
#ifndef CNNBENCH_CORE_TENSOR_H_
#define CNNBENCH_CORE_TENSOR_H_

#include <cstddef>
#include <string>

#include "core/device.h"
#include "core/dtype.h"
#include "core/shape.h"

namespace cnnbench {

class Tensor {
 public:
  Tensor() = default;
  Tensor(void* data, DType dtype, Shape shape, Layout layout = Layout::kNCHW,
         Device device = Device::Cpu())
      : data_(data), dtype_(dtype), shape_(std::move(shape)), layout_(layout), device_(device) {}

  void* data() const { return data_; }
  template <typename T>
  T* data_as() const {
    return static_cast<T*>(data_);
  }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  Layout layout() const { return layout_; }
  const Device& device() const { return device_; }

  int64_t num_elements() const { return shape_.num_elements(); }
  size_t num_bytes() const { return static_cast<size_t>(num_elements()) * SizeOf(dtype_); }

  // "fp32[32,64,56,56] nchw @cpu"
  std::string DebugString() const;

 private:
  void* data_ = nullptr;
  DType dtype_ = DType::kF32;
  Shape shape_;
  Layout layout_ = Layout::kNCHW;
  Device device_;
};

}  // namespace cnnbench

#endif  // CNNBENCH_CORE_TENSOR_H_
