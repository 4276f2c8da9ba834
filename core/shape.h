// Shapes and memory layouts of tensors.
#ifndef CNNBENCH_CORE_SHAPE_H_
#define CNNBENCH_CORE_SHAPE_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"

namespace cnnbench {

// NCHW / NHWC for activations, OIHW for conv weights, NC for matrices;
// kBlocked is a backend-private layout that only that backend reads.
enum class Layout { kNCHW, kNHWC, kNC, kOIHW, kX, kBlocked };

absl::string_view LayoutName(Layout layout);
absl::StatusOr<Layout> ParseLayout(absl::string_view name);

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}

  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t dim(int i) const { return dims_[i]; }
  int64_t operator[](int i) const { return dims_[i]; }
  const std::vector<int64_t>& dims() const { return dims_; }
  void set_dim(int i, int64_t value) { dims_[i] = value; }

  // Product of the dimensions (1 for a scalar of rank 0).
  int64_t num_elements() const;
  // Row-major strides in elements.
  std::vector<int64_t> Strides() const;
  bool IsValid() const;  // every dimension >= 0

  std::string ToString() const;  // "[32,64,56,56]"
  static absl::StatusOr<Shape> Parse(absl::string_view text);

  bool operator==(const Shape& other) const { return dims_ == other.dims_; }
  bool operator!=(const Shape& other) const { return dims_ != other.dims_; }

 private:
  std::vector<int64_t> dims_;
};

}  // namespace cnnbench

#endif  // CNNBENCH_CORE_SHAPE_H_
