#!/usr/bin/env bash
# ReLU fusion on and off, alternating rounds, one binary, a quiet machine:
#   docs/results/data/2026-12-01-cpu-speed/fusion_ab.sh OUT_DIR [ROUNDS]
set -euo pipefail
OUT="$1"; ROUNDS="${2:-3}"
BIN="$(cd "$(dirname "$0")/../../../.." && pwd)/bazel-out/k8-opt/bin/bench/all"
mkdir -p "$OUT"
for r in $(seq 1 "$ROUNDS"); do
  for fuse in false true; do
    "$BIN" --families=train,peak --models=resnet50_v1.5 --batch_sizes=32 --precisions=fp32 \
      --warmup_steps=2 --steps=5 --repetitions=1 --fuse_relu=$fuse \
      --benchmark_out="$OUT/fuse_${fuse}_$r.json" --benchmark_out_format=json >/dev/null 2>&1
    python3 - "$OUT/fuse_${fuse}_$r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for b in d["benchmarks"]:
    if b.get("run_type") == "aggregate": continue
    print(sys.argv[1].split("/")[-1], b["name"].split("/iterations")[0], 
          "%.3f img/s" % b["images_per_second"] if "images_per_second" in b else "%.1f GFLOP/s" % (b.get("flops", 0) / 1e9))
PY
  done
done
