#!/usr/bin/env bash
# The GPU check, inside a bundle made by tools/device_bundle.sh, all within
# CNNBENCH_CHECK_SECONDS (340, under the 6 minutes one call may take, so
# that a second call fits the device time). A first run on a GPU must
# explain itself, so what says why something fails comes first and the
# figures after it:
#
#   a. the environment (env.txt): nvidia-smi's GPUs, driver, memory, clocks
#      and power limit, and run.sh --libs (where each CUDA library comes
#      from, the driver, the versions loaded beside the ones built against,
#      unresolved symbols);
#   b. bin/cuda_smoke (60 s): one small case of each GPU operation, each
#      said ok or failed with its reason (smoke.log);
#   c. cuda_ops_test and cuda_conv_test (60 s each), with cuDNN's and
#      cudnn-frontend's logs on (tests.log, each test's output kept to its
#      first and last 2000 lines);
#   d. the headline figures: resnet50_v1.5 bf16 training at batch 256 with
#      CUDA graphs on (120 s: the first compile builds every plan), PyTorch's
#      torchvision resnet50 (channels_last, autocast bf16 and fp16, the same
#      batch, warm-up and steps) for the ratio, and bf16 with CUDA graphs
#      off (bench.log);
#   e. the other GPU tests, gpu_train_test first (CNNBENCH_TEST_SECONDS,
#      90, for all of them), then the rest of the sweep: fp16 training, bf16
#      on cuDNN's legacy batch norm, the bf16 step's per-layer profile
#      (breakdown.log), our conv and GEMM against cuDNN/cuBLASLt called
#      directly, an 8192^3 bf16 GEMM (PyTorch's 8192^3 bf16 matmul, timed
#      in the torch step, beside it), the GPU's peaks (peak/<precision>/cuda),
#      its copies (bandwidth/d2d, h2d,
#      d2h), every collective through NCCL on one GPU (read against d2d),
#      resnet50's first 3x3 convolution, fp32/tf32 training and bf16 on
#      real data.
#
# Each step runs under its own limit and what is left of the budget; one
# that fails, crashes or hangs costs only its own limit, and the steps
# after it still run (a failed smoke check too: the summary then leads with
# it). What the budget does not reach is listed as out of time, with the
# command for a second call at the end of summary.txt.
#
#   ./gpu_check.sh RESULTS_DIR [STEP ...]
#
# STEP: glob patterns of the steps to run (the summary's first column, or a
# test's name), e.g. a second call for what the first ran out of time for:
#   ./gpu_check.sh results2 'train_fp32' 'train_tf32' 'conv3x3' 'gemm_*'
#
# RESULTS_DIR gets at most 7 files: summary.txt (the table, also printed),
# check.json (every number, skip reason, failed test with its first
# message, and each step's JSON), env.txt, smoke.log, tests.log, bench.log
# (bench_all, the PyTorch peer and cuda_overhead), breakdown.log. The
# summary and check.json are rewritten after every step, so a check stopped
# from outside still leaves what it finished. Every program runs with
# CNNBENCH_VERBOSE=1 (its compile log on stderr).
#
# Exit status: 0 when nothing failed (some steps may be out of time), 1
# when something failed, 2 when a CUDA library the build needs is missing
# (nothing runs). A program with unresolved symbols (run.sh --libs exit 3)
# skips only the steps that run it.
set -u
BUNDLE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${1:?usage: gpu_check.sh RESULTS_DIR [STEP ...]}"
shift
ONLY=("$@")
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
BUDGET="${CNNBENCH_CHECK_SECONDS:-340}"
TEST_BUDGET="${CNNBENCH_TEST_SECONDS:-90}"
WARMUP="${CNNBENCH_CHECK_WARMUP:-5}"
STEPS="${CNNBENCH_CHECK_STEPS:-20}"
KEEP_LINES="${CNNBENCH_LOG_LINES:-2000}"
PYTHON="${PYTHON:-python3}"
export CNNBENCH_VERBOSE=1
START=$SECONDS
mkdir -p "$WORK/out"
: >"$WORK/steps.tsv"
: >"$WORK/plan.tsv"
for f in env.txt smoke.log tests.log bench.log breakdown.log; do : >"$OUT/$f"; done
# (libs.txt and torch.log: what an older check wrote here, now in env.txt and bench.log.)
rm -f "$OUT/summary.txt" "$OUT/check.json" "$OUT/libs.txt" "$OUT/torch.log"
NOTE=""
PLAN=0
CHILD=""
CURRENT=""
declare -A UNRESOLVED=()

left() { echo $((BUDGET - (SECONDS - START))); }

# Whether step NAME is among the STEP patterns (all are without any).
selected() {
  local p
  [ ${#ONLY[@]} -eq 0 ] && return 0
  for p in "${ONLY[@]}"; do
    # shellcheck disable=SC2053
    [[ "$1" == $p ]] && return 0
  done
  return 1
}

# Rewrites summary.txt and check.json; with an argument, as of the step
# just finished while the check goes on.
summarize() {
  if [ $# -gt 0 ]; then
    "$PYTHON" "$BUNDLE/summarize.py" "$WORK" "$OUT" "$NOTE" --running="$1" \
      --elapsed=$((SECONDS - START)) --budget="$BUDGET" >/dev/null
  else
    "$PYTHON" "$BUNDLE/summarize.py" "$WORK" "$OUT" "$NOTE" --elapsed=$((SECONDS - START)) \
      --budget="$BUDGET"
  fi
}

# record KIND NAME EXIT SECONDS DETAIL JSON OUTPUT OFFSET (steps.tsv's line).
record() {
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$WORK/steps.tsv"
}

# bound FILE: FILE's first and last KEEP_LINES lines (what is cut said),
# lines cut at 2000 characters.
bound() {
  local n long
  n=$(wc -l <"$1")
  long=$(awk 'length > 2000 {c++} END {print c + 0}' "$1")
  [ "$long" -gt 0 ] && echo "[gpu_check: $long lines over 2000 characters are cut to 2000]"
  if [ "$n" -le $((2 * KEEP_LINES)) ]; then
    cut -c1-2000 "$1"
  else
    head -n "$KEEP_LINES" "$1" | cut -c1-2000
    echo "[gpu_check: $((n - 2 * KEEP_LINES)) lines cut here, of $n; the first and last $KEEP_LINES are kept]"
    tail -n "$KEEP_LINES" "$1" | cut -c1-2000
  fi
}

# A stop from outside (TERM, INT, HUP): the running step is stopped and
# recorded as such, and the summary says so.
on_signal() {
  trap '' TERM INT HUP
  if [ -n "$CHILD" ]; then
    # timeout runs in a process group of its own, with the program in it.
    kill -TERM -- "-$CHILD" 2>/dev/null || kill -TERM "$CHILD" 2>/dev/null
    local _
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      kill -0 "$CHILD" 2>/dev/null || break
      sleep 0.5
    done
    kill -KILL -- "-$CHILD" 2>/dev/null || kill -KILL "$CHILD" 2>/dev/null
  fi
  if [ -n "$CURRENT" ]; then
    local kind name log raw offset
    IFS=$'\t' read -r kind name log raw offset <<<"$CURRENT"
    [ "$raw" != "$log" ] && [ -f "$raw" ] && bound "$raw" >>"$log"
    record "$kind" "$name" stopped $((SECONDS - STEP_T0)) "by SIG$1 while it ran" "" "$raw" "$offset"
  fi
  NOTE="${NOTE:+$NOTE; }the check was stopped by SIG$1 after $((SECONDS - START))s"
  summarize >/dev/null
  echo "gpu_check: stopped by SIG$1; results so far in $OUT" >&2
  exit 143
}
trap 'on_signal TERM' TERM
trap 'on_signal INT' INT
trap 'on_signal HUP' HUP

# step KIND NAME LIMIT LOG JSON CMD...: runs CMD under min(LIMIT, time
# left), its output appended to LOG (tests: to a file of their own, then
# LOG gets its first and last lines), and records kind, name, exit status,
# seconds and the JSON it should write. A CMD that runs a program through
# run.sh is skipped when that program has unresolved symbols.
step() {
  local kind="$1" name="$2" limit="$3" log="$4" json="$5" rc a prev="" program=""
  shift 5
  selected "$name" || return 0
  if [ "$PLAN" = 1 ]; then
    printf '%s\t%s\n' "$kind" "$name" >>"$WORK/plan.tsv"
    return 0
  fi
  for a in "$@"; do
    case "$prev" in */run.sh) program="$a"; break ;; esac
    prev="$a"
  done
  if [ -n "$program" ] && [ -n "${UNRESOLVED[$program]:-}" ]; then
    record "$kind" "$name" skipped 0 "unresolved symbol ${UNRESOLVED[$program]} in $program (env.txt)" "" "" ""
    echo "== $kind $name: skipped: unresolved symbol ${UNRESOLVED[$program]} in $program" >&2
    summarize "$name"
    return 0
  fi
  local remaining
  remaining=$(left)
  if [ "$remaining" -lt 15 ]; then
    record "$kind" "$name" skipped 0 "out of time (the check has ${BUDGET}s)" "" "" ""
    summarize "$name"
    return 0
  fi
  [ "$limit" -gt "$remaining" ] && limit=$remaining
  local raw="$log" offset
  [ "$kind" = test ] && raw="$WORK/out/$name.out"
  echo "== $kind $name (limit ${limit}s, at $((SECONDS - START))s): $*" | tee -a "$log" >&2
  offset=$(stat -c %s "$raw" 2>/dev/null || echo 0)
  CURRENT="$kind"$'\t'"$name"$'\t'"$log"$'\t'"$raw"$'\t'"$offset"
  STEP_T0=$SECONDS
  # In the background so that a stop from outside is handled at once.
  timeout -k 5 "$limit" "$@" >>"$raw" 2>&1 </dev/null &
  CHILD=$!
  wait "$CHILD"
  rc=$?
  CHILD=""
  CURRENT=""
  local secs=$((SECONDS - STEP_T0)) detail=""
  # 124: timeout's TERM; 137: its KILL 5 s later (a KILL before the limit
  # is someone else's, and says so as a signal).
  if [ $rc -eq 124 ] || { [ $rc -eq 137 ] && [ "$secs" -ge "$limit" ]; }; then
    detail="timed out after ${limit}s"
  fi
  [ "$raw" != "$log" ] && bound "$raw" >>"$log"
  record "$kind" "$name" "$rc" "$secs" "$detail" "$json" "$raw" "$offset"
  summarize "$name"
}

skip() {  # skip KIND NAME REASON
  selected "$2" || return 0
  if [ "$PLAN" = 1 ]; then
    printf '%s\t%s\n' "$1" "$2" >>"$WORK/plan.tsv"
    return 0
  fi
  record "$1" "$2" skipped 0 "$3" "" "" ""
  echo "== $1 $2: skipped: $3" >&2
  summarize "$2"
}

# The sweep goes through //bench:all.
bench() {  # bench NAME LIMIT ARGS...
  local name="$1" limit="$2"
  shift 2
  step bench "$name" "$limit" "$OUT/bench.log" "$WORK/bench_$name.json" \
    "$BUNDLE/run.sh" bench_all --benchmark_out="$WORK/bench_$name.json" \
    --benchmark_out_format=json --repetitions=1 "$@"
}
train() {  # train NAME PRECISION [ARGS...]  (TRAIN_LIMIT seconds, default 75)
  local name="$1" precision="$2"
  shift 2
  bench "$name" "${TRAIN_LIMIT:-75}" --families=train --models=resnet50_v1.5 --batch_sizes=256 --gpus=1 \
    --data=synthetic --precisions="$precision" --warmup_steps="$WARMUP" --steps="$STEPS" "$@"
}
# gtest NAME LIMIT [ENV...]: a GPU test with its GoogleTest JSON.
gtest() {
  local name="$1" limit="$2"
  shift 2
  step test "$name" "$limit" "$OUT/tests.log" "$WORK/$name.json" \
    env "$@" "$BUNDLE/run.sh" "$name" --gtest_output="json:$WORK/$name.json"
}
# cuDNN's and cudnn-frontend's logs, on stderr, for the op tests.
CUDNN_LOGS=(CUDNN_LOGLEVEL_DBG=2 CUDNN_LOGDEST_DBG=stderr CUDNN_FRONTEND_LOG_INFO=1
            CUDNN_FRONTEND_LOG_FILE=stderr)

# Whether this build's //bench:all has --cuda_graph (asked once).
HAS_GRAPH_FLAG=""
graph_flag() {
  if [ -z "$HAS_GRAPH_FLAG" ]; then
    HAS_GRAPH_FLAG=no
    timeout 20 "$BUNDLE/run.sh" bench_all --helpfull 2>/dev/null | grep -q -- '--cuda_graph' && HAS_GRAPH_FLAG=yes
  fi
  [ "$HAS_GRAPH_FLAG" = yes ]
}

# Every step after the environment, in order; run once to plan (PLAN=1:
# the names only, so that a summary written midway names what is still to
# come) and once to run.
sequence() {
  local t name
  # b. One small case of each GPU operation.
  if [ -x "$BUNDLE/bin/cuda_smoke" ]; then
    step smoke cuda_smoke 60 "$OUT/smoke.log" "$WORK/smoke.json" \
      "$BUNDLE/run.sh" cuda_smoke --json="$WORK/smoke.json"
  else
    skip smoke cuda_smoke "this bundle has no bin/cuda_smoke"
  fi
  # c. The op and conv tests, with cuDNN's logs.
  for name in cuda_ops_test cuda_conv_test; do
    if [ -x "$BUNDLE/bin/$name" ]; then
      gtest "$name" 60 "${CUDNN_LOGS[@]}"
    else
      skip test "$name" "this bundle has no bin/$name"
    fi
  done
  # d. The headline figures, with CUDA graphs on (the default) and off.
  TRAIN_LIMIT=120 train train_bf16 bf16
  step torch torch 120 "$OUT/bench.log" "$WORK/torch.json" \
    "$PYTHON" "$BUNDLE/peers/torch_train_step.py" --batch=256 --warmup_steps="$WARMUP" \
    --steps="$STEPS" --precisions=bf16,fp16 --matmul=8192 --json="$WORK/torch.json"
  # (Asked only where the step would run: the question costs up to 20 s.)
  if [ "$PLAN" = 1 ] || [ -n "${UNRESOLVED[bench_all]:-}" ] || [ "$(left)" -lt 15 ] ||
     ! selected train_bf16_no_graph || graph_flag; then
    train train_bf16_no_graph bf16 --cuda_graph=false
  else
    skip bench train_bf16_no_graph "this build's //bench:all has no --cuda_graph flag (CUDA graph on/off not compared)"
  fi
  # Whether the GPU learns what the CPU learns: the convergence check
  # (lenet at 16 px on a generated class-coloured set, the same seed) on the
  # CPU, then on the GPU in every precision; the curves are in
  # convergence.log, summary.txt sets each final top-1 beside the CPU's.
  if [ -x "$BUNDLE/bin/convergence" ]; then
    step convergence convergence_cpu 60 "$OUT/convergence.log" "$WORK/convergence_cpu.json" \
      "$BUNDLE/run.sh" convergence --backend=onednn --json="$WORK/convergence_cpu.json"
    for name in fp32 tf32 fp16 bf16; do
      step convergence "convergence_$name" 45 "$OUT/convergence.log" "$WORK/convergence_$name.json" \
        "$BUNDLE/run.sh" convergence --backend=cuda --precision="$name" \
        --json="$WORK/convergence_$name.json"
    done
  else
    skip convergence convergence_cpu "this bundle has no bin/convergence"
  fi
  # Inference: resnet50_v1.5 bf16 at batch 1 (latency) and 256 (throughput),
  # 200 batches each timed on its own, a CUDA graph replayed.
  bench infer_bf16 90 --families=infer --infer_models=resnet50_v1.5 --infer_batch_sizes=1,256 \
    --gpus=1 --data=synthetic --precisions=bf16 --infer_warmup=10 --infer_iterations=200
  # e. The other GPU tests, within their own share of the time, the
  # training test first.
  local tests_start=$SECONDS ordered=() share
  for t in "$BUNDLE/bin/gpu_train_test" "$BUNDLE"/bin/*_test; do
    name="$(basename "$t")"
    [ -x "$t" ] || continue
    case " cuda_ops_test cuda_conv_test ${ordered[*]:-} " in *" $name "*) continue ;; esac
    ordered+=("$name")
  done
  for name in "${ordered[@]}"; do
    share=$((TEST_BUDGET - (SECONDS - tests_start)))
    if [ "$share" -lt 10 ]; then
      skip test "$name" "out of time (the other tests' ${TEST_BUDGET}s are spent)"
      continue
    fi
    [ "$share" -gt 60 ] && share=60
    gtest "$name" "$share"
  done
  # The rest of the sweep. bf16 on cuDNN's legacy batch norm: the baseline
  # of the batch norm graphs, and a set of figures should they fail.
  train train_fp16 fp16
  train train_bf16_legacy_bn bf16 --cuda_batch_norm=legacy
  # Where the bf16 step's time goes: each layer between device events (no
  # CUDA graph), with the engines each layer runs, and one step as a Chrome
  # trace (trace.json in the results, for Perfetto).
  if [ -x "$BUNDLE/bin/step_breakdown" ]; then
    step profile step_breakdown 90 "$OUT/breakdown.log" "" \
      "$BUNDLE/run.sh" step_breakdown --profile --backend=cuda --model=resnet50_v1.5 --batch=256 \
      --precision=bf16 --steps=5 --warmup_steps=2 --trace_file="$OUT/trace.json"
  else
    skip profile step_breakdown "this bundle has no bin/step_breakdown"
  fi
  # Our conv and GEMM kernels against cuDNN and cuBLASLt called directly.
  if [ -x "$BUNDLE/bin/cuda_overhead" ]; then
    step overhead cuda_overhead 60 "$OUT/bench.log" "$WORK/overhead.json" \
      "$BUNDLE/run.sh" cuda_overhead --json="$WORK/overhead.json"
  else
    skip overhead cuda_overhead "this bundle has no bin/cuda_overhead"
  fi
  bench gemm_bf16_8192 45 --preset=full --families=gemm --precisions=bf16 \
    --benchmark_filter='^gemm/bf16/cuda/gemm:m8192n8192k8192/' --benchmark_min_time=0.5
  # The GPU's arithmetic ceilings: fp32's FMA loop and the tensor cores'
  # tf32, fp16, bf16 and fp8 8192^3 GEMMs (the fastest cuBLASLt candidate),
  # each checked; summary.txt reads bf16's against PyTorch's matmul.
  bench peak_gpu 60 --families=peak --benchmark_filter='^peak/.*/cuda/' --benchmark_min_time=0.2
  # The GPU's memory ceilings: device-to-device, pinned host-to-device and
  # device-to-host copies of 256 MiB, each checked against its source.
  bench bandwidth_gpu 40 --families=bandwidth --bandwidth_bytes=268435456 \
    --benchmark_filter='^bandwidth/.*/cuda/' --benchmark_min_time=0.2
  # Every collective through NCCL on one GPU (ranks:1, a copy through
  # NCCL), 8 B to 64 MiB by 4x, each result checked; at one rank nccl-tests'
  # busbw is 0 but for broadcast and reduce, which summary.txt reads
  # against bandwidth_gpu's d2d.
  bench nccl_1gpu 60 --families=allreduce,allgather,reducescatter,broadcast,reduce,alltoall --gpus=1 \
    --collective_bytes=8,67108864 --collective_factor=4 --benchmark_filter='/nccl/'
  # resnet50's first 3x3 convolution (64 channels at 56x56), its three passes.
  bench conv3x3 60 --families=conv --kernel_models=resnet50 --kernel_batch=256 \
    --max_kernel_shapes=0 --precisions=bf16 --benchmark_min_time=0.1 \
    --benchmark_filter='^conv/.*/cuda/conv:mb256_ic64oc64_ih56oh56kh3'
  train train_fp32 fp32
  train train_tf32 tf32
  # Real data on the GPU: the generated JPEG set through the input pipeline
  # (14 decode threads), each batch copied on the side stream beside the step.
  bench train_bf16_real 120 --families=train --models=resnet50_v1.5 --batch_sizes=256 --gpus=1 \
    --data=real --input_cores=14 --precisions=bf16 --warmup_steps="$WARMUP" --steps="$STEPS"
}

# a. The environment.
smi() {  # smi ARGS...: nvidia-smi, or why not
  if command -v nvidia-smi >/dev/null 2>&1; then
    timeout 30 nvidia-smi "$@" 2>&1 || echo "nvidia-smi $*: exit $?"
  else
    echo "no nvidia-smi on this machine (PATH: $PATH)"
  fi
}
{
  echo "== gpu_check on $(hostname 2>/dev/null || echo '?') at $(date -u +%Y-%m-%dT%H:%M:%SZ), budget ${BUDGET}s"
  echo "$(uname -srm 2>/dev/null); $("$PYTHON" --version 2>&1)"
  echo "== the bundle (build_versions.txt)"
  cat "$BUNDLE/build_versions.txt" 2>/dev/null || echo "no build_versions.txt"
  echo "== nvidia-smi -L"
  smi -L
  echo "== nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv"
  smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv
  echo "== run.sh --libs"
} >"$OUT/env.txt" 2>&1
libs_offset=$(stat -c %s "$OUT/env.txt")
t0=$SECONDS
timeout -k 5 60 "$BUNDLE/run.sh" --libs >>"$OUT/env.txt" 2>&1 </dev/null &
CHILD=$!
wait "$CHILD"
libs_rc=$?
CHILD=""
record libs libraries "$libs_rc" $((SECONDS - t0)) "" "" "$OUT/env.txt" "$libs_offset"
cat "$OUT/env.txt" >&2
case $libs_rc in
  0) ;;
  2)
    echo "gpu_check: a CUDA library the build needs is missing (env.txt); nothing runs" >&2
    NOTE="a CUDA library the build needs is missing (the MISSING lines of env.txt); nothing ran"
    summarize
    exit 2
    ;;
  3)
    while IFS=$'\t' read -r program symbol; do
      [ -n "$program" ] && UNRESOLVED[$program]="$symbol"
    done < <(sed -n 's/^MISSING API in \([^:]*\): \([^ ]*\).*/\1\t\2/p' "$OUT/env.txt")
    NOTE="programs with unresolved symbols, their steps skipped: ${!UNRESOLVED[*]} (env.txt)"
    ;;
  *) NOTE="run.sh --libs: exit $libs_rc (env.txt); the check goes on" ;;
esac

PLAN=1 sequence
summarize "the environment"
PLAN=0 sequence

summarize
rc=$?
echo "gpu_check: $((SECONDS - START))s; results in $OUT" >&2
[ $rc -eq 0 ] || exit 1
exit 0
