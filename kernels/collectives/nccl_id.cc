// Sharing an NCCL unique id over a host-memory communicator (every build:
// without NCCL, rank 0's failure to make one reaches every rank).
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "kernels/collectives/nccl.h"

namespace cnnbench {

absl::StatusOr<NcclUniqueId> ShareNcclUniqueId(Communicator& bootstrap) {
  // The id, then one byte: 1 when rank 0 has one, so that a failure there
  // fails every rank instead of handing out garbage.
  unsigned char message[sizeof(NcclUniqueId::bytes) + 1] = {};
  absl::Status made;
  if (bootstrap.rank() == 0) {
    absl::StatusOr<NcclUniqueId> id = NewNcclUniqueId();
    made = id.status();
    if (id.ok()) {
      std::memcpy(message, id->bytes.data(), sizeof(id->bytes));
      message[sizeof(id->bytes)] = 1;
    }
  }
  RETURN_IF_ERROR(
      bootstrap.Broadcast(message, message, sizeof(message), DType::kU8, 0, Stream::Cpu()));
  if (!made.ok()) return made;
  if (message[sizeof(NcclUniqueId::bytes)] != 1)
    return absl::FailedPreconditionError(
        absl::StrCat("rank 0 of the ", bootstrap.name(),
                     " group could not make an NCCL unique id (its own "
                     "error says why; rank ",
                     bootstrap.rank(), " here)"));
  NcclUniqueId id;
  std::memcpy(id.bytes.data(), message, sizeof(id.bytes));
  return id;
}

}  // namespace cnnbench
