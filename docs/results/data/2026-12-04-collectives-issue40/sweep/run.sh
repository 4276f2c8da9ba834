#!/bin/bash
# Collective sweeps, old (e31ad34) against new (issue 40), alternating rounds.
cd /tmp/sweep
FAM=allreduce,allgather,reducescatter,broadcast,reduce,alltoall
ARGS="--families=$FAM --collective_dtypes=fp32 --collective_ops=sum --collective_bytes=1024,16777216 --collective_factor=16 --benchmark_repetitions=3 --benchmark_out_format=json"
for round in 1 2; do
  if [ $round = 1 ]; then order="old new"; else order="new old"; fi
  for b in $order; do
    /tmp/${b}_all $ARGS --collective_ranks=2 --benchmark_out=local_${b}_r${round}.json > local_${b}_r${round}.log 2>&1
    mpirun --allow-run-as-root --oversubscribe -np 2 /tmp/${b}_all $ARGS --benchmark_out=mpi_${b}_r${round}.json > mpi_${b}_r${round}.log 2>&1
  done
done
echo done > DONE
