#!/bin/bash
# Collectives and a 2-rank training step: one host (shared memory), one host over TCP loopback,
# two hosts (network namespaces cbA/cbB over a veth pair, TCP). Quiet machine; run sequentially.
set -u
B=/work/main/bazel-bin/bench/all
OUT=/work/notes/xhost
COMMON="--preset=tiny --benchmark_repetitions=3 --store=none --benchmark_out_format=json"
COLL="--families=allreduce,allgather,alltoall --collective_bytes=1K,64M --collective_factor=8 --collective_iters=20 --collective_warmup=5"
TRAIN="--families=train,grads --models=mobilenet,resnet50 --batch_sizes=16 --steps=10 --warmup_steps=2"
NS="--hostfile /tmp/sl/hostfile --mca plm_rsh_agent /tmp/sl/nsrun.sh --mca btl tcp,self --mca btl_tcp_if_include 10.231.0.0/24 --mca oob_tcp_if_include 10.231.0.0/24 --mca oob_tcp_keepalive_time 10 --mca oob_tcp_keepalive_intvl 5 --mca oob_tcp_keepalive_probes 3"
uptime > $OUT/machine.txt; grep -m1 "model name" /proc/cpuinfo >> $OUT/machine.txt; nproc >> $OUT/machine.txt
for what in coll train; do
  ARGS=$([ $what = coll ] && echo "$COLL" || echo "$TRAIN")
  mpirun --allow-run-as-root -np 2 --mca btl self,vader $B $COMMON $ARGS --benchmark_out=$OUT/${what}_onehost_shm.json > $OUT/${what}_onehost_shm.log 2>&1
  mpirun --allow-run-as-root -np 2 --mca btl self,tcp --mca btl_tcp_if_include lo $B $COMMON $ARGS --benchmark_out=$OUT/${what}_onehost_tcp.json > $OUT/${what}_onehost_tcp.log 2>&1
  /tmp/sl/nsrun.sh cbA mpirun --allow-run-as-root -np 2 $NS $B $COMMON $ARGS --benchmark_out=$OUT/${what}_twohosts_tcp.json > $OUT/${what}_twohosts_tcp.log 2>&1
  echo "$what done $(date)" >> $OUT/machine.txt
done
uptime >> $OUT/machine.txt
