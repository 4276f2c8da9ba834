// The nccl group in a build without CUDA (no toolkit, or --config=nocuda):
// every entry point says why there is no NCCL.
#include "kernels/collectives/nccl.h"

namespace cnnbench {
namespace {

absl::Status NoNccl() {
  return absl::UnimplementedError(
      "unsupported: nccl: this build has no CUDA (no toolkit found, or --config=nocuda)");
}

}  // namespace

bool NcclBuiltIn() { return false; }

absl::StatusOr<std::string> NcclVersion() { return NoNccl(); }

absl::StatusOr<NcclUniqueId> NewNcclUniqueId() { return NoNccl(); }

absl::StatusOr<std::vector<std::unique_ptr<Communicator>>> CreateNcclGroup(
    const std::vector<Device>& devices, const CommunicatorOptions& options) {
  return NoNccl();
}

absl::StatusOr<std::unique_ptr<Communicator>> CreateNcclCommunicator(
    const NcclUniqueId& id, int rank, int size, const Device& device,
    const CommunicatorOptions& options) {
  return NoNccl();
}

absl::Status NcclSynchronize(Communicator& comm, const Stream& stream) { return NoNccl(); }

}  // namespace cnnbench
