#!/usr/bin/env bash
# bf16 depthwise weight gradients on fp32 copies: the models with 5x5/7x7
# depthwise convolutions beside PyTorch eager, fp32 and bf16, one run.
cd /work/main
D=/tmp/dwbf16
rm -rf $D; mkdir -p $D
echo "start $(date -u +%T) $(uptime)" > $D/machine.txt
s=$(date +%s)
tools/peers/compare.sh --models=efficientnet_b0,mobilenet_v3_large,convnext_tiny --batch_sizes=32 \
  --precisions=fp32,bf16 --frameworks=cnnbench,pytorch --warmup_steps=2 --steps=5 --repetitions=2 \
  --out=$D/train > $D/train.log 2>&1
echo "compare rc=$? $(( $(date +%s) - s )) s $(date -u +%T) $(uptime)" >> $D/machine.txt
