// ImageNet TFRecord shards as tf_cnn_benchmarks finds them
// (<data_dir>/<subset>-NNNNN-of-NNNNN), and the per-epoch order in which the
// pipeline reads them.
#ifndef CNNBENCH_INPUT_SHARDS_H_
#define CNNBENCH_INPUT_SHARDS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace cnnbench::input {

// The shards of `subset` ("train" or "validation") in `data_dir`, as paths
// ordered by shard index. The set must be complete: indexes 0..N-1 of one
// "of N" count. Other files in the folder are ignored. Errors say what was
// wrong: no such folder, not a folder, an empty folder, no matching shard
// (listing the first names found), a missing index or mixed counts.
absl::StatusOr<std::vector<std::string>> FindShards(const std::string& data_dir,
                                                    const std::string& subset);

// The order in which epoch `epoch` reads `num_shards` shards: a permutation
// of 0..num_shards-1 fixed by (seed, epoch), different from epoch to epoch;
// the identity when `shuffle` is false. The same on every platform.
std::vector<size_t> EpochShardOrder(size_t num_shards, uint64_t seed, int64_t epoch,
                                    bool shuffle = true);

// Deals `order` round-robin to `readers` parallel readers (interleaving):
// reader r gets order[r], order[r + readers], ... Empty lists for readers
// beyond the number of shards; no lists when `readers` is 0.
std::vector<std::vector<size_t>> InterleaveShards(const std::vector<size_t>& order,
                                                  size_t readers);

}  // namespace cnnbench::input

#endif  // CNNBENCH_INPUT_SHARDS_H_
