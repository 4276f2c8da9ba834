#include "kernels/backends.h"

#include "absl/strings/str_cat.h"

namespace cnnbench {

absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(absl::string_view name,
                                                       const Device& device) {
  if (!device.is_cpu())
    return absl::UnimplementedError(
        absl::StrCat("unsupported: backend '", name, "' on ", device.ToString()));
  if (name == "reference") return CreateReferenceBackend();
  if (name == "onednn") return CreateOneDnnBackend();
  return absl::InvalidArgumentError(
      absl::StrCat("unknown backend '", name, "' (known: reference, onednn)"));
}

}  // namespace cnnbench
