#!/bin/bash
# Training across the two namespaces with the ranks on separate cores: unbound, one thread each.
set -u
B=/work/main/bazel-bin/bench/all
OUT=/work/notes/xhost
COMMON="--preset=tiny --benchmark_repetitions=3 --store=none --benchmark_out_format=json"
TRAIN="--families=train,grads --models=mobilenet,resnet50 --batch_sizes=16 --steps=10 --warmup_steps=2 --threads_per_replica=1"
NS="--hostfile /tmp/sl/hostfile --mca plm_rsh_agent /tmp/sl/nsrun.sh --mca btl tcp,self --mca btl_tcp_if_include 10.231.0.0/24 --mca oob_tcp_if_include 10.231.0.0/24 --mca oob_tcp_keepalive_time 10 --mca oob_tcp_keepalive_intvl 5 --mca oob_tcp_keepalive_probes 3"
uptime >> $OUT/machine.txt
mpirun --allow-run-as-root -np 2 --bind-to none --mca btl self,vader $B $COMMON $TRAIN --benchmark_out=$OUT/train1t_onehost_shm.json > $OUT/train1t_onehost_shm.log 2>&1
/tmp/sl/nsrun.sh cbA mpirun --allow-run-as-root -np 2 --bind-to none $NS $B $COMMON $TRAIN --benchmark_out=$OUT/train1t_twohosts_tcp.json > $OUT/train1t_twohosts_tcp.log 2>&1
echo "train1t done $(date)" >> $OUT/machine.txt; uptime >> $OUT/machine.txt
