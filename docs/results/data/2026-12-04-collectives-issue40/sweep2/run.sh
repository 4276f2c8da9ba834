#!/bin/bash
cd /tmp/sweep2
FAM=allreduce,allgather,reducescatter,broadcast,reduce,alltoall
ARGS="--families=$FAM --collective_dtypes=fp32 --collective_ops=sum --collective_bytes=1024,262144 --collective_factor=16 --benchmark_repetitions=5 --benchmark_out_format=json --collective_ranks=2"
for round in 1 2 3 4; do
  if [ $((round % 2)) = 1 ]; then order="old new"; else order="new old"; fi
  for b in $order; do
    /tmp/${b}_all $ARGS --benchmark_out=local_${b}_r${round}.json > local_${b}_r${round}.log 2>&1
  done
done
echo done > DONE
