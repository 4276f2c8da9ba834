#!/usr/bin/env bash
# The GPU check, inside a bundle made by tools/device_bundle.sh: one call
# of the device tool (at most 10 minutes) that must bring back every
# headline figure or say exactly why not. It runs within
# CNNBENCH_CHECK_SECONDS (520: the 600 s of one call less the unpacking and
# a margin), and the order follows from that:
#
#   a. the environment (env.txt): nvidia-smi's GPUs, driver, memory, clocks
#      and power limit, run.sh --libs (where each CUDA library comes from,
#      the driver, the versions loaded beside the ones built against,
#      unresolved symbols). Without a visible GPU the check says so once
#      and stops here (exit 3).
#   b. cuda_smoke: one small case of each GPU operation, each said ok or
#      failed with its reason (smoke.log): what says why things fail.
#   c. the ceilings, which need no cuDNN plan: the GPU's arithmetic peaks
#      (peak_gpu), its copies (bandwidth_gpu), every collective through
#      NCCL on one GPU (nccl_1gpu, NCCL_DEBUG=WARN).
#   d. the headline: resnet50_v1.5 bf16 training at batch 256 with CUDA
#      graphs (train_bf16), PyTorch's resnet50 in bf16 for the ratio and
#      its 8192^3 bf16 matmul (torch), bf16 on cuDNN's legacy batch norm
#      (train_bf16_legacy_bn), bf16 without CUDA graphs (train_bf16_no_graph).
#   e. the op tests, with cuDNN's and cudnn-frontend's logs (tests.log).
#   f. the rest, as far as the budget goes: inference, the other GPU tests,
#      the convergence check on the GPU, fp16 (and PyTorch's), the bf16
#      step's per-layer profile and trace, our kernels against cuDNN and
#      cuBLASLt called directly, the 8192^3 GEMM case, resnet50's first 3x3
#      convolution, fp32, tf32, bf16 on real data.
#
# The schedule below gives each step its limit and its estimate (seconds;
# cautious: on an H100 each step took less, the whole check 330 s, see
# docs/results/2026-12-05-first-gpu-run-h100.md). `gpu_check.sh
# --schedule` prints it with the running sum of the estimates, which the
# README's table repeats. A step runs under min(its limit, the time left);
# one whose estimate no longer fits in the time left is not started ("out
# of time"), and the check goes on with the shorter steps after it. A step
# that fails, crashes or hangs costs only its own limit. A step stopped
# because its limit had been cut to the time left is "out of time (cut
# short by the budget)", not failed. What is out of time, not reached, cut
# short or stopped from outside makes the last line of summary.txt: the
# command for a second call, which runs only those steps:
#
#   ./gpu_check.sh RESULTS_DIR [STEP ...]     # STEP: glob patterns of step names
#   ./gpu_check.sh --schedule                 # the schedule, and nothing runs
#
# RESULTS_DIR gets at most 8 files (the device tool brings back 8):
# summary.txt (the table, also printed), check.json (every number, skip
# reason, failure message whole, and each step's JSON), env.txt, smoke.log,
# tests.log, bench.log (//bench:all, the PyTorch peer, cuda_overhead, the
# convergence checks), breakdown.log and trace.json (the profile's step).
# summary.txt and check.json are rewritten after every step, so a check
# stopped from outside keeps what it finished. Every program runs with
# CNNBENCH_VERBOSE=1, CNNBENCH_CHECK_STEP set to its step's name and
# CNNBENCH_COMPILE_DEADLINE_S to its limit less a margin (15 s, or a third
# of a limit under 45 s): a compile still running then ends its case with
# "deadline: ..." naming the layer, which the summary reads as out of time.
# CNNBENCH_CUDA_PLAN_CACHE names one plan-choice file for the whole call,
# so each cuDNN plan is timed once (the summary counts hits and misses).
#
# Exit status: 0 when nothing failed (some steps may be out of time); 1
# when something failed (a case error that is neither "unsupported:" nor
# "OOM:" is a failure); 2 when the arguments are wrong (an unknown option,
# a RESULTS_DIR that is a file or cannot be made or written: nothing runs
# and nothing is written) or a CUDA library the build needs is missing
# (nothing runs); 3 when no GPU is visible (nothing runs after the
# environment, and only env.txt, summary.txt and check.json are written);
# 143 when stopped by a signal. A program with unresolved
# symbols (run.sh --libs exit 3) skips only the steps that run it; without
# libcudnn_ops (optional) only the legacy batch norm step skips.
#
# CNNBENCH_CHECK_TIME_SCALE=K (tests only) runs the clock K times fast: every
# limit, estimate and the budget stay in check seconds, a check second
# lasting 1/K of a real one.
set -u
BUNDLE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUDGET="${CNNBENCH_CHECK_SECONDS:-520}"
WARMUP="${CNNBENCH_CHECK_WARMUP:-5}"
STEPS="${CNNBENCH_CHECK_STEPS:-20}"
KEEP_LINES="${CNNBENCH_LOG_LINES:-2000}"
SCALE="${CNNBENCH_CHECK_TIME_SCALE:-1}"
PYTHON="${PYTHON:-python3}"

# name  limit  estimate  what (the environment is stage a, before any step)
SCHEDULE="
environment           60    5  nvidia-smi, run.sh --libs
cuda_smoke            75   20  one small case of each GPU operation
peak_gpu              60   25  FMA peak, tf32/fp16/bf16/fp8 8192^3 GEMM peaks
bandwidth_gpu         40   10  d2d, h2d, d2h copies of 256 MiB
nccl_1gpu             45   20  every collective through NCCL on one GPU
train_bf16           200   60  resnet50_v1.5 bf16 batch 256, CUDA graphs (compiles every plan)
torch                120   60  PyTorch resnet50 bf16 batch 256, 8192^3 bf16 matmul
train_bf16_legacy_bn 120   50  the same on cuDNN's legacy batch norm
train_bf16_no_graph  120   45  the same without CUDA graphs
cuda_ops_test         60   40  the op tests, cuDNN's logs on
cuda_conv_test        60   40  the conv tests, cuDNN's logs on
infer_bf16            90   40  resnet50_v1.5 bf16 inference, batch 1 and 256
other_tests           90   60  the other GPU tests, gpu_train_test first (shared limit)
convergence_fp32      45   15  the convergence check on the GPU
convergence_tf32      45   15
convergence_fp16      45   15
convergence_bf16      45   15
train_fp16           120   50  resnet50_v1.5 fp16
torch_fp16           120   45  PyTorch resnet50 fp16
step_breakdown        90   40  the bf16 step per layer, and one step as trace.json
cuda_overhead         60   30  our conv and GEMM against cuDNN/cuBLASLt called directly
gemm_bf16_8192        45   15  the 8192^3 bf16 GEMM case
conv3x3               60   20  resnet50's first 3x3 convolution, three passes
train_fp32           120   50  resnet50_v1.5 fp32
train_tf32           120   50  resnet50_v1.5 tf32
train_bf16_real      120   60  resnet50_v1.5 bf16 on real data (JPEG decode on 14 threads)
"
declare -A LIMIT=() ESTIMATE=()
while read -r _name _limit _estimate _; do
  [ -n "$_name" ] || continue
  LIMIT[$_name]=$_limit
  ESTIMATE[$_name]=$_estimate
done <<<"$SCHEDULE"
TEST_BUDGET="${CNNBENCH_TEST_SECONDS:-${LIMIT[other_tests]}}"

if [ "${1:-}" = "--schedule" ]; then
  printf '%-22s %6s %9s %5s  %s\n' step limit estimate sum what
  sum=0
  while read -r _name _limit _estimate _what; do
    [ -n "$_name" ] || continue
    sum=$((sum + _estimate))
    printf '%-22s %6s %9s %5s  %s\n' "$_name" "$_limit" "$_estimate" "$sum" "$_what"
  done <<<"$SCHEDULE"
  echo "budget ${BUDGET}s"
  exit 0
fi

USAGE="usage: gpu_check.sh RESULTS_DIR [STEP ...] | --schedule"
# The shared checks (script_args.sh, beside this script in the bundle).
# shellcheck source=tools/bundle/script_args.sh
source "$(dirname "${BASH_SOURCE[0]}")/script_args.sh"
check_args gpu_check.sh "$USAGE" "$@"
OUT="$(results_folder gpu_check.sh "$1")" || exit 2
shift
ONLY=("$@")
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export CNNBENCH_VERBOSE=1
# One plan-choice file for the whole call (docs/kernels.md): each cuDNN plan
# is searched and timed in the first step that builds it, and later steps
# build the chosen engine alone.
export CNNBENCH_CUDA_PLAN_CACHE="$WORK/plan_choices.tsv"

# The clock, in check seconds (milliseconds where bash has EPOCHREALTIME).
now_ms() {
  local t="${EPOCHREALTIME:-}"
  if [ -n "$t" ]; then
    t="${t//[.,]/}"
    echo $((10#$t / 1000))
  else
    echo $((SECONDS * 1000))
  fi
}
START_MS=$(now_ms)
elapsed() { echo $((($(now_ms) - START_MS) * SCALE / 1000)); }
left() { echo $((BUDGET - $(elapsed))); }
real_s() {  # real_s CHECK_SECONDS: real seconds, for timeout and sleep
  local ms=$(($1 * 1000 / SCALE))
  printf '%d.%03d' $((ms / 1000)) $((ms % 1000))
}

mkdir -p "$WORK/out"
: >"$WORK/steps.tsv"
: >"$WORK/plan.tsv"
# What an older check wrote here goes (also its libs.txt, torch.log and
# convergence.log, now folded into the files below). A log is made by the
# first step that writes to it: a check that stops early leaves no empty ones.
rm -f "$OUT/env.txt" "$OUT/smoke.log" "$OUT/tests.log" "$OUT/bench.log" "$OUT/breakdown.log" \
  "$OUT/summary.txt" "$OUT/check.json" "$OUT/libs.txt" "$OUT/torch.log" "$OUT/convergence.log" \
  "$OUT/trace.json"
NOTE=""
PLAN=0
CHILD=""
CURRENT=""
LEGACY_BN_SKIP=""
declare -A UNRESOLVED=()

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
      --elapsed="$(elapsed)" --budget="$BUDGET" >/dev/null
  else
    "$PYTHON" "$BUNDLE/summarize.py" "$WORK" "$OUT" "$NOTE" --elapsed="$(elapsed)" \
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
    awk -v k="$KEEP_LINES" 'NR <= k' "$1" | cut -c1-2000
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
    record "$kind" "$name" stopped $(($(elapsed) - STEP_T0)) "by SIG$1 while it ran" "" "$raw" "$offset"
  fi
  NOTE="${NOTE:+$NOTE; }the check was stopped by SIG$1 after $(elapsed)s"
  summarize >/dev/null
  echo "gpu_check: stopped by SIG$1; results so far in $OUT" >&2
  exit 143
}
trap 'on_signal TERM' TERM
trap 'on_signal INT' INT
trap 'on_signal HUP' HUP

# step KIND NAME LOG JSON CMD...: runs CMD under min(the step's limit, the
# time left), its output appended to LOG (tests: to a file of their own,
# then LOG gets its first and last lines), and records kind, name, exit
# status, seconds and the JSON it should write. STEP_LIMIT and
# STEP_ESTIMATE, where set, replace the schedule's (the other tests). A
# CMD that runs a program through run.sh is skipped when that program has
# unresolved symbols.
step() {
  local kind="$1" name="$2" log="$3" json="$4" rc a prev="" program=""
  shift 4
  selected "$name" || return 0
  if [ "$PLAN" = 1 ]; then
    printf '%s\t%s\n' "$kind" "$name" >>"$WORK/plan.tsv"
    return 0
  fi
  local limit="${STEP_LIMIT:-${LIMIT[$name]:-60}}" estimate="${STEP_ESTIMATE:-${ESTIMATE[$name]:-10}}"
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
  local remaining own="$limit" cut=""
  remaining=$(left)
  if [ "$remaining" -lt "$estimate" ] || [ "$remaining" -lt 5 ]; then
    # (No summary here: the next step's or the last one lists it; a summary
    # written meanwhile counts it as not reached, which a second call runs
    # the same.)
    record "$kind" "$name" skipped 0 "out of time (needs about ${estimate}s, $((remaining > 0 ? remaining : 0))s of the check's ${BUDGET}s left)" "" "" ""
    return 0
  fi
  if [ "$limit" -gt "$remaining" ]; then
    limit=$remaining
    cut=yes
  fi
  local raw="$log" offset
  [ "$kind" = test ] && raw="$WORK/out/$name.out"
  echo "== $kind $name (limit ${limit}s, at $(elapsed)s): $*" | tee -a "$log" >&2
  offset=$(stat -c %s "$raw" 2>/dev/null || echo 0)
  CURRENT="$kind"$'\t'"$name"$'\t'"$log"$'\t'"$raw"$'\t'"$offset"
  STEP_T0=$(elapsed)
  # The compile deadline (core/compile_log.h): plan building stops a
  # margin before the limit, so a compile that would run past it ends with
  # an error naming its layer, and the results file is still written.
  local deadline=$((limit > 45 ? limit - 15 : limit * 2 / 3))
  # In the background so that a stop from outside is handled at once.
  CNNBENCH_CHECK_STEP="$name" CNNBENCH_COMPILE_DEADLINE_S="$(real_s "$deadline")" \
    timeout -k "$(real_s 5)" "$(real_s "$limit")" "$@" >>"$raw" 2>&1 </dev/null &
  CHILD=$!
  wait "$CHILD"
  rc=$?
  CHILD=""
  CURRENT=""
  local secs=$(($(elapsed) - STEP_T0)) detail=""
  # 124: timeout's TERM; 137: its KILL 5 s later (a KILL before the limit
  # is someone else's, and says so as a signal).
  if [ $rc -eq 124 ] || { [ $rc -eq 137 ] && [ "$secs" -ge "$limit" ]; }; then
    if [ -n "$cut" ]; then
      detail="cut short by the budget after ${limit}s (its own limit is ${own}s)"
    else
      detail="timed out after ${limit}s"
    fi
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

# has PROGRAM: the bundle has bin/PROGRAM; else the step NAME of KIND is
# skipped saying so.  has PROGRAM KIND NAME
has() {
  [ -x "$BUNDLE/bin/$1" ] && return 0
  skip "$2" "$3" "this bundle has no bin/$1"
  return 1
}

# The sweep goes through //bench:all (its exit 3: a case failed, which the
# summary reads from the JSON).
bench() {  # bench NAME ARGS...
  local name="$1"
  shift
  step bench "$name" "$OUT/bench.log" "$WORK/bench_$name.json" \
    env NCCL_DEBUG="${NCCL_DEBUG:-WARN}" "$BUNDLE/run.sh" bench_all \
    --benchmark_out="$WORK/bench_$name.json" --benchmark_out_format=json --repetitions=1 \
    --store=none "$@"
}
train() {  # train NAME PRECISION [ARGS...]
  local name="$1" precision="$2"
  shift 2
  bench "$name" --families=train --models=resnet50_v1.5 --batch_sizes=256 --gpus=1 \
    --data=synthetic --precisions="$precision" --warmup_steps="$WARMUP" --steps="$STEPS" "$@"
}
torch_peer() {  # torch_peer NAME PRECISION [ARGS...]
  local name="$1" precision="$2"
  shift 2
  step torch "$name" "$OUT/bench.log" "$WORK/$name.json" \
    "$PYTHON" "$BUNDLE/peers/torch_train_step.py" --batch=256 --warmup_steps="$WARMUP" \
    --steps="$STEPS" --precisions="$precision" --json="$WORK/$name.json" "$@"
}
# gtest NAME [ENV...]: a GPU test with its GoogleTest JSON.
gtest() {
  local name="$1"
  shift
  step test "$name" "$OUT/tests.log" "$WORK/$name.json" \
    env "$@" "$BUNDLE/run.sh" "$name" --gtest_output="json:$WORK/$name.json"
}
# cuDNN's and cudnn-frontend's logs, on stderr, for the op tests.
CUDNN_LOGS=(CUDNN_LOGLEVEL_DBG=2 CUDNN_LOGDEST_DBG=stderr CUDNN_FRONTEND_LOG_INFO=1
            CUDNN_FRONTEND_LOG_FILE=stderr)

# Every step after the environment, in order; run once to plan (PLAN=1:
# the names only, so that a summary written midway names what is still to
# come) and once to run.
sequence() {
  local t name
  # b. One small case of each GPU operation: what says why things fail.
  has cuda_smoke smoke cuda_smoke &&
    step smoke cuda_smoke "$OUT/smoke.log" "$WORK/smoke.json" \
      "$BUNDLE/run.sh" cuda_smoke --json="$WORK/smoke.json"
  # c. The ceilings, which need no cuDNN plan. The arithmetic ones: fp32's
  # FMA loop and the tensor cores' tf32, fp16, bf16 and fp8 8192^3 GEMMs
  # (the fastest cuBLASLt candidate), each checked.
  bench peak_gpu --families=peak --benchmark_filter='^peak/.*/cuda/' --benchmark_min_time=0.2
  # The memory ones: device-to-device, pinned host-to-device and
  # device-to-host copies of 256 MiB, each checked against its source.
  bench bandwidth_gpu --families=bandwidth --bandwidth_bytes=268435456 \
    --benchmark_filter='^bandwidth/.*/cuda/' --benchmark_min_time=0.2
  # Every collective through NCCL on one GPU (ranks:1), 8 B to 64 MiB by
  # 4x, each result checked. At one rank nccl-tests' busbw is 0 but for
  # broadcast and reduce, which summary.txt reads against the d2d copy.
  bench nccl_1gpu --families=allreduce,allgather,reducescatter,broadcast,reduce,alltoall,gather,scatter \
    --gpus=1 \
    --collective_bytes=8,67108864 --collective_factor=4 --benchmark_filter='/nccl/'
  # d. The headline: bf16 with CUDA graphs (the first compile builds every
  # plan), PyTorch's in bf16 (and its matmul beside our GEMM peak), bf16 on
  # cuDNN's legacy batch norm (the baseline of the batch norm graphs, and a
  # set of figures should they fail), bf16 without CUDA graphs (like for
  # like with PyTorch's eager step).
  train train_bf16 bf16
  torch_peer torch bf16 --matmul=8192
  if [ -n "$LEGACY_BN_SKIP" ]; then
    skip bench train_bf16_legacy_bn "$LEGACY_BN_SKIP"
  else
    train train_bf16_legacy_bn bf16 --cuda_batch_norm=legacy
  fi
  train train_bf16_no_graph bf16 --cuda_graph=false
  # e. The op and conv tests, with cuDNN's logs.
  for name in cuda_ops_test cuda_conv_test; do
    has "$name" test "$name" && gtest "$name" "${CUDNN_LOGS[@]}"
  done
  # f. The rest. Inference: resnet50_v1.5 bf16 at batch 1 (latency) and 256
  # (throughput), 200 batches each timed on its own, a CUDA graph replayed.
  bench infer_bf16 --families=infer --infer_models=resnet50_v1.5 --infer_batch_sizes=1,256 \
    --gpus=1 --data=synthetic --precisions=bf16 --infer_warmup=10 --infer_iterations=200
  # The other GPU tests, within their shared limit, the training test first.
  local ordered=() share tests_start
  for t in "$BUNDLE/bin/gpu_train_test" "$BUNDLE"/bin/*_test; do
    name="$(basename "$t")"
    [ -x "$t" ] || continue
    case " cuda_ops_test cuda_conv_test ${ordered[*]:-} " in *" $name "*) continue ;; esac
    ordered+=("$name")
  done
  tests_start=$(elapsed)
  for name in "${ordered[@]}"; do
    share=$((TEST_BUDGET - ($(elapsed) - tests_start)))
    if [ "$PLAN" = 0 ] && [ "$share" -lt 10 ]; then
      selected "$name" && record test "$name" skipped 0 "out of time (the other tests' ${TEST_BUDGET}s are spent)" "" "" ""
      continue
    fi
    [ "$share" -gt 60 ] && share=60
    STEP_LIMIT=$share STEP_ESTIMATE=10 gtest "$name" NCCL_DEBUG="${NCCL_DEBUG:-WARN}"
  done
  # Whether the GPU learns what the CPU learns: the convergence check
  # (lenet at 16 px on a generated class-coloured set, the same seed) on
  # the GPU in every precision, beside the CPU's top-1 (computed when the
  # bundle was made: convergence_cpu.json).
  for name in fp32 tf32 fp16 bf16; do
    has convergence convergence "convergence_$name" &&
      step convergence "convergence_$name" "$OUT/bench.log" "$WORK/convergence_$name.json" \
        "$BUNDLE/run.sh" convergence --backend=cuda --precision="$name" \
        --json="$WORK/convergence_$name.json"
  done
  train train_fp16 fp16
  torch_peer torch_fp16 fp16
  # Where the bf16 step's time goes: each layer between device events (no
  # CUDA graph), with the engines each layer runs, and one step as a
  # Chrome trace (trace.json, for Perfetto).
  has step_breakdown profile step_breakdown &&
    step profile step_breakdown "$OUT/breakdown.log" "" \
      "$BUNDLE/run.sh" step_breakdown --profile --backend=cuda --model=resnet50_v1.5 --batch=256 \
      --precision=bf16 --steps=5 --warmup_steps=2 --trace_file="$OUT/trace.json"
  # Our conv and GEMM kernels against cuDNN and cuBLASLt called directly.
  has cuda_overhead overhead cuda_overhead &&
    step overhead cuda_overhead "$OUT/bench.log" "$WORK/overhead.json" \
      "$BUNDLE/run.sh" cuda_overhead --json="$WORK/overhead.json"
  bench gemm_bf16_8192 --preset=full --families=gemm --precisions=bf16 \
    --benchmark_filter='^gemm/bf16/cuda/gemm:m8192n8192k8192/' --benchmark_min_time=0.5
  # resnet50's first 3x3 convolution (64 channels at 56x56), its three passes.
  bench conv3x3 --families=conv --kernel_models=resnet50 --kernel_batch=256 \
    --max_kernel_shapes=0 --precisions=bf16 --benchmark_min_time=0.1 \
    --benchmark_filter='^conv/.*/cuda/conv:mb256_ic64oc64_ih56oh56kh3'
  train train_fp32 fp32
  train train_tf32 tf32
  # Real data on the GPU: the generated JPEG set through the input pipeline
  # (14 decode threads), each batch copied on the side stream beside the step.
  bench train_bf16_real --families=train --models=resnet50_v1.5 --batch_sizes=256 --gpus=1 \
    --data=real --input_cores=14 --precisions=bf16 --warmup_steps="$WARMUP" --steps="$STEPS"
}

# a. The environment.
smi() {  # smi ARGS...: nvidia-smi, or why not
  if command -v nvidia-smi >/dev/null 2>&1; then
    timeout "$(real_s 30)" nvidia-smi "$@" 2>&1 || echo "nvidia-smi $*: exit $?"
  else
    echo "no nvidia-smi on this machine (PATH: $PATH)"
  fi
}
SMI_LIST="$(smi -L)"
{
  echo "== gpu_check on $(hostname 2>/dev/null || echo '?') at $(date -u +%Y-%m-%dT%H:%M:%SZ), budget ${BUDGET}s"
  echo "$(uname -srm 2>/dev/null); $("$PYTHON" --version 2>&1)"
  echo "== the bundle (build_versions.txt)"
  cat "$BUNDLE/build_versions.txt" 2>/dev/null || echo "no build_versions.txt"
  echo "== nvidia-smi -L"
  echo "$SMI_LIST"
  echo "== nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv"
  smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv
  echo "== run.sh --libs"
} >"$OUT/env.txt" 2>&1
libs_offset=$(stat -c %s "$OUT/env.txt")
t0=$(elapsed)
timeout -k "$(real_s 5)" "$(real_s "${LIMIT[environment]}")" "$BUNDLE/run.sh" --libs >>"$OUT/env.txt" 2>&1 </dev/null &
CHILD=$!
wait "$CHILD"
libs_rc=$?
CHILD=""
record libs libraries "$libs_rc" $(($(elapsed) - t0)) "" "" "$OUT/env.txt" "$libs_offset"
cat "$OUT/env.txt" >&2

# Whether a GPU is visible: nvidia-smi -L lists one (without nvidia-smi,
# a /dev/nvidiaN device exists), and CUDA_VISIBLE_DEVICES does not hide it.
no_gpu=""
case "${CUDA_VISIBLE_DEVICES-unset}" in
  ""|-1|none|NoDevFiles) no_gpu="CUDA_VISIBLE_DEVICES='${CUDA_VISIBLE_DEVICES}' hides every GPU" ;;
esac
if [ -z "$no_gpu" ]; then
  if command -v nvidia-smi >/dev/null 2>&1; then
    grep -q '^GPU [0-9]' <<<"$SMI_LIST" ||
      no_gpu="nvidia-smi -L lists no GPU ($(awk 'NF {print; exit}' <<<"$SMI_LIST"))"
  elif ! ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
    no_gpu="no nvidia-smi and no /dev/nvidia0 on this machine"
  fi
fi
if [ -n "$no_gpu" ]; then
  # Said once here and once in summary.txt's verdict.
  echo "gpu_check: no GPU is visible: $no_gpu; nothing runs after the environment (env.txt)" >&2
  record gpu gpu_visible 3 0 "$no_gpu" "" "" ""
  summarize >/dev/null
  exit 3
fi

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
# cuDNN's legacy API library is optional: without it only the legacy batch
# norm step skips.
ops_missing="$(sed -n 's/^OPTIONAL MISSING *\(libcudnn_ops[^ ]*\).*/\1/p' "$OUT/env.txt" | awk 'NR == 1')"
if [ -n "$ops_missing" ]; then
  LEGACY_BN_SKIP="$ops_missing is not on this machine (env.txt): cuDNN's legacy batch norm cannot load"
  NOTE="${NOTE:+$NOTE; }$ops_missing is missing: the legacy batch norm step skips"
fi

# The CPU's convergence, the GPU's reference: measured when the bundle was
# made, so no device time goes to oneDNN work.
if [ -f "$BUNDLE/convergence_cpu.json" ]; then
  record convergence convergence_cpu 0 0 "measured when the bundle was made" \
    "$BUNDLE/convergence_cpu.json" "" ""
fi

PLAN=1 sequence
summarize "the environment"
PLAN=0 sequence

summarize
rc=$?
echo "gpu_check: $(elapsed)s; results in $OUT" >&2
[ $rc -eq 0 ] || exit 1
exit 0
