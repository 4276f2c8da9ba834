#!/usr/bin/env bash
# Decode + training preprocessing on one thread with each colour distortion,
# alternating rounds, on a quiet machine:
#   docs/results/data/2026-12-01-colour-distortion/run.sh OUT_DIR [ROUNDS] [NAME=BINARY ...]
# Without NAME=BINARY pairs it runs this tree's opt build of //bench:all
# (named "suite"); with several, each round runs every binary in turn.
# Then: summarize.py OUT_DIR
set -euo pipefail
OUT="$1"; ROUNDS="${2:-3}"; shift $(( $# < 2 ? $# : 2 ))
BINS=("$@")
if [ ${#BINS[@]} -eq 0 ]; then
  BINS=("suite=$(cd "$(dirname "$0")/../../../.." && pwd)/bazel-out/k8-opt/bin/bench/all")
fi
mkdir -p "$OUT"
for r in $(seq 1 "$ROUNDS"); do
  for pair in "${BINS[@]}"; do
    name="${pair%%=*}"; bin="${pair#*=}"
    for d in none fast full; do
      "$bin" --families=input --input_threads=1 --input_batch=32 --image_size=224 \
        --warmup_steps=2 --steps=20 --repetitions=1 --distortions=$d \
        --benchmark_filter='^input/tfrecord/train/' \
        --benchmark_out="$OUT/${name}_${d}_$r.json" --benchmark_out_format=json >/dev/null 2>&1
    done
  done
done
