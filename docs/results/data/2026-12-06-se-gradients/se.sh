#!/usr/bin/env bash
# SE gradients: the fused batch norm taking two gradient parts and the
# channel multiply's one-pass backward, against the binaries before
# (HEAD 999ec27) in alternating rounds, with profiles.
D=/tmp/se
cd /work/main
echo "start $(date -u +%T) $(uptime)" > $D/machine.txt
for round in 1 2; do
  for v in old new; do
    $D/bench_$v --families=train --models=efficientnet_b0,mobilenet_v3_large --batch_sizes=32 \
      --precisions=fp32,bf16 --warmup_steps=2 --steps=5 --repetitions=2 \
      --store=none --benchmark_out=$D/${v}_r$round.json --benchmark_out_format=json \
      > $D/${v}_r$round.log 2>&1
    echo "$v r$round rc=$? $(date -u +%T) $(uptime)" >> $D/machine.txt
  done
done
for v in old new; do
  for p in fp32 bf16; do
    $D/sb_$v --profile --model=efficientnet_b0 --batch=32 --precision=$p > $D/prof_${v}_$p.txt 2>&1
    echo "profile $v $p rc=$? $(date -u +%T) $(uptime)" >> $D/machine.txt
  done
done
echo done >> $D/machine.txt
