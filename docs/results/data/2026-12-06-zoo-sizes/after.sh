#!/usr/bin/env bash
# After sizes.sh: EfficientNet-B4 (batch 16) and B5 (batch 8) beside PyTorch,
# whose B5 at batch 16 was killed by the kernel's OOM killer; then batch-1
# inference profiles.
D=/tmp/sizes
cd /work/main
while ! grep -q '^done' $D/machine.txt 2>/dev/null; do sleep 10; done
s=$(date +%s)
tools/peers/compare.sh --models=efficientnet_b4 --batch_sizes=16 --precisions=fp32,bf16 \
  --frameworks=cnnbench,pytorch --warmup_steps=1 --steps=2 --repetitions=1 --out=$D/train_e > $D/train_e.log 2>&1
echo "train_e rc=$? $(( $(date +%s) - s )) s $(date -u +%T) $(uptime)" >> $D/machine.txt
s=$(date +%s)
tools/peers/compare.sh --models=efficientnet_b5 --batch_sizes=8 --precisions=fp32,bf16 \
  --frameworks=cnnbench,pytorch --warmup_steps=1 --steps=2 --repetitions=1 --out=$D/train_f > $D/train_f.log 2>&1
echo "train_f rc=$? $(( $(date +%s) - s )) s $(date -u +%T) $(uptime)" >> $D/machine.txt
for m in mobilenet_v3_large regnet_y_400mf; do
  for p in fp32 bf16; do
    bazel-bin/tools/step_breakdown --profile --infer --model=$m --batch=1 --precision=$p --steps=50 > $D/iprof_${m}_$p.txt 2>&1
    echo "iprof $m $p rc=$? $(date -u +%T) $(uptime)" >> $D/machine.txt
  done
done
echo after-done >> $D/machine.txt
