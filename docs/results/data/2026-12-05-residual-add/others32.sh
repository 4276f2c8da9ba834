#!/usr/bin/env bash
# Issue 49: the suite's peak cases, then googlenet, inception3, vgg16 and
# mobilenet at batch 32 beside the engines (one round, 2 warm-up batches,
# 10 timed x 2 repetitions, fp32 and bf16).
cd /work/main
D=${D:-/tmp/residual}
s=$(date +%s)
bazel-bin/bench/all --families=peak --precisions=fp32,bf16 --benchmark_out=$D/peak.json \
  --benchmark_out_format=json > $D/peak.log 2>&1
echo "peak rc=$? $(( $(date +%s) - s )) s $(uptime)" >> $D/machine.txt
s=$(date +%s)
tools/peers/compare.sh --mode=infer --models=googlenet,inception3,vgg16,mobilenet --batch_sizes=32 \
  --precisions=fp32,bf16 --infer_warmup=2 --infer_iterations=10 --repetitions=2 --rounds=1 \
  --out=$D/others_b32 > $D/others_b32.log 2>&1
echo "others_b32 rc=$? $(( $(date +%s) - s )) s $(uptime)" >> $D/machine.txt
