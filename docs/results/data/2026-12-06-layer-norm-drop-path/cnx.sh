#!/usr/bin/env bash
# ConvNeXt-T: the vectorised layer norm and drop-path (32c4653) against
# 999ec27 in alternating rounds, profiles, then beside PyTorch eager.
D=/tmp/cnx
rm -rf $D; mkdir -p $D
cd /work/main
echo "start $(date -u +%T) $(uptime)" > $D/machine.txt
for round in 1 2; do
  for v in old new2; do
    /tmp/se/bench_$v --families=train --models=convnext_tiny --batch_sizes=32 \
      --precisions=fp32,bf16 --warmup_steps=2 --steps=4 --repetitions=2 \
      --store=none --benchmark_out=$D/${v}_r$round.json --benchmark_out_format=json \
      > $D/${v}_r$round.log 2>&1
    echo "$v r$round rc=$? $(date -u +%T) $(uptime)" >> $D/machine.txt
  done
done
for v in old new2; do
  for p in fp32 bf16; do
    /tmp/se/sb_$v --profile --model=convnext_tiny --batch=32 --precision=$p --steps=3 > $D/prof_${v}_$p.txt 2>&1
    echo "profile $v $p rc=$? $(date -u +%T) $(uptime)" >> $D/machine.txt
  done
done
s=$(date +%s)
tools/peers/compare.sh --models=convnext_tiny,efficientnet_b0,mobilenet_v3_large --batch_sizes=32 \
  --precisions=fp32,bf16 --frameworks=cnnbench,pytorch --warmup_steps=2 --steps=4 --repetitions=2 \
  --out=$D/train > $D/train.log 2>&1
echo "compare rc=$? $(( $(date +%s) - s )) s $(date -u +%T) $(uptime)" >> $D/machine.txt
echo done >> $D/machine.txt
