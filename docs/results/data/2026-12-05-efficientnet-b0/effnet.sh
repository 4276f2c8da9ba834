#!/usr/bin/env bash
# Issue 50: EfficientNet-B0 on this machine, the suite beside PyTorch eager (training)
# and beside PyTorch, ONNX Runtime and OpenVINO (inference), fp32 and bf16.
cd /work/main
D=${D:-/tmp/effnet}
mkdir -p $D
echo "start $(date -u +%T) $(uptime)" >> $D/machine.txt
s=$(date +%s)
tools/peers/compare.sh --models=efficientnet_b0 --batch_sizes=32 --precisions=fp32,bf16 \
  --frameworks=cnnbench,pytorch --warmup_steps=3 --steps=10 --repetitions=2 --out=$D/train > $D/train.log 2>&1
echo "train rc=$? $(( $(date +%s) - s )) s $(date -u +%T) $(uptime)" >> $D/machine.txt
s=$(date +%s)
tools/peers/compare.sh --mode=infer --models=efficientnet_b0 --batch_sizes=1,32 --precisions=fp32,bf16 \
  --frameworks=cnnbench,pytorch,onnxruntime,openvino --infer_warmup=5 --infer_iterations=30 \
  --repetitions=3 --rounds=2 --out=$D/infer > $D/infer.log 2>&1
echo "infer rc=$? $(( $(date +%s) - s )) s $(date -u +%T) $(uptime)" >> $D/machine.txt
bazel-bin/tools/step_breakdown --profile --infer --model=efficientnet_b0 --batch=1 --precision=fp32 \
  --steps=30 --warmup_steps=5 > $D/profile_infer_fp32_b1.txt 2>&1
echo "profile rc=$? $(date -u +%T) $(uptime)" >> $D/machine.txt
