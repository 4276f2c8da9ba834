#!/bin/bash
# Cold full builds (no disk cache, fresh output base) of one tree: C++20, then C++17.
for v in 20 17; do
  cd /work/wt$v
  ./bazelw shutdown >/dev/null 2>&1
  start=$(date +%s)
  ./bazelw build //... --disk_cache= > /work/build$v.log 2>&1
  rc=$?
  end=$(date +%s)
  echo "c++$v rc=$rc seconds=$((end-start)) $(grep -o '[0-9]* total actions' /work/build$v.log | tail -1)" >> /work/cxx_time.out
  ./bazelw shutdown >/dev/null 2>&1
done
