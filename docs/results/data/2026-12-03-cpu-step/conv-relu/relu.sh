#!/bin/bash
# --conv_relu=false against true, alternating, one binary (1b42388), per-layer profile.
set -euo pipefail
SB="$1"; OUT="$2"; mkdir -p "$OUT"
uptime >"$OUT/uptime_start.txt"
for m in googlenet vgg16; do
  for r in 1 2; do
    for c in false true; do
      [ $r = 2 ] && c=$([ $c = false ] && echo true || echo false)
      "$SB" --profile --model=$m --batch=32 --steps=4 --warmup_steps=2 --conv_relu=$c >"$OUT/profile_${m}_${r}_convrelu-$c.txt" 2>&1
    done
  done
done
uptime >"$OUT/uptime_end.txt"
