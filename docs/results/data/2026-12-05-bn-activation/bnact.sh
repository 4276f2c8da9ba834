#!/usr/bin/env bash
# The batch norm + curved activation fusion: fused against unfused
# (--fuse_relu=false) in alternating rounds, then beside PyTorch eager.
cd /work/main
D=/tmp/bnact
rm -rf $D; mkdir -p $D
./bazelw build //bench:all > $D/build.log 2>&1
cp bazel-bin/bench/all $D/bench_all
echo "start $(date -u +%T) $(uptime)" > $D/machine.txt
for round in 1 2; do
  for fuse in true false; do
    $D/bench_all --families=train --models=efficientnet_b0,mobilenet_v3_large --batch_sizes=32 \
      --precisions=fp32,bf16 --warmup_steps=2 --steps=5 --repetitions=2 --fuse_relu=$fuse \
      --store=none --benchmark_out=$D/fuse_${fuse}_r$round.json --benchmark_out_format=json \
      > $D/fuse_${fuse}_r$round.log 2>&1
    echo "fuse=$fuse r$round rc=$? $(date -u +%T) $(uptime)" >> $D/machine.txt
  done
done
s=$(date +%s)
tools/peers/compare.sh --models=efficientnet_b0,mobilenet_v3_large --batch_sizes=32 \
  --precisions=fp32,bf16 --frameworks=cnnbench,pytorch --warmup_steps=2 --steps=5 --repetitions=2 \
  --out=$D/train > $D/train.log 2>&1
echo "compare rc=$? $(( $(date +%s) - s )) s $(date -u +%T) $(uptime)" >> $D/machine.txt
