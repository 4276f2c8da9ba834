#include "core/shape.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace cnnbench {

absl::string_view LayoutName(Layout layout) {
  switch (layout) {
    case Layout::kNCHW: return "nchw";
    case Layout::kNHWC: return "nhwc";
    case Layout::kNC: return "nc";
    case Layout::kOIHW: return "oihw";
    case Layout::kX: return "x";
    case Layout::kBlocked: return "blocked";
  }
  return "x";
}

absl::StatusOr<Layout> ParseLayout(absl::string_view name) {
  for (Layout l : {Layout::kNCHW, Layout::kNHWC, Layout::kNC, Layout::kOIHW, Layout::kX,
                   Layout::kBlocked})
    if (LayoutName(l) == name) return l;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown layout '", name, "' (known: nchw, nhwc, nc, oihw, x, blocked)"));
}

int64_t Shape::num_elements() const {
  int64_t n = 1;
  for (int64_t d : dims_) n *= d;
  return n;
}

std::vector<int64_t> Shape::Strides() const {
  std::vector<int64_t> strides(dims_.size(), 1);
  for (int i = rank() - 2; i >= 0; --i) strides[i] = strides[i + 1] * dims_[i + 1];
  return strides;
}

bool Shape::IsValid() const {
  for (int64_t d : dims_)
    if (d < 0) return false;
  return true;
}

std::string Shape::ToString() const { return absl::StrCat("[", absl::StrJoin(dims_, ","), "]"); }

absl::StatusOr<Shape> Shape::Parse(absl::string_view text) {
  absl::string_view body = text;
  if (!absl::ConsumePrefix(&body, "[") || !absl::ConsumeSuffix(&body, "]"))
    return absl::InvalidArgumentError(
        absl::StrCat("shape '", text, "' must look like [d0,d1,...]"));
  std::vector<int64_t> dims;
  if (!body.empty()) {
    for (absl::string_view part : absl::StrSplit(body, ',')) {
      int64_t d;
      if (!absl::SimpleAtoi(part, &d) || d < 0)
        return absl::InvalidArgumentError(
            absl::StrCat("shape '", text, "': '", part, "' is not a dimension >= 0"));
      dims.push_back(d);
    }
  }
  return Shape(std::move(dims));
}

}  // namespace cnnbench
