#!/usr/bin/env bash
# Issue 49: the side-by-side inference run after the residual add fusion
# (resnet50_v1.5, batch 1 and 32, fp32 and bf16, two rounds), as
# docs/results/data/2026-12-05-inference-engines/compare_runs.sh.
cd /work/main
D=${D:-/tmp/residual}
s=$(date +%s)
tools/peers/compare.sh --mode=infer --models=resnet50_v1.5 --batch_sizes=1 --precisions=fp32,bf16 \
  --infer_warmup=10 --infer_iterations=200 --repetitions=5 --rounds=2 --out=$D/b1 > $D/b1.log 2>&1
echo "b1 rc=$? $(( $(date +%s) - s )) s $(uptime)" >> $D/machine.txt
s=$(date +%s)
tools/peers/compare.sh --mode=infer --models=resnet50_v1.5 --batch_sizes=32 --precisions=fp32,bf16 \
  --infer_warmup=3 --infer_iterations=20 --repetitions=3 --rounds=2 --out=$D/b32 > $D/b32.log 2>&1
echo "b32 rc=$? $(( $(date +%s) - s )) s $(uptime)" >> $D/machine.txt
