#!/usr/bin/env bash
D=/tmp/se
cd /work/main
echo "start2 $(date -u +%T) $(uptime)" >> $D/machine.txt
for round in 3 4 5; do
  for v in old new; do
    $D/bench_$v --families=train --models=efficientnet_b0 --batch_sizes=32 \
      --precisions=fp32,bf16 --warmup_steps=2 --steps=8 --repetitions=2 \
      --store=none --benchmark_out=$D/${v}_r$round.json --benchmark_out_format=json \
      > $D/${v}_r$round.log 2>&1
    echo "$v r$round rc=$? $(date -u +%T) $(uptime)" >> $D/machine.txt
  done
done
echo done2 >> $D/machine.txt
