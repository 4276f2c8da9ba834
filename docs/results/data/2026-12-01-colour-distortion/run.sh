#!/usr/bin/env bash
# Decode + training preprocessing on one thread with each colour distortion,
# alternating rounds, one binary, a quiet machine:
#   docs/results/data/2026-12-01-colour-distortion/run.sh OUT_DIR [ROUNDS]
# Then: summarize.py OUT_DIR > table.md
set -euo pipefail
OUT="$1"; ROUNDS="${2:-3}"
BIN="$(cd "$(dirname "$0")/../../../.." && pwd)/bazel-out/k8-opt/bin/bench/all"
mkdir -p "$OUT"
for r in $(seq 1 "$ROUNDS"); do
  for d in none fast full; do
    "$BIN" --families=input --input_threads=1 --input_batch=32 --image_size=224 \
      --warmup_steps=2 --steps=20 --repetitions=1 --distortions=$d \
      --benchmark_filter='^input/tfrecord/train/' \
      --benchmark_out="$OUT/${d}_$r.json" --benchmark_out_format=json >/dev/null 2>&1
  done
done
