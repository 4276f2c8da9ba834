#!/usr/bin/env bash
# Runs this suite, PyTorch and TensorFlow on the same train (or infer) cases on this
# machine, and with --mode=infer the inference engines ONNX Runtime and
# OpenVINO too, and writes one report with "Frameworks side by side"
# (docs/peers.md). Needs the peers' virtual environment (tools/peers/setup.sh).
#
#   tools/peers/compare.sh --models=resnet50,resnet50_v1.5 --batch_sizes=32 \
#       --precisions=fp32 --out=peers-run
#
# Flags (defaults in brackets): --models [resnet50,resnet50_v1.5]
# --batch_sizes [each model's own] --precisions [fp32, and bf16 where the CPU
# has avx512_bf16 or amx_bf16 (read from /proc/cpuinfo): our bf16 beside
# PyTorch's autocast and TensorFlow's mixed_bfloat16] --warmup_steps [10]
# --steps [100] --repetitions [5] --rounds [1: each round runs all three
# again, in a rotated order, so a noisy stretch of the machine does not fall
# on one framework; every round's files go to the report] --out [peers-run]
# --venv [$CNNBENCH_PEERS_VENV or ~/.cache/cnnbench/peers-venv]
# --frameworks [cnnbench,pytorch,tensorflow; with --mode=infer
# cnnbench,pytorch,onnxruntime,openvino; onnxruntime and openvino run
# inference only] --platform [the suite's]
# --suite_json [none: a suite run made before, put in the report instead of
# running the suite; its platform names the peers' runs]
# --mode [train; infer: the infer cases and the peers' inference, with
# --infer_warmup [10] and --infer_iterations [200] batches]
# --cpu_conv_algorithms [timed: the suite runs once per algorithm listed,
# e.g. timed,direct, each a run of its own in the rotation, which the
# report keeps apart by its cpu_conv_algorithm].
# Each peer runs with glibc malloc tuned so freed activations stay mapped
# (MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_; override by exporting them).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PEERS="$ROOT/tools/peers"
MODELS=resnet50,resnet50_v1.5
BATCH_SIZES=""
# bf16 by default where the CPU runs it natively (every precision a peer
# cannot run is reported unsupported, not dropped).
if grep -qw -e avx512_bf16 -e amx_bf16 /proc/cpuinfo 2>/dev/null; then
  PRECISIONS=fp32,bf16
else
  PRECISIONS=fp32
fi
WARMUP=10
STEPS=100
REPETITIONS=5
ROUNDS=1
OUT=peers-run
VENV="${CNNBENCH_PEERS_VENV:-}"
FRAMEWORKS=""
PLATFORM=""
SUITE_JSON=""
MODE=train
INFER_WARMUP=10
INFER_ITERATIONS=200
CONV_ALGORITHMS=timed
for arg in "$@"; do
  case "$arg" in
    --models=*) MODELS="${arg#*=}" ;;
    --batch_sizes=*) BATCH_SIZES="${arg#*=}" ;;
    --precisions=*) PRECISIONS="${arg#*=}" ;;
    --warmup_steps=*) WARMUP="${arg#*=}" ;;
    --steps=*) STEPS="${arg#*=}" ;;
    --repetitions=*) REPETITIONS="${arg#*=}" ;;
    --rounds=*) ROUNDS="${arg#*=}" ;;
    --out=*) OUT="${arg#*=}" ;;
    --venv=*) VENV="${arg#*=}" ;;
    --frameworks=*) FRAMEWORKS="${arg#*=}" ;;
    --platform=*) PLATFORM="${arg#*=}" ;;
    --suite_json=*) SUITE_JSON="${arg#*=}" ;;
    --mode=*) MODE="${arg#*=}" ;;
    --infer_warmup=*) INFER_WARMUP="${arg#*=}" ;;
    --infer_iterations=*) INFER_ITERATIONS="${arg#*=}" ;;
    --cpu_conv_algorithms=*) CONV_ALGORITHMS="${arg#*=}" ;;
    -h|--help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "compare.sh: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
  esac
done
case "$MODE" in
  train) FRAMEWORKS="${FRAMEWORKS:-cnnbench,pytorch,tensorflow}" ;;
  infer) FRAMEWORKS="${FRAMEWORKS:-cnnbench,pytorch,onnxruntime,openvino}" ;;
  *) echo "compare.sh: --mode='$MODE' is neither train nor infer" >&2; exit 2 ;;
esac
for pair in "warmup_steps:$WARMUP:0" "steps:$STEPS:1" "repetitions:$REPETITIONS:1" "rounds:$ROUNDS:1" \
            "infer_warmup:$INFER_WARMUP:0" "infer_iterations:$INFER_ITERATIONS:1"; do
  IFS=: read -r flag value least <<<"$pair"
  if ! [[ "$value" =~ ^[0-9]+$ ]] || [ "$value" -lt "$least" ]; then
    echo "compare.sh: --$flag='$value' is not an integer >= $least" >&2
    exit 2
  fi
done
IFS=, read -r -a ALGORITHMS <<<"$CONV_ALGORITHMS"
[ "${#ALGORITHMS[@]}" -gt 0 ] || { echo "compare.sh: --cpu_conv_algorithms is empty" >&2; exit 2; }
for a in "${ALGORITHMS[@]}"; do
  case "$a" in
    timed|direct|winograd|auto) ;;
    *) echo "compare.sh: --cpu_conv_algorithms: unknown '$a' (timed, direct, winograd, auto)" >&2
       exit 2 ;;
  esac
done
IFS=, read -r -a FRAMEWORK_LIST <<<"$FRAMEWORKS"
ORDER=()
for f in "${FRAMEWORK_LIST[@]}"; do
  if [ "$f" = cnnbench ]; then
    for a in "${ALGORITHMS[@]}"; do ORDER+=("cnnbench:$a"); done
  else
    ORDER+=("$f")
  fi
done
for f in "${ORDER[@]}"; do
  case "$f" in
    cnnbench:*|pytorch|tensorflow) ;;
    onnxruntime|openvino)
      [ "$MODE" = infer ] || {
        echo "compare.sh: --frameworks: $f is an inference engine: give --mode=infer" >&2
        exit 2
      } ;;
    *) echo "compare.sh: --frameworks: unknown framework '$f' (cnnbench, pytorch, tensorflow," \
            "onnxruntime, openvino)" >&2
       exit 2 ;;
  esac
done
if [ -z "$VENV" ]; then
  [ -n "${HOME:-}" ] || { echo "compare.sh: HOME is not set; give --venv=PATH" >&2; exit 2; }
  VENV="$HOME/.cache/cnnbench/peers-venv"
fi
needs_venv=0
[[ ",$FRAMEWORKS," =~ ,(pytorch|tensorflow|onnxruntime|openvino), ]] && needs_venv=1
if [ "$needs_venv" = 1 ] && [ ! -x "$VENV/bin/python" ]; then
  echo "compare.sh: no peers environment at $VENV; run tools/peers/setup.sh first" >&2
  exit 1
fi

FILES=()
if [ -n "$SUITE_JSON" ]; then
  [[ ",$FRAMEWORKS," == *,cnnbench,* ]] && {
    echo "compare.sh: --suite_json replaces the suite's run: leave cnnbench out of --frameworks" >&2
    exit 2
  }
  [ -r "$SUITE_JSON" ] || { echo "compare.sh: --suite_json=$SUITE_JSON: not a readable file" >&2; exit 2; }
  SUITE_JSON="$(cd "$(dirname "$SUITE_JSON")" && pwd)/$(basename "$SUITE_JSON")"
  FILES+=("$SUITE_JSON")
fi
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
export MALLOC_MMAP_THRESHOLD_="${MALLOC_MMAP_THRESHOLD_:-17179869184}"
export MALLOC_TRIM_THRESHOLD_="${MALLOC_TRIM_THRESHOLD_:-17179869184}"
COMMON=(--models="$MODELS" --precisions="$PRECISIONS" --warmup_steps="$WARMUP"
        --steps="$STEPS" --repetitions="$REPETITIONS")
[ -n "$BATCH_SIZES" ] && COMMON+=(--batch_sizes="$BATCH_SIZES")
# Inference: the suite's infer cases (their own model and batch flags), the
# peers' --mode=infer, each with the same warm-up and timed batches.
SUITE_CASES=(--families=train,peak "${COMMON[@]}")
PEER_MODE=()
if [ "$MODE" = infer ]; then
  # --warmup_steps and --steps time no infer case; given to all, they are
  # not a setting the runs differ in.
  SUITE_CASES=(--families=infer --infer_models="$MODELS" --precisions="$PRECISIONS"
               --repetitions="$REPETITIONS" --infer_warmup="$INFER_WARMUP"
               --infer_iterations="$INFER_ITERATIONS" --warmup_steps="$WARMUP" --steps="$STEPS")
  [ -n "$BATCH_SIZES" ] && SUITE_CASES+=(--infer_batch_sizes="$BATCH_SIZES")
  PEER_MODE=(--mode=infer --infer_warmup="$INFER_WARMUP" --infer_iterations="$INFER_ITERATIONS")
fi

# The peers take the suite's platform name so the report sets them side by
# side; without a suite run here, the suite's naming rule gives the same name.
platform_of() {
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["context"].get("platform",""))' "$1"
}

run_one() {  # run_one FRAMEWORK ROUND (FRAMEWORK: cnnbench:ALGORITHM, pytorch, tensorflow, ...)
  local f="${1%%:*}" algorithm="${1#*:}" r="$2" file="$OUT/${1/:/-}-$2.json"
  echo "compare.sh: round $r: $1 -> $file" >&2
  case "$f" in
    cnnbench)
      # Exit 3: the file is written but a case failed (its row says why);
      # the comparison goes on and the report shows it. Any other failure stops.
      local rc=0
      (cd "$ROOT" && ./bazelw run //bench:all -- "${SUITE_CASES[@]}" --cpu_conv_algorithm="$algorithm" \
         ${PLATFORM:+--platform="$PLATFORM"} --benchmark_out="$file" --benchmark_out_format=json) || rc=$?
      if [ $rc -eq 3 ]; then
        echo "compare.sh: round $r: some cnnbench cases failed (exit 3); their rows in $file say why" >&2
      elif [ $rc -ne 0 ]; then
        echo "compare.sh: round $r: //bench:all exited $rc" >&2
        exit $rc
      fi
      [ -n "$PLATFORM" ] || PLATFORM="$(platform_of "$file")" ;;
    pytorch)
      "$VENV/bin/python" "$PEERS/pytorch_train.py" "${COMMON[@]}" "${PEER_MODE[@]}" \
        ${PLATFORM:+--platform="$PLATFORM"} --benchmark_out="$file" ;;
    tensorflow)
      "$VENV/bin/python" "$PEERS/tensorflow_train.py" "${COMMON[@]}" "${PEER_MODE[@]}" \
        ${PLATFORM:+--platform="$PLATFORM"} --benchmark_out="$file" ;;
    onnxruntime|openvino)
      "$VENV/bin/python" "$PEERS/${f}_infer.py" "${COMMON[@]}" "${PEER_MODE[@]}" \
        ${PLATFORM:+--platform="$PLATFORM"} --benchmark_out="$file" ;;
  esac
  FILES+=("$file")
}

[ -n "$SUITE_JSON" ] && [ -z "$PLATFORM" ] && PLATFORM="$(platform_of "$SUITE_JSON")"
n=${#ORDER[@]}
for ((r = 1; r <= ROUNDS; ++r)); do
  for ((i = 0; i < n; ++i)); do
    run_one "${ORDER[$(((i + r - 1) % n))]}" "$r"
  done
done
(cd "$ROOT" && ./bazelw run //tools:report -- "${FILES[@]}" --output="$OUT/report.md")
echo "compare.sh: report in $OUT/report.md" >&2
