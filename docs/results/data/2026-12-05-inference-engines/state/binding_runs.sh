#!/usr/bin/env bash
# Batch-1 fp32 resnet50_v1.5 inference, 3 rounds x (unbound, bound, active wait).
cd /work/main
B=bazel-bin/bench/all
ARGS=(--families=infer --infer_models=resnet50_v1.5 --infer_batch_sizes=1 --precisions=fp32
      --infer_warmup=10 --infer_iterations=200 --repetitions=3 --store=none --benchmark_out_format=json)
uptime > /tmp/pin/uptime.txt
for r in 1 2 3; do
  $B "${ARGS[@]}" --benchmark_out=/tmp/pin/unbound-$r.json > /dev/null 2>&1
  OMP_PROC_BIND=close OMP_PLACES=cores $B "${ARGS[@]}" --benchmark_out=/tmp/pin/bound-$r.json > /dev/null 2>&1
  OMP_WAIT_POLICY=ACTIVE $B "${ARGS[@]}" --benchmark_out=/tmp/pin/active-$r.json > /dev/null 2>&1
done
uptime >> /tmp/pin/uptime.txt
