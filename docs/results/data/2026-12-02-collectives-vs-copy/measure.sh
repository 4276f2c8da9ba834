#!/usr/bin/env bash
# Collectives' busbw at 64 MiB against the CPU's copy rate: two rounds, each
# one run of the local collectives with the bandwidth cases (one process),
# then the same collectives over MPI (2 processes, the run right after).
# Run from the repository root on a quiet machine after ./bazelw build //bench:all.
set -euo pipefail
B=bazel-bin/bench/all
D=docs/results/data/2026-12-02-collectives-vs-copy
FAMILIES=allreduce,allgather,reducescatter,broadcast,reduce
COMMON="--preset=quick --collective_bytes=67108864,67108864 --benchmark_repetitions=3"
for round in 1 2; do
  $B $COMMON --families=$FAMILIES,bandwidth --collective_ranks=2 \
    --benchmark_out=$D/local_$round.json >/dev/null 2>&1
  OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none \
    mpirun --oversubscribe --allow-run-as-root -np 2 $B $COMMON --families=$FAMILIES \
    --benchmark_out=$D/mpi_$round.json >/dev/null 2>&1
done
python3 $D/summarize.py $D
