#!/bin/bash
# resnet50_v1.5 batch-32 fp32 CPU training step, the binary before issue 38
# (f13cb8b) and after it, alternating rounds, one machine, nothing else running.
set -u
cd /work/bench-ab
ARGS="--preset=quick --families=train --models=resnet50_v1.5 --batch_sizes=32 --precisions=fp32 --gpus=0 --data=synthetic --warmup_steps=2 --steps=10 --repetitions=1 --power_sample_ms=0"
order=(before after after before before after)
i=0
for which in "${order[@]}"; do
  i=$((i+1))
  ./all-$which $ARGS --benchmark_out=run$i-$which.json --benchmark_out_format=json > run$i-$which.log 2>&1
  ips=$(python3 -c "import json;d=json.load(open('run$i-$which.json'));print([b.get('images_per_second') for b in d['benchmarks']])")
  echo "round $i $which images_per_second $ips load $(cut -d' ' -f1 /proc/loadavg)"
done
