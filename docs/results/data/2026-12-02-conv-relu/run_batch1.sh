#!/usr/bin/env bash
# vgg16 and googlenet at batch 1, fp32: the conv epilogue on and off,
# alternated over three rounds (the first run.sh's rounds were within noise).
set -euo pipefail
out=$(dirname "$0")
for round in 1 2 3; do
  for relu in true false; do
    bazel-bin/bench/all --families=infer --infer_models=vgg16,googlenet --infer_batch_sizes=1 \
      --precisions=fp32 --infer_warmup=3 --infer_iterations=30 --repetitions=2 --conv_relu=$relu \
      --benchmark_out="$out/batch1_${relu}_${round}.json" --benchmark_out_format=json \
      > "$out/batch1_${relu}_${round}.txt" 2>&1
  done
done
