#!/usr/bin/env bash
# The side-by-side inference run of issue 49: batch 1 (200 timed batches x 5
# repetitions) and batch 32 (20 x 3), fp32 and bf16, two rounds each.
cd /work/main
uptime > /tmp/infer/uptime.txt
s=$(date +%s)
tools/peers/compare.sh --mode=infer --models=resnet50_v1.5 --batch_sizes=1 --precisions=fp32,bf16 \
  --infer_warmup=10 --infer_iterations=200 --repetitions=5 --rounds=2 --out=/tmp/infer/b1 > /tmp/infer/b1.log 2>&1
echo "b1 rc=$? $(( $(date +%s) - s )) s" >> /tmp/infer/uptime.txt
s=$(date +%s)
tools/peers/compare.sh --mode=infer --models=resnet50_v1.5 --batch_sizes=32 --precisions=fp32,bf16 \
  --infer_warmup=3 --infer_iterations=20 --repetitions=3 --rounds=2 --out=/tmp/infer/b32 > /tmp/infer/b32.log 2>&1
echo "b32 rc=$? $(( $(date +%s) - s )) s" >> /tmp/infer/uptime.txt
uptime >> /tmp/infer/uptime.txt
