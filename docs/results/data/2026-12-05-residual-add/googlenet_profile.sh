#!/usr/bin/env bash
# Issue 49: googlenet at batch 1 layer by layer, the suite (step_breakdown
# --profile --infer, 100 batches) and OpenVINO (PERF_COUNT of its last
# timed batch), fp32 and bf16, one after the other.
cd /work/main
D=${D:-/tmp/residual}/googlenet2
mkdir -p $D
for p in bf16 fp32; do
  bazel-bin/tools/step_breakdown --profile --infer --model=googlenet --batch=1 --precision=$p \
    --steps=100 --warmup_steps=10 --per_batch_file=$D/pb_$p.tsv > $D/cnnbench_$p.txt 2>&1
  echo "cnnbench $p rc=$? $(uptime)" >> $D/uptime.txt
done
~/.cache/cnnbench/peers-venv/bin/python tools/peers/openvino_infer.py --mode=infer --models=googlenet \
  --precisions=bf16,fp32 --batch_sizes=1 --infer_warmup=10 --infer_iterations=100 --repetitions=1 \
  --perf_counts=$D/ov_perf.tsv --benchmark_out=$D/ov.json > $D/ov.log 2>&1
echo "openvino rc=$? $(uptime)" >> $D/uptime.txt
