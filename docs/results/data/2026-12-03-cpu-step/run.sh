#!/bin/bash
# Old (aaf78b6, the tree before this change) against new (1b42388),
# alternating rounds, train cases fp32 batch 32, timed convolutions, on a
# quiet machine; new with --conv_relu=false isolates the conv epilogue.
#   run.sh OLD_BENCH NEW_BENCH OLD_BREAKDOWN NEW_BREAKDOWN OUT
set -euo pipefail
OLD="$1"; NEW="$2"; OLD_SB="$3"; NEW_SB="$4"; OUT="$5"
mkdir -p "$OUT"
train() {  # train ROUND NAME BINARY [FLAGS]
  local round=$1 name=$2 bin=$3; shift 3
  "$bin" --families=train --models=alexnet,googlenet,vgg16,resnet50_v1.5 --batch_sizes=32 \
    --precisions=fp32 --data=synthetic --warmup_steps=2 --steps=3 --repetitions=2 \
    --train_accuracy=false "$@" --benchmark_out="$OUT/train_${round}_${name}.json" \
    --benchmark_out_format=json >"$OUT/train_${round}_${name}.log" 2>&1
}
profile() {  # profile NAME BINARY MODEL
  "$2" --profile --model="$3" --batch=32 --steps=4 --warmup_steps=2 >"$OUT/profile_$3_$1.txt" 2>&1
}
uptime >"$OUT/uptime_start.txt"
train 1 old "$OLD"
train 1 new "$NEW"
train 1 new-noconvrelu "$NEW" --conv_relu=false
train 2 new-noconvrelu "$NEW" --conv_relu=false
train 2 new "$NEW"
train 2 old "$OLD"
for m in alexnet googlenet inception3; do
  profile old "$OLD_SB" $m
  profile new "$NEW_SB" $m
done
uptime >"$OUT/uptime_end.txt"
