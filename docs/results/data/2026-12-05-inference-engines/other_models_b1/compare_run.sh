#!/usr/bin/env bash
# Issue 49's other models at batch 1: one round, 100 timed batches x 3 repetitions.
cd /work/main
uptime > /tmp/infer2/uptime.txt
s=$(date +%s)
tools/peers/compare.sh --mode=infer --models=googlenet,inception3,vgg16,mobilenet --batch_sizes=1 \
  --precisions=fp32,bf16 --infer_warmup=10 --infer_iterations=100 --repetitions=3 --rounds=1 \
  --out=/tmp/infer2/b1 > /tmp/infer2/b1.log 2>&1
echo "b1 rc=$? $(( $(date +%s) - s )) s" >> /tmp/infer2/uptime.txt
uptime >> /tmp/infer2/uptime.txt
