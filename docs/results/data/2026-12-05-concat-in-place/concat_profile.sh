#!/usr/bin/env bash
# Issue 49: after the concat in place, googlenet and inception3 bf16 at batch 1 layer
# by layer: the suite (step_breakdown --profile --infer, 100 batches) and OpenVINO
# (PERF_COUNT of its last timed batch), one after the other.
cd /work/main
D=${D:-/tmp/concat}/profile
mkdir -p $D
for m in googlenet inception3; do
  bazel-bin/tools/step_breakdown --profile --infer --model=$m --batch=1 --precision=bf16 \
    --steps=100 --warmup_steps=10 > $D/cnnbench_${m}_bf16.txt 2>&1
  echo "cnnbench $m rc=$? $(date -u +%T) $(uptime)" >> $D/uptime.txt
  ~/.cache/cnnbench/peers-venv/bin/python tools/peers/openvino_infer.py --mode=infer --models=$m \
    --precisions=bf16 --batch_sizes=1 --infer_warmup=10 --infer_iterations=100 --repetitions=1 \
    --perf_counts=$D/ov_perf_$m.tsv --benchmark_out=$D/ov_$m.json > $D/ov_$m.log 2>&1
  echo "openvino $m rc=$? $(date -u +%T) $(uptime)" >> $D/uptime.txt
done
