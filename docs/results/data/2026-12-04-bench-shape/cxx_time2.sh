#!/bin/bash
# Second pair, the other order: cold full builds (output base expunged, no disk cache).
for v in 17 20; do
  cd /work/wt$v
  ./bazelw clean --expunge >/dev/null 2>&1
  start=$(date +%s)
  ./bazelw build //... --disk_cache= > /work/build$v-2.log 2>&1
  rc=$?
  end=$(date +%s)
  echo "c++$v (second) rc=$rc seconds=$((end-start)) $(grep -o '[0-9]* total actions' /work/build$v-2.log | tail -1)" >> /work/cxx_time.out
  ./bazelw shutdown >/dev/null 2>&1
done
