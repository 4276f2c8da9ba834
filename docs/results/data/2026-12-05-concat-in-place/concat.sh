#!/usr/bin/env bash
# Issue 49: the concatenation in place, googlenet and inception3 at batch 1.
# 1) the suite alone, --concat_in_place=false|true alternated (same binary), two rounds;
# 2) the suite beside PyTorch, ONNX Runtime and OpenVINO (compare.sh, two rounds).
cd /work/main
D=${D:-/tmp/concat}
mkdir -p $D/ab
echo "start $(date -u +%T) $(uptime)" >> $D/machine.txt
for round in 1 2; do
  for c in false true; do
    bazel-bin/bench/all --families=infer --infer_models=googlenet,inception3 --precisions=fp32,bf16 \
      --infer_batch_sizes=1 --infer_warmup=10 --infer_iterations=200 --repetitions=3 \
      --concat_in_place=$c --benchmark_out=$D/ab/concat_${c}_$round.json --benchmark_out_format=json \
      > $D/ab/concat_${c}_$round.log 2>&1
    echo "ab $c $round rc=$? $(date -u +%T) $(uptime)" >> $D/machine.txt
  done
done
s=$(date +%s)
tools/peers/compare.sh --mode=infer --models=googlenet,inception3 --batch_sizes=1 --precisions=fp32,bf16 \
  --frameworks=cnnbench,pytorch,onnxruntime,openvino --infer_warmup=10 --infer_iterations=100 \
  --repetitions=3 --rounds=2 --out=$D/b1 > $D/b1.log 2>&1
echo "b1 rc=$? $(( $(date +%s) - s )) s $(date -u +%T) $(uptime)" >> $D/machine.txt
