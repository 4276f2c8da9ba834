#!/usr/bin/env bash
# Issue 49: the residual add in the convolution (--conv_add), measured.
# 1. A/B in the suite alone: the same binary, --conv_add=true|false
#    alternating, resnet50_v1.5 batch 1, fp32 and bf16.
# 2. The side-by-side run with the engines (compare.sh), batch 1 and 32.
# Run on a quiet machine from /work/main after `./bazelw build //bench:all`.
set -uo pipefail
cd /work/main
D=${D:-/tmp/residual}
mkdir -p $D/ab
export MALLOC_MMAP_THRESHOLD_=17179869184 MALLOC_TRIM_THRESHOLD_=17179869184
{ date -u; uptime; grep -m1 "model name" /proc/cpuinfo; grep -o -w -E "avx512f|avx512_bf16|amx_bf16|avx2" /proc/cpuinfo | sort -u | tr '\n' ' '; echo; git log --oneline -1; } > $D/machine.txt
for r in 1 2; do
  for add in true false; do
    s=$(date +%s)
    bazel-bin/bench/all --families=infer --infer_models=resnet50_v1.5 --precisions=fp32,bf16 \
      --infer_batch_sizes=1 --infer_warmup=10 --infer_iterations=200 --repetitions=5 \
      --conv_add=$add --benchmark_out=$D/ab/conv_add-$add-$r.json --benchmark_out_format=json \
      > $D/ab/conv_add-$add-$r.log 2>&1
    echo "ab conv_add=$add round $r rc=$? $(( $(date +%s) - s )) s $(uptime)" >> $D/machine.txt
  done
done
s=$(date +%s)
tools/peers/compare.sh --mode=infer --models=resnet50_v1.5 --batch_sizes=1 --precisions=fp32,bf16 \
  --infer_warmup=10 --infer_iterations=200 --repetitions=5 --rounds=2 --out=$D/b1 > $D/b1.log 2>&1
echo "b1 rc=$? $(( $(date +%s) - s )) s $(uptime)" >> $D/machine.txt
s=$(date +%s)
tools/peers/compare.sh --mode=infer --models=resnet50_v1.5 --batch_sizes=32 --precisions=fp32,bf16 \
  --infer_warmup=3 --infer_iterations=20 --repetitions=3 --rounds=2 --out=$D/b32 > $D/b32.log 2>&1
echo "b32 rc=$? $(( $(date +%s) - s )) s $(uptime)" >> $D/machine.txt
