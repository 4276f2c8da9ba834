#!/usr/bin/env bash
# Max pooling, oneDNN's primitive against this backend's own loop: two
# //bench:all binaries (the commit before and the one that adds the loop),
# alternating rounds on a quiet machine, the pool kernel cases of googlenet
# and inception3's max pools, and training steps at batch 32:
#   run.sh OUT_DIR ROUNDS BEFORE_BINARY AFTER_BINARY
# Then: summarize.py OUT_DIR
set -euo pipefail
OUT="$1"; ROUNDS="$2"; BEFORE="$3"; AFTER="$4"
mkdir -p "$OUT"
for r in $(seq 1 "$ROUNDS"); do
  for pair in "before=$BEFORE" "after=$AFTER"; do
    name="${pair%%=*}"; bin="${pair#*=}"
    "$bin" --families=pool --kernel_models=googlenet,inception3 --kernel_batch=32 \
      --benchmark_filter='^pool/max/' --benchmark_min_time=0.3 --repetitions=1 \
      --benchmark_out="$OUT/pool_${name}_$r.json" --benchmark_out_format=json >/dev/null 2>&1
    "$bin" --families=train --models=googlenet,inception3,resnet50_v1.5 --batch_sizes=32 \
      --precisions=fp32 --warmup_steps=1 --steps=3 --repetitions=1 \
      --benchmark_out="$OUT/train_${name}_$r.json" --benchmark_out_format=json >/dev/null 2>&1
  done
done
