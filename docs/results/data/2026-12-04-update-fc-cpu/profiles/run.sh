#!/bin/bash
# old = 4faee36, new = 68f1dac; rounds old,new then new,old
cd /tmp/meas
run() { # bin tag model prec steps warm
  /tmp/${1}_sb --profile --model=$3 --batch=32 --steps=$5 --warmup_steps=$6 --precision=$4 > ${3}_${4}_${1}_r${2}.txt 2>&1
}
for round in 1 2; do
  if [ $round = 1 ]; then order="old new"; else order="new old"; fi
  for bin in $order; do
    run $bin $round alexnet fp32 3 1
    run $bin $round alexnet bf16 3 1
    run $bin $round resnet50_v1.5 bf16 3 1
    run $bin $round vgg16 bf16 2 1
    run $bin $round googlenet bf16 2 1
  done
done
/tmp/new_sb --profile --direct --model=resnet50_v1.5 --batch=32 --steps=3 --warmup_steps=1 --precision=fp32 > resnet50_v1.5_fp32_new_direct.txt 2>&1
echo done > DONE
