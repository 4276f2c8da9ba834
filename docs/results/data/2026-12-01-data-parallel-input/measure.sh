#!/bin/bash
# One quiet session: all-reduce vs copy, MPI all-reduce, overlap gain, real vs synthetic data, decode rate.
set -u
B=/work/main/bazel-out/k8-opt/bin/bench/all
OUT=/tmp/m
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none PMIX_MCA_gds=hash
MPI="mpirun --oversubscribe --allow-run-as-root -np 2"
date -u; cat /proc/loadavg; grep -m1 "model name" /proc/cpuinfo; nproc
# 1. 64 MiB all-reduce: copy (ranks:1), local 2 ranks, MPI 2 processes; 5 reps of 20.
$B --families=allreduce --allreduce_ranks=1,2 --allreduce_bytes=67108864,67108864 --allreduce_iters=20 --benchmark_repetitions=5 --benchmark_out=$OUT/allreduce_local.json --benchmark_out_format=json 2>&1 | grep -E "_mean|_cv" | cut -c1-200
$MPI $B --families=allreduce --allreduce_bytes=67108864,67108864 --allreduce_iters=20 --benchmark_repetitions=5 --benchmark_out=$OUT/allreduce_mpi.json --benchmark_out_format=json 2>&1 | grep -E "_mean|_cv" | cut -c1-200
# 2. Overlap gain: 2 CPU replicas, 1 thread each, resnet50 batch 8 per replica; on/off alternating, 2 rounds.
for round in 1 2; do
  for ov in true false; do
    $B --families=train,grads --models=resnet50 --batch_sizes=8 --replicas=2 --threads_per_replica=1 --allreduce_ranks=2 --overlap=$ov --warmup_steps=1 --steps=3 --benchmark_repetitions=3 --benchmark_out=$OUT/overlap_${ov}_$round.json --benchmark_out_format=json 2>&1 | grep -E "_mean" | cut -c1-220
  done
done
# 3. Real vs synthetic data, resnet50 batch 32, one process, 2 rounds.
for round in 1 2; do
  $B --families=train --models=resnet50 --batch_sizes=32 --data=synthetic,real --warmup_steps=1 --steps=3 --benchmark_repetitions=3 --benchmark_out=$OUT/real_$round.json --benchmark_out_format=json 2>&1 | grep -E "_mean" | cut -c1-220
done
# 4. Decode + preprocess rate of the pipeline alone, 1 and 2 threads, 224x224.
$B --families=input --input_threads=1,2 --input_batch=32 --image_size=224 --warmup_steps=2 --steps=20 --benchmark_repetitions=3 --benchmark_out=$OUT/input.json --benchmark_out_format=json 2>&1 | grep -E "_mean" | cut -c1-250
date -u; cat /proc/loadavg
