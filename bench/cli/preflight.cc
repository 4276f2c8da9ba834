#include "bench/cli/preflight.h"

#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status.h"

namespace cnnbench::bench {
namespace {

// FNV-1a, enough to tell two settings apart.
uint64_t Digest(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// What a field's slot holds: the value, or for a long one its head and digest.
std::string SlotValue(const std::string& value) {
  if (value.size() <= kPreflightValueBytes) return value;
  std::string head = value.substr(0, kPreflightValueBytes - 40);
  return absl::StrCat(head, "... (", value.size(), " bytes, digest ",
                      absl::Hex(Digest(value), absl::kZeroPad16), ")");
}

constexpr size_t kSlot = kPreflightValueBytes + 1;  // NUL-terminated

}  // namespace

absl::Status Preflight(Communicator& comm, const std::vector<PreflightField>& fields) {
  const size_t n = fields.size();
  // This rank's fields, then everyone's, as fixed slots of chars.
  std::vector<char> mine(n * kSlot, '\0');
  for (size_t f = 0; f < n; ++f) {
    const std::string value = SlotValue(fields[f].second);
    std::memcpy(mine.data() + f * kSlot, value.data(), value.size());
  }
  std::vector<char> all(mine.size() * comm.size(), '\0');
  const Stream stream = Stream::Cpu();
  absl::Status gathered = comm.AllGather(mine.data(), all.data(), mine.size(), DType::kU8, stream);
  if (!gathered.ok())
    return absl::Status(
        gathered.code(),
        absl::StrCat("preflight: gathering every rank's settings: ", gathered.message()));
  auto value = [&](int rank, size_t field) {
    return std::string(all.data() + (rank * n + field) * kSlot);
  };
  std::vector<std::string> differences;
  for (int r = 1; r < comm.size(); ++r)
    for (size_t f = 0; f < n; ++f)
      if (value(r, f) != value(0, f))
        differences.push_back(absl::StrCat("rank ", r, " differs from rank 0 in ", fields[f].first,
                                           ": '", value(r, f), "' vs '", value(0, f), "'"));
  if (differences.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("preflight: the ranks of this job disagree (every rank must run the same "
                   "binary with the same flags on alike machines): ",
                   absl::StrJoin(differences, "; ")));
}

}  // namespace cnnbench::bench
