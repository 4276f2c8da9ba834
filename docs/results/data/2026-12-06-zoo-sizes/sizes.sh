#!/usr/bin/env bash
# Issue 50's other sizes beside the peers, at the current commit.
D=/tmp/sizes
rm -rf $D; mkdir -p $D
cd /work/main
echo "start $(git log --oneline -1 | cut -c1-8) $(date -u +%T) $(uptime)" > $D/machine.txt
run() {  # name mode batch models [extra...]
  local name=$1 mode=$2 batch=$3 models=$4; shift 4
  local s=$(date +%s)
  local fw=cnnbench,pytorch
  [ $mode = infer ] && fw=cnnbench,pytorch,onnxruntime,openvino
  tools/peers/compare.sh --mode=$mode --models=$models --batch_sizes=$batch --precisions=fp32,bf16 \
    --frameworks=$fw --warmup_steps=1 --steps=2 --repetitions=1 --infer_warmup=2 \
    --infer_iterations=5 --out=$D/$name "$@" > $D/$name.log 2>&1
  echo "$name rc=$? $(( $(date +%s) - s )) s $(date -u +%T) $(uptime)" >> $D/machine.txt
}
A=efficientnet_b1,efficientnet_b2,efficientnet_b3,mobilenet_v3_small,regnet_x_3_2gf,regnet_y_3_2gf,convnext_small,convnext_base
run train_a train 32 $A
run train_b train 16 efficientnet_b4,efficientnet_b5
run train_c train 8 efficientnet_b6
run train_d train 4 efficientnet_b7
run infer_b1 infer 1 $A,efficientnet_b4,efficientnet_b5,efficientnet_b6,efficientnet_b7
run infer_b32 infer 32 $A
echo done >> $D/machine.txt
