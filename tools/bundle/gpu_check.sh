#!/usr/bin/env bash
# The GPU check, inside a bundle made by tools/device_bundle.sh, all within
# CNNBENCH_CHECK_SECONDS (340, under the 6 minutes one call may take so
# that a second call fits the device time): first the headline figures,
# resnet50_v1.5 bf16 training at batch 256 with CUDA graphs on, PyTorch's
# torchvision resnet50 (channels_last, autocast bf16 and fp16, the same
# batch, warm-up and steps) for the ratio, and bf16 with CUDA graphs off;
# then every GPU test (CNNBENCH_TEST_SECONDS, 150, for all of them, op and
# training tests first); then the rest of the sweep: fp16 training, bf16 on
# cuDNN's legacy batch norm, the bf16 step's per-layer profile, our conv and
# GEMM against cuDNN/cuBLASLt called directly, an 8192^3 bf16 GEMM,
# resnet50's first 3x3 convolution, fp32/tf32 training and bf16 on real
# data. Figures
# come before tests so that a slow or hanging test cannot cost them; what
# the budget does not reach is listed as out of time, for a second call.
#
#   ./gpu_check.sh RESULTS_DIR [STEP ...]
#
# STEP: glob patterns of the steps to run (the summary's first column, or a
# test's name), e.g. a second call for what the first ran out of time for:
#   ./gpu_check.sh results2 'train_fp32' 'train_tf32' 'conv3x3' 'gemm_*'
#
# Writes to RESULTS_DIR: summary.txt (the table, also printed), check.json
# (every number and skip reason), libs.txt, tests.log, bench.log, torch.log,
# breakdown.log (the bf16 step's per-layer profile).
# A case that cannot run shows as skipped with its reason; the script goes on.
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
WARMUP="${CNNBENCH_CHECK_WARMUP:-5}"
STEPS="${CNNBENCH_CHECK_STEPS:-20}"
PYTHON="${PYTHON:-python3}"
START=$SECONDS
: >"$WORK/steps.tsv"
: >"$OUT/tests.log"
: >"$OUT/bench.log"
: >"$OUT/torch.log"
: >"$OUT/breakdown.log"

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

# step KIND NAME LIMIT LOG JSON CMD...: runs CMD under min(LIMIT, time left)
# and records kind, name, exit status, seconds and the JSON it should write.
step() {
  local kind="$1" name="$2" limit="$3" log="$4" json="$5" rc t0
  shift 5
  selected "$name" || return 0
  local remaining
  remaining=$(left)
  if [ "$remaining" -lt 15 ]; then
    printf '%s\t%s\tskipped\t0\tout of time (the check has %ss)\t%s\n' "$kind" "$name" "$BUDGET" "$json" >>"$WORK/steps.tsv"
    return
  fi
  [ "$limit" -gt "$remaining" ] && limit=$remaining
  echo "== $kind $name (limit ${limit}s)" | tee -a "$log" >&2
  t0=$SECONDS
  timeout -k 5 "$limit" "$@" >>"$log" 2>&1
  rc=$?
  local detail=""
  [ $rc -eq 124 ] || [ $rc -eq 137 ] && detail="timed out after ${limit}s"
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$name" "$rc" "$((SECONDS - t0))" "$detail" "$json" >>"$WORK/steps.tsv"
}

skip() {  # skip KIND NAME REASON
  selected "$2" || return 0
  printf '%s\t%s\tskipped\t0\t%s\t\n' "$1" "$2" "$3" >>"$WORK/steps.tsv"
  echo "== $1 $2: skipped: $3" >&2
}

# 0. Libraries.
"$BUNDLE/run.sh" --libs >"$OUT/libs.txt" 2>&1
libs_rc=$?
cat "$OUT/libs.txt" >&2
if [ $libs_rc -ne 0 ]; then
  echo "gpu_check: the CUDA libraries or APIs the build needs are missing (libs.txt); nothing runs" >&2
  "$PYTHON" "$BUNDLE/summarize.py" "$WORK" "$OUT" "libraries missing (see libs.txt)"
  exit 2
fi

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
# 1. The headline figures (the first compile builds every plan: more time),
# with CUDA graphs on (the default) and off.
TRAIN_LIMIT=120 train train_bf16 bf16
step torch torch 120 "$OUT/torch.log" "$WORK/torch.json" \
  "$PYTHON" "$BUNDLE/peers/torch_train_step.py" --batch=256 --warmup_steps="$WARMUP" \
  --steps="$STEPS" --precisions=bf16,fp16 --json="$WORK/torch.json"
# Where this build has the flag.
if timeout 20 "$BUNDLE/run.sh" bench_all --helpfull 2>/dev/null | grep -q -- '--cuda_graph'; then
  train train_bf16_no_graph bf16 --cuda_graph=false
else
  skip bench train_bf16_no_graph "this build's //bench:all has no --cuda_graph flag (CUDA graph on/off not compared)"
fi

# 2. Every GPU test, within their own share of the time.
TEST_BUDGET="${CNNBENCH_TEST_SECONDS:-150}"
TESTS_START=$SECONDS
mkdir -p "$WORK/tests"
# The op and training tests first: they cover the most code.
ordered=()
for t in "$BUNDLE/bin/cuda_ops_test" "$BUNDLE/bin/gpu_train_test" "$BUNDLE"/bin/*_test; do
  case " ${ordered[*]:-} " in *" $t "*) continue ;; esac
  ordered+=("$t")
done
for t in "${ordered[@]}"; do
  [ -x "$t" ] || continue
  name="$(basename "$t")"
  share=$((TEST_BUDGET - (SECONDS - TESTS_START)))
  if [ "$share" -lt 10 ]; then
    skip test "$name" "out of the tests' ${TEST_BUDGET}s"
    continue
  fi
  [ "$share" -gt 90 ] && share=90
  step test "$name" "$share" "$OUT/tests.log" "$WORK/tests/$name.json" \
    "$BUNDLE/run.sh" "$name" --gtest_output="json:$WORK/tests/$name.json"
done

# 3. The rest of the sweep. bf16 on cuDNN's legacy batch norm: the
# baseline of the batch norm graphs, and a set of figures should they fail.
train train_fp16 fp16
train train_bf16_legacy_bn bf16 --cuda_batch_norm=legacy
# Where the bf16 step's time goes: each layer between device events (no
# CUDA graph), with the engines each layer runs.
if [ -x "$BUNDLE/bin/step_breakdown" ]; then
  step profile step_breakdown 90 "$OUT/breakdown.log" "" \
    "$BUNDLE/run.sh" step_breakdown --profile --backend=cuda --model=resnet50_v1.5 --batch=256 \
    --precision=bf16 --steps=5 --warmup_steps=2
else
  skip profile step_breakdown "this bundle has no step_breakdown"
fi
# Our conv and GEMM kernels against cuDNN and cuBLASLt called directly.
if [ -x "$BUNDLE/bin/cuda_overhead" ]; then
  step overhead cuda_overhead 60 "$OUT/bench.log" "$WORK/overhead.json" \
    "$BUNDLE/run.sh" cuda_overhead --json="$WORK/overhead.json"
else
  skip overhead cuda_overhead "this bundle has no cuda_overhead"
fi
bench gemm_bf16_8192 45 --preset=full --families=gemm --precisions=bf16 \
  --benchmark_filter='^gemm/bf16/cuda/gemm:m8192n8192k8192/' --benchmark_min_time=0.5
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

"$PYTHON" "$BUNDLE/summarize.py" "$WORK" "$OUT" ""
echo "gpu_check: $((SECONDS - START))s; results in $OUT" >&2
