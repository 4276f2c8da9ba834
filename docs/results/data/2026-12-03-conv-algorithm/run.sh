#!/bin/bash
# The CPU convolution algorithm (issue 25), 2026-12-03: --cpu_conv_algorithm
# direct against timed, in alternating rounds on a quiet machine, with the
# bench binary built at the commit named in the results file.
#   kernel_<mode>.json: every 3x3 stride-1 conv case of resnet50_v1.5 and
#     vgg16 at batch 32 (each pass), fp32;
#   train_<round>_<mode>.json: fp32 synthetic training at batch 32.
# Usage: run.sh BENCH_BINARY OUT_DIR
set -euo pipefail
BENCH="$1"
OUT="$2"
mkdir -p "$OUT"
kernel() {  # kernel MODE
  "$BENCH" --families=conv --kernel_models=resnet50_v1.5,vgg16 --kernel_batch=32 \
    --precisions=fp32 --max_kernel_shapes=0 --benchmark_filter='kh3sh1' --benchmark_min_time=0.3 --repetitions=1 \
    --cpu_conv_algorithm="$1" --benchmark_out="$OUT/kernel_$1.json" \
    --benchmark_out_format=json >"$OUT/kernel_$1.log" 2>&1
}
train() {  # train ROUND MODE MODELS STEPS
  "$BENCH" --families=train --models="$3" --batch_sizes=32 --precisions=fp32 --data=synthetic \
    --warmup_steps=1 --steps="$4" --repetitions=2 --train_accuracy=false \
    --cpu_conv_algorithm="$2" --benchmark_out="$OUT/train_$1_$2.json" \
    --benchmark_out_format=json >"$OUT/train_$1_$2.log" 2>&1
}
uptime >"$OUT/uptime_start.txt"
kernel direct
kernel timed
train 1 direct resnet50_v1.5,vgg16 3
train 1 timed resnet50_v1.5,vgg16 3
train 2 timed resnet50_v1.5,vgg16 3
train 2 direct resnet50_v1.5,vgg16 3
train 3 direct googlenet,inception3,alexnet,resnet152 3
train 3 timed googlenet,inception3,alexnet,resnet152 3
uptime >"$OUT/uptime_end.txt"
