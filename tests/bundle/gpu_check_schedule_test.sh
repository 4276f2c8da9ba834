#!/usr/bin/env bash
# gpu_check.sh's schedule, budget and verdict without a GPU: every program
# of the bundle is a stub that sleeps for its step's time in a table, on a
# clock run CNNBENCH_CHECK_TIME_SCALE times fast, and then writes what the
# real one would.
#
# - The schedule's own estimates (gpu_check.sh --schedule, which the README
#   repeats), and a pessimistic table (every compile three times slower, a
#   hung NCCL init, a slow PyTorch): with the default budget, the smoke
#   check, the three ceilings, train_bf16 and the PyTorch bf16 step each
#   end with a row; the check ends before 600 s; the second call holds only
#   what was not reached, out of time or cut short; a step cut short by the
#   budget is "out of time", not failed.
# - The verdict: a case error that is neither unsupported: nor OOM: fails
#   its step and the check (exit 1), its reason whole however long.
# - Every step run leaves at most 8 files; without libcudnn_ops only the
#   legacy batch norm step skips; without a visible GPU the check stops
#   after the environment (exit 3), saying so once, with no empty logs.
# - README.md's schedule table is the script's.
#
# Under Bazel (sh_test) or directly: bash tests/bundle/gpu_check_schedule_test.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"
SCALE="${SCHEDULE_TEST_SCALE:-10}"
# The bundle: the real scripts, stub programs, two CUDA libraries to find.
B="$TMP/bundle"
mkdir -p "$B/bin" "$B/lib" "$B/peers" "$TMP/cuda/lib64" "$TMP/fakebin"
cp "$TOOLS/bundle/run.sh" "$TOOLS/bundle/gpu_check.sh" "$TOOLS/bundle/script_args.sh" "$TOOLS/bundle/summarize.py" "$TOOLS/bundle/bench_rows.py" "$B/"
chmod +x "$B"/*.sh
printf 'libcudnn.so.9\nlibcublasLt.so.13\n' >"$B/cuda_libs.txt"
printf 'libcudnn_ops.so.9\n' >"$B/cuda_libs_optional.txt"
touch "$TMP/cuda/lib64/libcudnn.so.9" "$TMP/cuda/lib64/libcublasLt.so.13" "$TMP/cuda/lib64/libcudnn_ops.so.9"
export CNNBENCH_CUDA_HOME="$TMP/cuda" CNNBENCH_SITE_PACKAGES=""
echo '{"backend": "onednn", "precision": "fp32", "passed": true, "points": [{"validation_top1": 0.91}]}' \
  >"$B/convergence_cpu.json"

# Each stub sleeps for its step's time in $FAKE_TIMES ("name seconds"; none: 0).
cat >"$B/fake_lib.sh" <<'LIB'
fake_sleep() {
  local secs
  secs="$(awk -v n="${CNNBENCH_CHECK_STEP:-}" '$1 == n {print $2; exit}' "${FAKE_TIMES:-/dev/null}")"
  [ -n "$secs" ] && [ "$secs" != 0 ] || return 0
  sleep "$(awk -v s="$secs" -v k="${CNNBENCH_CHECK_TIME_SCALE:-1}" 'BEGIN {printf "%.3f", s / k}')"
}
arg() {  # arg NAME ARGS...: the value of --NAME=
  local name="$1" a
  shift
  for a in "$@"; do case "$a" in "--$name="*) echo "${a#*=}"; return ;; esac; done
}
LIB
stub() {  # stub NAME < BODY: bin/NAME, sourcing fake_lib.sh
  { echo '#!/usr/bin/env bash'; echo ". '$B/fake_lib.sh'"; cat; } >"$B/bin/$1"
  chmod +x "$B/bin/$1"
}
stub bench_all <<'STUB'
fake_sleep
out="$(arg benchmark_out "$@")"
p="$(arg precisions "$@")"
s="${CNNBENCH_CHECK_STEP:-}"
case "$s" in
  peak_gpu) row='"name": "peak/bf16/cuda/gemm:m8192n8192k8192/min_time:0.200/manual_time", "flops": 7.5e14' ;;
  bandwidth_gpu) row='"name": "bandwidth/d2d/cuda/bytes:268435456/threads:1/manual_time", "bytes_per_second": 4.0e12' ;;
  nccl_1gpu) row='"name": "broadcast/nccl/fp32/none/bytes:67108864/ranks:1/manual_time", "busbw": 1.5e12, "algbw": 1.5e12' ;;
  infer_*) row='"name": "infer/resnet50_v1.5/bf16/synthetic/batch:256/gpus:1", "images_per_second": 9000, "latency_ms": 28, "latency_ms_p50": 28, "latency_ms_p99": 30' ;;
  *) row="\"name\": \"train/resnet50_v1.5/${p:-bf16}/synthetic/batch:256/gpus:1/iterations:20/repeats:1/manual_time\", \"images_per_second\": 3000" ;;
esac
echo "step $s: CNNBENCH_COMPILE_DEADLINE_S=${CNNBENCH_COMPILE_DEADLINE_S:-unset}"
# The plan-choice file the call shares: the first step searches, later ones hit.
if [ -n "${CNNBENCH_CUDA_PLAN_CACHE:-}" ] && [ -f "$CNNBENCH_CUDA_PLAN_CACHE" ]; then
  echo "compile 12:00:00.000 +1.0s layer=conv1 kernel=conv op=conv:x pass=fprop plan_cache=hit"
elif [ -n "${CNNBENCH_CUDA_PLAN_CACHE:-}" ]; then
  echo "x" >"$CNNBENCH_CUDA_PLAN_CACHE"
  echo "compile 12:00:00.000 +1.0s layer=conv1 kernel=conv op=conv:x pass=fprop plan_cache=miss"
fi
rc=0
if [ "$s" = "${FAKE_DEADLINE_STEP:-}" ]; then
  row="${row%%,*}, \"error_occurred\": true, \"error_message\": \"deadline: layer conv1 (conv:x): the compile deadline (185.0 s after the start, --compile_deadline_s) passed at 185.0 s while building layer conv1, pass fprop\""
fi
if [ "$s" = "${FAKE_FAIL_STEP:-}" ]; then
  row="${row%%,*}, \"error_occurred\": true, \"error_message\": \"$FAKE_FAIL_MESSAGE\""
  rc=3
fi
[ -n "$out" ] && printf '{"context": {}, "benchmarks": [{"run_type": "iteration", %s}]}\n' "$row" >"$out"
exit $rc
STUB
stub cuda_smoke <<'STUB'
fake_sleep
echo '[{"check": "gemm_bf16", "status": "ok", "seconds": 0.1, "implementation": "cublasLt", "detail": ""}]' >"$(arg json "$@")"
STUB
for t in cuda_ops_test cuda_conv_test gpu_train_test nccl_test cuda_gemm_test; do
  stub "$t" <<'STUB'
fake_sleep
for a in "$@"; do case "$a" in --gtest_output=json:*) out="${a#*json:}" ;; esac; done
echo "NCCL_DEBUG=${NCCL_DEBUG:-unset}"
echo '{"testsuites": [{"name": "Gpu", "testsuite": [{"name": "Works", "result": "COMPLETED"}]}]}' >"$out"
STUB
done
stub step_breakdown <<'STUB'
fake_sleep
echo "layer  ms"
trace="$(arg trace_file "$@")"
[ -n "$trace" ] && echo '{"traceEvents": []}' >"$trace"
STUB
stub cuda_overhead <<'STUB'
fake_sleep
echo '[{"layer": "conv3x3 conv:x", "pass": "fwd", "ratio": 0.97}]' >"$(arg json "$@")"
STUB
stub convergence <<'STUB'
fake_sleep
printf '{"backend": "cuda", "precision": "%s", "passed": true, "points": [{"validation_top1": 0.9}]}\n' \
  "$(arg precision "$@")" >"$(arg json "$@")"
STUB
cat >"$B/peers/torch_train_step.py" <<'PY'
import json, os, sys, time
args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
step = os.environ.get("CNNBENCH_CHECK_STEP", "")
scale = float(os.environ.get("CNNBENCH_CHECK_TIME_SCALE", "1"))
for line in open(os.environ.get("FAKE_TIMES", "/dev/null")):
    parts = line.split()
    if len(parts) == 2 and parts[0] == step:
        time.sleep(float(parts[1]) / scale)
rows = [{"model": "resnet50", "precision": p, "batch": 256, "images_per_second": 2500.0}
        for p in args["precisions"].split(",")]
if int(args.get("matmul", 0)):
    rows.append({"model": "matmul", "n": int(args["matmul"]), "tflops": 700.0})
json.dump(rows, open(args["json"], "w"))
PY
fake_nvidia_smi "$TMP/fakebin"
export PATH="$TMP/fakebin:$PATH"

# check RESULTS TIMES [STEP...]: gpu_check.sh with the default budget on the
# fast clock; its output in $out, its exit status in $rc, the seconds it
# says it took in $took.
check() {
  local results="$1" times="$2"
  shift 2
  out="$(FAKE_TIMES="$times" CNNBENCH_CHECK_TIME_SCALE="$SCALE" CNNBENCH_CHECK_STEPS=1 \
         CNNBENCH_CHECK_WARMUP=0 "$B/gpu_check.sh" "$results" "$@" 2>&1)"
  rc=$?
  took="$(sed -n 's/^gpu_check: \([0-9]*\)s; results in.*/\1/p' <<<"$out")"
}

# Asserts the headline rows, the 600 s bound and that the second call holds
# only what was not reached, out of time or cut short.  headline RESULTS WHAT
headline() {
  local summary
  summary="$(cat "$1/summary.txt" 2>/dev/null)"
  expect_in "$summary" "^gemm_bf16 +0.10 +cublasLt +ok" "$2: the smoke check's row"
  expect_in "$summary" "^peak_gpu +peak/bf16/cuda/gemm:m8192n8192k8192 +750.0 +TFLOP/s +ok" "$2: the GEMM peak"
  expect_in "$summary" "^bandwidth_gpu +bandwidth/d2d/cuda/.* ok" "$2: the d2d copy"
  expect_in "$summary" "^nccl_1gpu +" "$2: the NCCL row"
  expect_in "$summary" "^train_bf16 +train/resnet50_v1.5/bf16/synthetic/batch:256/gpus:1 +3000.0 +images/s +ok" \
    "$2: the headline step"
  expect_in "$summary" "^torch +pytorch/resnet50/bf16/batch:256 +2500.0 +images/s +ok" "$2: PyTorch in bf16"
  expect_in "$summary" "^ratio cnnbench/pytorch resnet50 bf16 batch 256, CUDA graphs on \\(train_bf16\\) / PyTorch eager: 1.20$" \
    "$2: the headline ratio with CUDA graphs"
  [ -n "$took" ] && [ "$took" -le 600 ] || fail "$2: the check took ${took:-?}s (at most 600):"$'\n'"$out"
  python3 - "$1/check.json" <<'PY' || fail "$2: the second call"
import json, sys
doc = json.load(open(sys.argv[1]))
second = doc["second_call"].split()[2:] if doc["second_call"] else []
second = [s.strip("'") for s in second]
allowed = set(doc["not_reached"]) | set(doc["out_of_time"]) | set(doc["cut_short"])
assert set(second) == allowed, (second, allowed)
for s in doc["steps"]:
    if s["name"] in second:
        assert s["status"].startswith(("out of time", "skipped: out of time")), s
    elif s["kind"] not in ("libs", "gpu"):
        assert not s["status"].startswith(("out of time", "skipped: out of time")), s
assert not set(second) & {"cuda_smoke", "peak_gpu", "bandwidth_gpu", "nccl_1gpu", "train_bf16",
                          "torch"}, second
PY
}

#### The schedule's own estimates.
"$B/gpu_check.sh" --schedule | awk 'NR > 1 && $1 != "budget" {print $1, $3}' >"$TMP/estimates"
grep -q "^train_bf16 " "$TMP/estimates" || fail "--schedule lists train_bf16: $(cat "$TMP/estimates")"
# The other GPU tests share one row: split its estimate among them.
other=$(awk '$1 == "other_tests" {print $2}' "$TMP/estimates")
for t in gpu_train_test nccl_test cuda_gemm_test; do echo "$t $((other / 3))" >>"$TMP/estimates"; done
R="$TMP/estimates_run/results"
check "$R" "$TMP/estimates"
headline "$R" "the estimates"
summary="$(cat "$R/summary.txt")"
expect_in "$summary" "^ratio cnnbench/pytorch resnet50 bf16 batch 256, CUDA graphs off \\(train_bf16_no_graph\\), like for like / PyTorch eager: 1.20$" \
  "the headline ratio without CUDA graphs"
expect_in "$summary" "^ratio nccl broadcast at 67108864 B, ranks 1: bytes read \\+ written \\(2 x algbw\\) / bandwidth d2d \\(read \\+ write\\): 0.75$" \
  "NCCL against the copy, the same bytes"
expect_in "$summary" "^train_bf16_legacy_bn +train/.* ok" "the legacy batch norm step within the estimates"
expect_in "$summary" "^cuda_conv_test +1 +0 +0 +ok" "the op tests within the estimates"
expect_in "$(cat "$R/tests.log")" "NCCL_DEBUG=WARN" "NCCL_DEBUG=WARN for the tests"
expect_in "$summary" "verdict: incomplete" "the estimates do not reach the end: incomplete, not failed"
[ $rc -eq 0 ] || fail "the estimates: exit $rc (nothing failed):"$'\n'"$out"
# Up to the op tests every step fits its estimate with time to spare, so
# none is cut short (near the budget's end one may be: the programs' own
# start-up counts ten times on the fast clock).
grep "out of time: cut short" <<<"$summary" |
  grep -E "^(cuda_smoke|peak_gpu|bandwidth_gpu|nccl_1gpu|train_bf16|torch|train_bf16_legacy_bn|train_bf16_no_graph|cuda_ops_test|cuda_conv_test) " &&
  fail "a step before the rest ran past its estimate in the estimates' run:"$'\n'"$summary"

#### Pessimistic: every compile three times slower, NCCL's init hung, PyTorch slow.
awk '{ s = $2 }
     $1 ~ /^(cuda_smoke|train_|infer_|cuda_.*_test|gpu_train_test|convergence_|step_breakdown|cuda_overhead)/ { s = 3 * $2 }
     $1 == "nccl_1gpu" || $1 == "nccl_test" { s = 100000 }
     $1 ~ /^torch/ { s = int(1.5 * $2) }
     { print $1, s }' "$TMP/estimates" >"$TMP/pessimistic"
R="$TMP/pessimistic_run/results"
check "$R" "$TMP/pessimistic"
headline "$R" "pessimistic"
summary="$(cat "$R/summary.txt")"
expect_in "$summary" "^nccl_1gpu +nccl_1gpu .*failed: timed out after 45s" "a hung NCCL costs its own limit and fails"
expect_in "$summary" "out of time: cut short by the budget after [0-9]+s \\(its own limit is [0-9]+s\\)" \
  "a step whose limit the budget cut is out of time"
python3 - "$R/check.json" <<'PY' || fail "the step cut short is not failed and is in the second call"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["cut_short"], doc["cut_short"]
for s in doc["steps"]:
    if s["name"] in doc["cut_short"]:
        assert s["status"].startswith("out of time"), s
        assert "'" + s["name"] + "'" in doc["second_call"], doc["second_call"]
assert doc["verdict"] == "failed", doc["verdict"]  # the hung NCCL
PY

#### Every step run (no sleeps, a budget that reaches the end), libcudnn_ops
# missing, a case error: at most 8 files, the legacy step alone skipped.
rm "$TMP/cuda/lib64/libcudnn_ops.so.9"
long="bf16 8192^3 matmul wrong at (17, 4093): 1.234 against 1.250 expected; $(printf 'the rest of a long reason %.0s' 1 2 3 4 5 6 7) [cuDNN: CUDNN_STATUS_EXECUTION_FAILED]"
R="$TMP/all/results"
FAKE_FAIL_STEP=peak_gpu FAKE_FAIL_MESSAGE="$long" check "$R" /dev/null
touch "$TMP/cuda/lib64/libcudnn_ops.so.9"
summary="$(cat "$R/summary.txt")"
[ $rc -eq 1 ] || fail "a failed case: exit $rc (1)"
expect_in "$summary" "^peak_gpu +peak/bf16/cuda/gemm:m8192n8192k8192 .*failed: bf16 8192\\^3 matmul wrong" \
  "a wrong result is a failure, not a skip"
expect_in "$summary" "verdict: failed" "a failed case fails the check"
joined="$(sed 's/^      | / /' "$R/summary.txt" | tr -d '\n' | tr -s ' ')"
grep -qF -- "$(tr -s ' ' <<<"$long")" <<<"$joined" || fail "the long reason is kept whole:"$'\n'"$summary"
expect_in "$summary" "^train_bf16_legacy_bn +train_bf16_legacy_bn .*skipped: libcudnn_ops.so.9 is not on this machine" \
  "without libcudnn_ops the legacy batch norm step skips, saying why"
expect_in "$(cat "$R/env.txt")" "^OPTIONAL MISSING libcudnn_ops.so.9" "env.txt names the missing optional library"
expect_in "$summary" "^train_bf16_real +train/.* ok" "the last step ran"
expect_in "$summary" "convergence top-1 bf16 on the GPU 0.900 vs the CPU's 0.910" "the CPU's top-1 from the bundle"
grep -q "second call" <<<"$summary" && fail "every step ran: no second call:"$'\n'"$summary"
files=$(find "$R" -type f | wc -l)
[ "$files" -le 8 ] || fail "every step run left $files files (at most 8): $(ls -A "$R")"
[ -f "$R/trace.json" ] || fail "the profile's trace.json is in the results"
[ -z "$(find "$R" -mindepth 1 -type d)" ] || fail "no subfolders in the results: $(ls -A "$R")"

#### A compile deadline: each step's limit less a margin reaches the
# programs; a case that passed it is out of time, not failed, and its step
# goes into the second call.
R="$TMP/deadline/results"
FAKE_DEADLINE_STEP=train_fp32 check "$R" /dev/null 'train_fp32' 'train_tf32'
summary="$(cat "$R/summary.txt")"
[ $rc -eq 0 ] || fail "a passed compile deadline is not a failure: exit $rc"$'\n'"$summary"
expect_in "$summary" "^train_fp32 +train/resnet50_v1.5/fp32/.*out of time: deadline: layer conv1" \
  "the deadline's row out of time, naming the layer"
expect_in "$summary" "^second call: bundle/gpu_check.sh results2 'train_fp32'$" "the step in the second call"
expect_in "$summary" "verdict: incomplete" "incomplete, not failed"
expect_in "$(cat "$R/bench.log")" "step train_tf32: CNNBENCH_COMPILE_DEADLINE_S=10.500$" \
  "the deadline is the limit (120 s) less 15 s, in real seconds on the fast clock"
expect_in "$summary" "^plan-choice file: 1 plans searched and timed once, 1 built from the file in later steps$" \
  "one plan-choice file across the call's steps, its hits counted"

#### No visible GPU: said once on the console and once in summary.txt
# (its verdict, with why), nothing after the environment, no empty logs or
# table headers. A folder an earlier check filled keeps none of its logs.
R="$TMP/nogpu/results"
mkdir -p "$R"
for f in smoke.log tests.log bench.log breakdown.log trace.json; do echo "an earlier check's" >"$R/$f"; done
FAKE_NO_GPU=1 check "$R" /dev/null
[ $rc -eq 3 ] || fail "no GPU: exit $rc (3):"$'\n'"$out"
[ "$(grep -c "no GPU is visible" <<<"$out")" -eq 1 ] || fail "no GPU said once on the console:"$'\n'"$out"
summary="$(cat "$R/summary.txt")"
expect_in "$summary" "^verdict: no GPU: nvidia-smi -L lists no GPU \\(No devices were found\\); nothing ran after the environment \\(env.txt\\)$" \
  "the verdict says no GPU, and why"
# (run.sh's driver line may say "no GPU driver here?": that is another fact.)
[ "$(grep -v '^driver ' <<<"$summary" | grep -ci "no GPU")" -eq 1 ] ||
  fail "no GPU said once in summary.txt:"$'\n'"$summary"
grep -q "GPU test" <<<"$summary" && fail "an empty GPU test table without a GPU:"$'\n'"$summary"
[ "$(ls -A "$R" | tr '\n' ' ')" = "check.json env.txt summary.txt " ] ||
  fail "without a GPU only env.txt, summary.txt and check.json: $(ls -A "$R")"
grep -qE "^(cuda_smoke|peak_gpu|train_bf16) " <<<"$summary" && fail "steps ran without a GPU:"$'\n'"$summary"
grep -q "second call" <<<"$summary" && fail "no second call without a GPU"

#### README.md's schedule table is the script's.
if [ -f "$ROOT/README.md" ]; then
  while read -r name limit estimate; do
    grep -qE "^\\| \`$name\` \\| $limit \\| $estimate \\|" "$ROOT/README.md" ||
      fail "README.md's schedule lacks '| \`$name\` | $limit | $estimate |'"
  done < <("$B/gpu_check.sh" --schedule | awk 'NR > 1 && $1 != "budget" {print $1, $2, $3}')
  budget="$("$B/gpu_check.sh" --schedule | sed -n 's/^budget \([0-9]*\)s$/\1/p')"
  grep -q "within $budget s" "$ROOT/README.md" || fail "README.md states the budget, $budget s"
else
  fail "no README.md at $ROOT"
fi

finish
