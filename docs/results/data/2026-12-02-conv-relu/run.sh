#!/usr/bin/env bash
# 1. The ReLU as a convolution's epilogue in inference plans (--conv_relu)
#    against the ReLU as its own layer; 2. training steps with the progress
#    line every step (--display_every=1) against none (0). Alternated
#    rounds, one session, quiet machine.
set -euo pipefail
out=$(dirname "$0")
bin=bazel-bin/bench/all
for round in 1 2; do
  for relu in true false; do
    "$bin" --families=infer --infer_models=resnet50_v1.5,vgg16,googlenet --infer_batch_sizes=1,32 \
      --precisions=fp32,bf16 --infer_warmup=3 --infer_iterations=20 --repetitions=2 \
      --conv_relu=$relu \
      --benchmark_filter='infer/(resnet50_v1.5/.*|vgg16/fp32/.*batch:1/|googlenet/fp32/.*)' \
      --benchmark_out="$out/conv_relu_${relu}_${round}.json" --benchmark_out_format=json \
      > "$out/conv_relu_${relu}_${round}.txt" 2>&1
  done
  for every in 1 0; do
    "$bin" --families=train --models=resnet50_v1.5 --batch_sizes=16 --precisions=fp32 \
      --warmup_steps=2 --steps=20 --repetitions=2 --display_every=$every \
      --benchmark_out="$out/display_${every}_${round}.json" --benchmark_out_format=json \
      > "$out/display_${every}_${round}.txt" 2>&1
  done
done
