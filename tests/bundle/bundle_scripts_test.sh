#!/usr/bin/env bash
# tools/bundle's scripts without a GPU: bash syntax; run.sh's search order
# (CUDA home, then site-packages/nvidia/*/lib), its one origin when one has
# every library, its clear failure when a library is missing, and a program
# with unresolved symbols (a fake ldd) named; gpu_check.sh with a bench and
# tests that skip everything: it finishes, shows each case skipped with its
# reason, and leaves at most 8 files; with a failing, a crashing smoke
# check, failing and crashing tests, no time left, and stopped from
# outside between two steps; summarize.py's exit statuses, test failures
# and second call; sanitize.sh with fake sanitizers (clean, findings, a
# failing test, a refusing device, none installed), one file; the PyTorch
# peer's JSON after each precision; gather_libs.sh (the bundle's
# libraries) with a fake ldd; every script refusing a wrong command line
# (an unknown option, a results folder that is a file) before it runs;
# summarize.py on odd JSON (no traceback, NaN shown as n/a, strict
# check.json).
#
# Under Bazel (sh_test) or directly: bash tests/bundle/bundle_scripts_test.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"
# A fake nvidia-smi that lists an H200: gpu_check.sh stops after the
# environment where no GPU is visible.
fake_nvidia_smi "$TMP/fakebin"
export PATH="$TMP/fakebin:$PATH"

for s in bundle/run.sh bundle/gpu_check.sh bundle/sanitize.sh bundle/gather_libs.sh device_bundle.sh; do
  bash -n "$TOOLS/$s" || fail "bash -n $s"
done
python3 -m py_compile "$TOOLS/bundle/summarize.py" "$TOOLS/bundle/bench_rows.py" "$TOOLS/peers/torch_train_step.py" \
  || fail "python syntax"

# A bundle with no programs and two CUDA libraries to find.
B="$TMP/bundle"
mkdir -p "$B/bin" "$B/lib" "$B/peers"
cp "$TOOLS/bundle/run.sh" "$TOOLS/bundle/gpu_check.sh" "$TOOLS/bundle/sanitize.sh" "$TOOLS/bundle/script_args.sh" \
  "$TOOLS/bundle/summarize.py" "$TOOLS/bundle/bench_rows.py" "$B/"
cp "$TOOLS/peers/torch_train_step.py" "$B/peers/"
chmod +x "$B"/*.sh
printf 'libcudnn.so.9\nlibcublasLt.so.13\n' >"$B/cuda_libs.txt"
printf 'cudnn=9.19.0\ncublasLt=13.1.0\ncudnn_soname=libcudnn.so.9\ncublaslt_soname=libcublasLt.so.13\n' \
  >"$B/build_versions.txt"
HOME_CUDA="$TMP/cuda"
SITE1="$TMP/site1"
SITE2="$TMP/site2"
mkdir -p "$HOME_CUDA/lib64" "$SITE1/nvidia/cublas/lib" "$SITE2/nvidia/cudnn/lib" "$SITE2/nvidia/cu13/lib"
touch "$HOME_CUDA/lib64/libcublasLt.so.13" "$SITE1/nvidia/cublas/lib/libcublasLt.so.13" \
  "$SITE2/nvidia/cudnn/lib/libcudnn.so.9" "$SITE2/nvidia/cu13/lib/libcudnn.so.9"
export CNNBENCH_CUDA_HOME="$HOME_CUDA" CNNBENCH_SITE_PACKAGES="$SITE1:$SITE2"

out="$("$B/run.sh" --libs 2>&1)"
rc=$?
[ $rc -eq 0 ] || fail "run.sh --libs exit $rc with every library present"
expect_in "$out" "found +libcublasLt.so.13 -> $HOME_CUDA/lib64/" "the CUDA home comes first"
expect_in "$out" "found +libcudnn.so.9 -> $SITE2/nvidia/cu13/lib/|found +libcudnn.so.9 -> $SITE2/nvidia/cudnn/lib/" \
  "site-packages' nvidia/*/lib"
expect_in "$out" "cudnn +9.19.0" "the build's version beside the loaded one"
path="$("$B/run.sh" printenv LD_LIBRARY_PATH)"
case "$path" in
  "$B/lib:$HOME_CUDA/lib64:$SITE2/nvidia/"*) ;;
  *) fail "loader path order: $path" ;;
esac

# Without the CUDA home, cuBLASLt comes from the first site-packages tree.
out="$(CNNBENCH_CUDA_HOME="$TMP/none" "$B/run.sh" --libs 2>&1)"
expect_in "$out" "found +libcublasLt.so.13 -> $SITE1/nvidia/cublas/lib/" "site-packages in order"

# A missing library: exit 2 naming it, for --libs and for a program.
rm "$SITE2/nvidia/cudnn/lib/libcudnn.so.9" "$SITE2/nvidia/cu13/lib/libcudnn.so.9"
out="$("$B/run.sh" --libs 2>&1)"
[ $? -eq 2 ] || fail "run.sh --libs should exit 2 when libcudnn.so.9 is missing"
expect_in "$out" "MISSING +libcudnn.so.9" "the missing library named"
out="$("$B/run.sh" true 2>&1)"
[ $? -eq 2 ] || fail "run.sh PROGRAM should exit 2 when a library is missing"
expect_in "$out" "libcudnn.so.9" "the missing library named for a program"
touch "$SITE2/nvidia/cudnn/lib/libcudnn.so.9"

# gpu_check.sh with a bench that skips every case and a test that skips.
cat >"$B/bin/bench_all" <<'FAKE'
#!/usr/bin/env bash
out=""
store=""
for a in "$@"; do case "$a" in --benchmark_out=*) out="${a#*=}" ;; --store=*) store="${a#*=}" ;; esac; done
[ -n "$out" ] || exit 0
# The results folder is capped at 8 files: the bench must not make a store there.
[ "$store" = none ] || { echo "fake bench: run without --store=none" >&2; exit 9; }
cat >"$out" <<JSON
{"context": {}, "benchmarks": [
 {"name": "train/resnet50_v1.5/bf16/synthetic/batch:256/gpus:1/iterations:20/repeats:1/manual_time",
  "run_type": "iteration", "error_occurred": true,
  "error_message": "unsupported: fake bench skips everything"}]}
JSON
FAKE
cat >"$B/bin/fake_test" <<'FAKE'
#!/usr/bin/env bash
for a in "$@"; do case "$a" in --gtest_output=json:*) out="${a#*json:}" ;; esac; done
echo '{"testsuites": [{"testsuite": [{"name": "NeedsAGpu", "result": "SKIPPED"}]}]}' >"$out"
FAKE
cat >"$B/bin/step_breakdown" <<'FAKE'
#!/usr/bin/env bash
echo "fake profile $*"
FAKE
cat >"$B/bin/cuda_overhead" <<'FAKE'
#!/usr/bin/env bash
for a in "$@"; do case "$a" in --json=*) out="${a#*=}" ;; esac; done
echo '[{"layer": "conv3x3 conv:x", "pass": "fwd", "ratio": 0.97, "ours_ms": 1, "direct_ms": 0.97}]' >"$out"
FAKE
chmod +x "$B/bin/cuda_overhead"
chmod +x "$B/bin/bench_all" "$B/bin/fake_test" "$B/bin/step_breakdown"
results="$TMP/results"
out="$(CNNBENCH_CHECK_SECONDS=120 CNNBENCH_CHECK_STEPS=1 CNNBENCH_CHECK_WARMUP=0 \
       "$B/gpu_check.sh" "$results" 2>&1)"
rc=$?
[ $rc -eq 0 ] || fail "gpu_check.sh exit $rc:"$'\n'"$out"
summary="$(cat "$results/summary.txt" 2>/dev/null)"
expect_in "$summary" "fake_test +0 +0 +1 +ok" "the test's skip counted"
expect_in "$summary" "train/resnet50_v1.5/bf16/.*skipped: unsupported: fake bench skips everything" \
  "a skipped case with its reason"
expect_in "$summary" "train_bf16_no_graph +train/resnet50_v1.5/bf16/.*skipped: unsupported" \
  "the step without CUDA graphs"
expect_in "$summary" "train_bf16_legacy_bn +train/resnet50_v1.5/bf16/.*skipped: unsupported" \
  "rows name the step that ran them (one case under several flags)"
expect_in "$summary" "pytorch/resnet50.*skipped" "the PyTorch peer skipped without a GPU"
expect_in "$summary" "cuda_overhead +conv3x3 conv:x fwd direct/ours +0.970 +ratio +ok" "the overhead ratios"
expect_in "$summary" "step_breakdown +per-layer profile \\(breakdown.log\\) .* ok" "the profile's outcome"
expect_in "$(cat "$results/breakdown.log")" "fake profile --profile --backend=cuda" "the profile's output kept"
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$results/check.json" || fail "check.json"
# Only the named steps (a second call for what the first ran out of time for).
out="$(CNNBENCH_CHECK_SECONDS=120 CNNBENCH_CHECK_STEPS=1 CNNBENCH_CHECK_WARMUP=0 \
       "$B/gpu_check.sh" "$TMP/results2" 'train_fp*' 2>&1)"
only="$(cat "$TMP/results2/summary.txt" 2>/dev/null)"
expect_in "$only" "train_fp16 +train/" "a selected step runs"
expect_in "$only" "train_fp32 +train/" "every step the pattern selects runs"
grep -qE "fake_test|train_bf16|step_breakdown" <<<"$only" && fail "unselected steps ran:"$'\n'"$only"
files=$(find "$results" -type f | wc -l)
[ "$files" -le 8 ] || fail "gpu_check.sh left $files files (at most 8): $(ls -A "$results")"
for f in "$results"/* "$results"/.[!.]*; do
  [ -e "$f" ] || continue
  case "$(basename "$f")" in
    summary.txt|check.json|env.txt|smoke.log|tests.log|bench.log|breakdown.log|trace.json) ;;
    *) fail "gpu_check.sh left $f in the results folder" ;;
  esac
done
expect_in "$(cat "$results/env.txt")" "== run.sh --libs" "env.txt holds run.sh --libs"
expect_in "$(cat "$results/env.txt")" "nvidia-smi" "env.txt says what nvidia-smi said, or that there is none"
expect_in "$summary" "cuda_smoke .*skipped: this bundle has no bin/cuda_smoke" "an absent smoke program skipped"
grep -q "SMOKE FAILURES" <<<"$summary" && fail "an absent smoke program is not a smoke failure"
expect_in "$summary" "verdict: passed" "nothing failed"

#### summarize.py on its own: exit statuses, test failures, smoke, a second call.
W="$TMP/sum_work"
S="$TMP/sum_out/results"
mkdir -p "$W" "$S"
cat >"$W/ops_test.json" <<'JSON'
{"testsuites": [{"name": "CudaOps", "testsuite": [
  {"name": "Add", "result": "COMPLETED"},
  {"name": "Conv3x3Bf16", "result": "COMPLETED", "failures": [
    {"failure": "tests/kernels/cuda/ops_test.cc:42\nValue of: max_error < 1e-2\n  Actual: false", "type": ""},
    {"failure": "a second failure", "type": ""}]}]}]}
JSON
printf '[ RUN      ] CudaConv.Forward\n[       OK ] CudaConv.Forward (1 ms)\n[ RUN      ] CudaConv.Backward\nlast line before the crash\n' \
  >"$W/conv_test.out"
printf '[{"check": "gemm_bf16", "status": "ok", "seconds": 0.5, "implementation": "cublasLt", "detail": ""},
 {"check": "conv_fwd_bf16", "status": "failed: CUDNN_STATUS_EXECUTION_FAILED", "seconds": 0.25,
  "implementation": "cudnn frontend", "detail": "engine 7"}]\n' >"$W/smoke.json"
{
  printf 'smoke\tcuda_smoke\t1\t2\t\t%s\t%s\t0\n' "$W/smoke.json" "$S/smoke.log"
  printf 'test\tops_test\t1\t5\t\t%s\t%s\t0\n' "$W/ops_test.json" "$W/ops_test.out"
  printf 'test\tconv_test\t139\t3\t\t%s\t%s\t0\n' "$W/conv_test.json" "$W/conv_test.out"
  printf 'test\thang_test\t124\t60\ttimed out after 60s\t%s\t\t0\n' "$W/hang_test.json"
  printf 'bench\ttrain_bf16\t137\t4\t\t%s\t\t0\n' "$W/bench_train_bf16.json"
  printf 'bench\ttrain_fp16\tskipped\t0\tout of time (needs about 50s, 3s of the 520s left)\t\t\t\n'
} >"$W/steps.tsv"
printf 'smoke\tcuda_smoke\ntest\tops_test\ntest\tconv_test\ntest\thang_test\nbench\ttrain_bf16\nbench\ttrain_fp16\nbench\ttrain_fp32\n' \
  >"$W/plan.tsv"
: >"$S/smoke.log"
python3 "$TOOLS/bundle/summarize.py" "$W" "$S" "" >/dev/null
[ $? -eq 1 ] || fail "summarize.py should exit 1 when something failed"
summary="$(cat "$S/summary.txt")"
[ "$(head -1 "$S/summary.txt")" = "SMOKE FAILURES (bin/cuda_smoke; its output is in smoke.log):" ] \
  || fail "the summary should lead with the smoke failures:"$'\n'"$summary"
expect_in "$(sed -n 2,4p "$S/summary.txt")" "conv_fwd_bf16: failed: CUDNN_STATUS_EXECUTION_FAILED; implementation: cudnn frontend; detail: engine 7" \
  "the failed smoke check named with its implementation and detail"
expect_in "$(sed -n 2,4p "$S/summary.txt")" "cuda_smoke: failed: exit 1 \\(some checks failed\\)" "the smoke program's exit status"
expect_in "$summary" "gemm_bf16 +0.50 +cublasLt +ok" "each smoke row shown"
expect_in "$summary" "conv_test .*failed: exit 139 \\(SIGSEGV\\), no results; it was in CudaConv.Backward" \
  "139 is SIGSEGV, and the test it was in named"
expect_in "$summary" "hang_test .*failed: timed out after 60s, no results" "124 stays timed out"
grep -q "exit 124" <<<"$summary" && fail "124 should read as timed out, not as an exit status"
expect_in "$summary" "train_bf16 .*failed: exit 137 \\(SIGKILL\\)" "137 without a timeout is SIGKILL"
expect_in "$summary" "ops_test: CudaOps.Conv3x3Bf16" "the failed test named"
expect_in "$summary" "tests/kernels/cuda/ops_test.cc:42: Value of: max_error < 1e-2" "its first message line"
expect_in "$summary" "ops_test +1 +1 +0 +failed: exit 1" "the test counts"
expect_in "$summary" "not run: train_fp16 \\(out of time\\), train_fp32 \\(not reached\\)" "what did not run"
expect_in "$(tail -1 "$S/summary.txt")" "^second call: bundle/gpu_check.sh results2 'train_fp16' 'train_fp32'$" \
  "the one command for a second call"
python3 - "$S/check.json" <<'PY' || fail "check.json's contents"
import json, sys
doc = json.load(open(sys.argv[1]))
ops = [t for t in doc["tests"] if t["name"] == "ops_test"][0]
assert ops["failures"] == [{"test": "CudaOps.Conv3x3Bf16", "message":
    "tests/kernels/cuda/ops_test.cc:42\nValue of: max_error < 1e-2\n  Actual: false"}], ops
smoke = [s for s in doc["steps"] if s["kind"] == "smoke"][0]
assert smoke["document"][1]["check"] == "conv_fwd_bf16", smoke  # the raw JSON kept
assert doc["out_of_time"] == ["train_fp16"] and doc["not_reached"] == ["train_fp32"], doc
assert doc["second_call"].endswith("gpu_check.sh results2 'train_fp16' 'train_fp32'"), doc
assert doc["verdict"] == "failed"
PY

#### gpu_check.sh with a smoke program and op tests.
cat >"$B/bin/cuda_smoke" <<'FAKE'
#!/usr/bin/env bash
for a in "$@"; do case "$a" in --json=*) out="${a#*=}" ;; esac; done
echo "fake smoke: CNNBENCH_VERBOSE=${CNNBENCH_VERBOSE:-unset}" >&2
case "${FAKE_SMOKE:-ok}" in
  fail)
    echo '[{"check": "gemm_bf16", "status": "ok", "seconds": 0.1, "implementation": "cublasLt", "detail": ""},
           {"check": "batch_norm_fwd_bf16", "status": "failed: CUDNN_STATUS_NOT_SUPPORTED", "seconds": 0.2,
            "implementation": "cudnn graph", "detail": "no engine"}]' >"$out"
    exit 1 ;;
  crash) echo "fake smoke: about to crash in conv_fwd_bf16" >&2; kill -SEGV $$ ;;
  *) echo '[{"check": "gemm_bf16", "status": "ok", "seconds": 0.1, "implementation": "cublasLt", "detail": ""}]' >"$out" ;;
esac
FAKE
cat >"$B/bin/cuda_ops_test" <<'FAKE'
#!/usr/bin/env bash
for a in "$@"; do case "$a" in --gtest_output=json:*) out="${a#*json:}" ;; esac; done
echo "cudnn log level ${CUDNN_LOGLEVEL_DBG:-unset} to ${CUDNN_LOGDEST_DBG:-unset}, frontend ${CUDNN_FRONTEND_LOG_INFO:-unset}"
if [ -n "${FAKE_MARK:-}" ]; then echo $$ >"$FAKE_MARK.pid"; touch "$FAKE_MARK"; exec sleep 30; fi
case "${FAKE_OPS:-ok}" in
  crash) printf '[ RUN      ] CudaOps.Softmax\n'; kill -SEGV $$ ;;
  fail) echo '{"testsuites": [{"name": "CudaOps", "testsuite": [{"name": "Relu", "result": "COMPLETED",
          "failures": [{"failure": "ops_test.cc:7\nExpected: 1.0\nActual: nan"}]}]}]}' >"$out"; exit 1 ;;
esac
echo '{"testsuites": [{"name": "CudaOps", "testsuite": [{"name": "Relu", "result": "COMPLETED"}]}]}' >"$out"
FAKE
cat >"$B/bin/cuda_conv_test" <<'FAKE'
#!/usr/bin/env bash
for a in "$@"; do case "$a" in --gtest_output=json:*) out="${a#*json:}" ;; esac; done
for i in $(seq 1 "${FAKE_LINES:-3}"); do echo "conv log line $i"; done
echo '{"testsuites": [{"name": "CudaConv", "testsuite": [{"name": "Fwd", "result": "COMPLETED"}]}]}' >"$out"
FAKE
chmod +x "$B/bin/cuda_smoke" "$B/bin/cuda_ops_test" "$B/bin/cuda_conv_test"
check() {  # check RESULTS_DIR [STEP...]: gpu_check.sh, quick, its output in $out and status in $rc
  out="$(CNNBENCH_CHECK_SECONDS="${SECS:-120}" CNNBENCH_CHECK_STEPS=1 CNNBENCH_CHECK_WARMUP=0 \
         "$B/gpu_check.sh" "$@" 2>&1)"
  rc=$?
}
R="$TMP/smoke_fail/results"
FAKE_SMOKE=fail FAKE_OPS=fail FAKE_LINES=50 CNNBENCH_LOG_LINES=10 check "$R"
[ $rc -eq 1 ] || fail "gpu_check.sh should exit 1 when a smoke check failed (exit $rc)"
summary="$(cat "$R/summary.txt")"
[ "$(head -1 "$R/summary.txt")" = "SMOKE FAILURES (bin/cuda_smoke; its output is in smoke.log):" ] \
  || fail "the summary should lead with the smoke failures:"$'\n'"$summary"
expect_in "$(sed -n 2,3p "$R/summary.txt")" "batch_norm_fwd_bf16: failed: CUDNN_STATUS_NOT_SUPPORTED" "the failed check named"
expect_in "$summary" "fake_test +0 +0 +1 +ok" "the other tests still run after a failed smoke check"
expect_in "$summary" "^GPU 0: NVIDIA H200" "nvidia-smi -L in the summary's head"
expect_in "$summary" "^GPU: NVIDIA H200, 580.65.06, 143771 MiB, 1980 MHz, 700.00 W" "the GPU's driver, memory, clock, power"
expect_in "$(cat "$R/env.txt")" "^name, driver_version, memory.total" "nvidia-smi's query in env.txt"
expect_in "$summary" "train/resnet50_v1.5/bf16/.*skipped: unsupported" "the figures still run after a failed smoke check"
expect_in "$summary" "cuda_ops_test: CudaOps.Relu" "a failed op test named"
expect_in "$(cat "$R/smoke.log")" "fake smoke: CNNBENCH_VERBOSE=1" "CNNBENCH_VERBOSE=1 for the programs"
tests_log="$(cat "$R/tests.log")"
expect_in "$tests_log" "cudnn log level 2 to stderr, frontend 1" "cuDNN's logs on for the op tests"
expect_in "$tests_log" "lines cut here, of 5[0-9]" "a test's long output cut, saying so"
expect_in "$tests_log" "conv log line 1$" "its first lines kept"
expect_in "$tests_log" "conv log line 50$" "its last lines kept"
grep -q "conv log line 25$" <<<"$tests_log" && fail "the middle of a long test output should be cut"
[ "$(find "$R" -type f | wc -l)" -le 8 ] || fail "more than 8 files: $(ls -A "$R")"
python3 - "$R/check.json" <<'PY' || fail "check.json carries each step's JSON"
import json, sys
doc = json.load(open(sys.argv[1]))
kinds = {s["kind"] for s in doc["steps"] if "document" in s}
assert {"smoke", "bench", "torch", "overhead"} <= kinds, kinds
PY
# A crashing smoke program and a crashing op test.
R="$TMP/smoke_crash/results"
FAKE_SMOKE=crash FAKE_OPS=crash check "$R" 'cuda_*'
summary="$(cat "$R/summary.txt")"
[ "$(head -1 "$R/summary.txt")" = "SMOKE FAILURES (bin/cuda_smoke; its output is in smoke.log):" ] \
  || fail "a crashed smoke program should lead the summary:"$'\n'"$summary"
expect_in "$(sed -n 2,5p "$R/summary.txt")" "cuda_smoke: failed: exit 139 \\(SIGSEGV\\)" "the smoke crash's signal"
expect_in "$(sed -n 2,6p "$R/summary.txt")" "about to crash in conv_fwd_bf16" "the smoke program's last words"
expect_in "$summary" "cuda_ops_test .*exit 139 \\(SIGSEGV\\), no results; it was in CudaOps.Softmax" "a crashed test's signal and test"
# No time left: every step out of time, gathered into the second call.
R="$TMP/oot/results"
SECS=4 check "$R"
summary="$(cat "$R/summary.txt")"
expect_in "$summary" "cuda_smoke .*skipped: out of time" "out of time said"
grep -q "SMOKE FAILURES" <<<"$summary" && fail "a smoke check out of time is not a smoke failure"
expect_in "$summary" "^second call: bundle/gpu_check.sh results2 'cuda_smoke' 'peak_gpu' 'bandwidth_gpu' 'nccl_1gpu' 'train_bf16' 'torch' 'train_bf16_legacy_bn' 'train_bf16_no_graph' 'cuda_ops_test' 'cuda_conv_test' .*'train_bf16_real'$" \
  "the second call lists what ran out of time, in order"

#### gpu_check.sh stopped from outside between two steps: the summary
# written after the step before stays, naming what did not run.
stop_check() {  # stop_check SIGNAL RESULTS_DIR: gpu_check.sh stopped while cuda_ops_test runs
  local mark="$TMP/mark_$1" work="$TMP/work_$1" _ pid
  rm -f "$mark" "$mark.pid"
  mkdir -p "$work"
  FAKE_MARK="$mark" TMPDIR="$work" CNNBENCH_CHECK_SECONDS=120 CNNBENCH_CHECK_STEPS=1 \
    "$B/gpu_check.sh" "$2" >"$TMP/stop_$1.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 300); do [ -e "$mark" ] && break; sleep 0.1; done
  [ -e "$mark" ] || fail "cuda_ops_test never started: $(cat "$TMP/stop_$1.log")"
  kill "-$1" "$pid"
  wait "$pid" 2>/dev/null
  stop_rc=$?
  [ -e "$mark.pid" ] && kill "$(cat "$mark.pid")" 2>/dev/null
  sleep 0.5
}
R="$TMP/killed/results"
stop_check KILL "$R"
summary="$(cat "$R/summary.txt" 2>/dev/null)"
expect_in "$summary" "gemm_bf16 .*ok" "the step finished before the stop is in the summary"
expect_in "$summary" "written while the check was running \\(after train_bf16_no_graph" "a summary written midway says so"
expect_in "$summary" "not run: cuda_ops_test \\(not reached\\), cuda_conv_test \\(not reached\\)" \
  "the steps not reached named"
expect_in "$summary" "second call: bundle/gpu_check.sh results2 'cuda_ops_test' 'cuda_conv_test' 'infer_bf16'" \
  "a second call for them"
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$R/check.json" || fail "check.json after a stop"
[ "$(find "$R" -type f | wc -l)" -le 8 ] || fail "more than 8 files after a stop: $(ls -A "$R")"
R="$TMP/stopped/results"
stop_check TERM "$R"
[ "$stop_rc" -eq 143 ] || fail "gpu_check.sh stopped by TERM should exit 143 (exit $stop_rc)"
summary="$(cat "$R/summary.txt" 2>/dev/null)"
expect_in "$summary" "the check was stopped by SIGTERM" "a stop by TERM said"
expect_in "$summary" "cuda_ops_test .*stopped by SIGTERM while it ran" "the step it stopped"
expect_in "$summary" "second call: bundle/gpu_check.sh results2 'cuda_ops_test' 'cuda_conv_test'" \
  "the stopped step in the second call"
[ -z "$(ls -A "$TMP/work_TERM")" ] || fail "gpu_check.sh left its temporary folder after TERM"

#### run.sh: one origin when one has every library.
O="$TMP/origin"
mkdir -p "$O/home/lib64" "$O/siteA/nvidia/cublas/lib" "$O/siteB/nvidia/cudnn/lib" "$O/siteB/nvidia/cublas/lib"
touch "$O/home/lib64/libcublasLt.so.13" "$O/siteA/nvidia/cublas/lib/libcublasLt.so.13" \
  "$O/siteB/nvidia/cudnn/lib/libcudnn.so.9" "$O/siteB/nvidia/cublas/lib/libcublasLt.so.13"
out="$(CNNBENCH_CUDA_HOME="$O/home" CNNBENCH_SITE_PACKAGES="$O/siteA:$O/siteB" "$B/run.sh" --libs 2>&1)"
expect_in "$out" "origin: $O/siteB \\(site-packages" "the one site-packages with every library chosen"
expect_in "$out" "found +libcublasLt.so.13 -> $O/siteB/nvidia/cublas/lib/" \
  "cuBLASLt from the chosen origin, not the CUDA home that has it too"
path="$(CNNBENCH_CUDA_HOME="$O/home" CNNBENCH_SITE_PACKAGES="$O/siteA:$O/siteB" "$B/run.sh" printenv LD_LIBRARY_PATH)"
case "$path" in
  *"$O/home"*|*"$O/siteA"*) fail "the loader path should hold only the chosen origin: $path" ;;
esac
touch "$O/home/lib64/libcudnn.so.9"
out="$(CNNBENCH_CUDA_HOME="$O/home" CNNBENCH_SITE_PACKAGES="$O/siteA:$O/siteB" "$B/run.sh" --libs 2>&1)"
expect_in "$out" "origin: $O/home \\(the CUDA home\\)" "the CUDA home first when it has every library"
expect_in "$out" "found +libcudnn.so.9 -> $O/home/lib64/" "every library from the CUDA home"
rm "$O/home/lib64/libcudnn.so.9" "$O/siteB/nvidia/cublas/lib/libcublasLt.so.13"
out="$(CNNBENCH_CUDA_HOME="$O/home" CNNBENCH_SITE_PACKAGES="$O/siteA:$O/siteB" "$B/run.sh" --libs 2>&1)"
expect_in "$out" "origin: mixed origins" "mixed origins said"
expect_in "$out" "releases may mix" "and what that risks"
expect_in "$out" "^driver +(libcuda.so.1 -> |no libcuda.so.1 found \\(no GPU driver here\\?\\))" "the driver line"
# A missing libnvrtc (the build needs it; cuda_libs.txt lists it) named.
cp "$B/cuda_libs.txt" "$TMP/cuda_libs.saved"
echo libnvrtc.so.13 >>"$B/cuda_libs.txt"
out="$("$B/run.sh" --libs 2>&1)"
[ $? -eq 2 ] || fail "run.sh --libs should exit 2 when libnvrtc.so.13 is missing"
expect_in "$out" "MISSING +libnvrtc.so.13" "the missing libnvrtc named"
touch "$HOME_CUDA/lib64/libnvrtc.so.13" "$HOME_CUDA/lib64/libnvrtc-builtins.so.13.0" \
  "$HOME_CUDA/lib64/libnvrtc-builtins.so.13.0.88"
out="$("$B/run.sh" --libs 2>&1)"
expect_in "$out" "runtime +libnvrtc-builtins.so.13.0 -> $HOME_CUDA/lib64/libnvrtc-builtins.so.13.0$" \
  "NVRTC's builtins found by their soname"
expect_in "$out" "absent +libcudnn_graph.so.\\* \\(this bundle's cuda_libs.txt does not list it" \
  "cuDNN's sub-library said absent, and not required by a bundle that does not list it"
# NVRTC's builtins by major version: the build's 13.0, a machine's 13.2.
echo libnvrtc-builtins.so.13.0 >>"$B/cuda_libs.txt"
rm "$HOME_CUDA/lib64/libnvrtc-builtins.so.13.0" "$HOME_CUDA/lib64/libnvrtc-builtins.so.13.0.88"
touch "$HOME_CUDA/lib64/libnvrtc-builtins.so.13.2"
out="$("$B/run.sh" --libs 2>&1)"
expect_in "$out" "found +libnvrtc-builtins.so.13.0 -> $HOME_CUDA/lib64/libnvrtc-builtins.so.13.2" \
  "NVRTC's builtins of another minor version accepted"
grep -q "MISSING +libnvrtc-builtins" <<<"$out" && fail "builtins of another minor version are not missing"
rm "$HOME_CUDA/lib64/libnvrtc-builtins.so.13.2"
touch "$HOME_CUDA/lib64/libnvrtc-builtins.so.13.0"
cp "$TMP/cuda_libs.saved" "$B/cuda_libs.txt"

#### A program with unresolved symbols: its steps skip, the others run.
cat >"$TMP/fake-ldd-r" <<'FAKE'
#!/usr/bin/env bash
bin="${*: -1}"
case "$(basename "$bin")" in
  bench_all) printf '\tlibcudnn.so.9 => /x/libcudnn.so.9 (0x0)\nundefined symbol: cudnnFakeNewApi_v9\t(%s)\nundefined symbol: cudnnOther\t(%s)\n' "$bin" "$bin" ;;
  fake_test) printf '\tlibcudnn.so.9 => /x/libcudnn.so.9 (0x0)\n' ;;
  *) echo "	not a dynamic executable"; exit 1 ;;
esac
FAKE
chmod +x "$TMP/fake-ldd-r"
out="$(CNNBENCH_LDD="$TMP/fake-ldd-r" "$B/run.sh" --libs 2>&1)"
[ $? -eq 3 ] || fail "run.sh --libs should exit 3 for unresolved symbols only"
expect_in "$out" "^MISSING API in bench_all: cudnnFakeNewApi_v9 cudnnOther$" "the program and its first symbols"
grep -q "MISSING API in fake_test" <<<"$out" && fail "a program whose symbols resolve named"
R="$TMP/unresolved/results"
CNNBENCH_LDD="$TMP/fake-ldd-r" check "$R"
summary="$(cat "$R/summary.txt")"
expect_in "$summary" "train_bf16 +train_bf16 .*skipped: unresolved symbol cudnnFakeNewApi_v9 in bench_all" \
  "a step running that program skipped, saying why"
expect_in "$summary" "train_bf16_no_graph .*skipped: unresolved symbol cudnnFakeNewApi_v9 in bench_all" "every such step"
expect_in "$summary" "fake_test +0 +0 +1 +ok" "the other programs still run"
expect_in "$summary" "gemm_bf16 +0.10 +cublasLt +ok" "the smoke check still runs"
expect_in "$summary" "step_breakdown +per-layer profile .* ok" "the profile still runs"
printf '#!/usr/bin/env bash\nprintf "\\tlibmissing.so.1 => not found\\n"\n' >"$TMP/fake-ldd-lib"
chmod +x "$TMP/fake-ldd-lib"
out="$(CNNBENCH_LDD="$TMP/fake-ldd-lib" "$B/run.sh" --libs 2>&1)"
[ $? -eq 2 ] || fail "run.sh --libs should exit 2 when a program's library is not found"
expect_in "$out" "MISSING LIBRARY in bench_all: libmissing.so.1" "the missing library named with its program"
R="$TMP/nolib/results"
CNNBENCH_LDD="$TMP/fake-ldd-lib" check "$R"
[ $rc -eq 2 ] || fail "gpu_check.sh should exit 2 when a library is missing (exit $rc)"
expect_in "$(cat "$R/summary.txt")" "libraries +run.sh --libs \\(env.txt\\) .*failed: a CUDA library the build needs is missing" \
  "the summary says a library is missing"
rm -f "$B/bin/cuda_smoke" "$B/bin/cuda_ops_test" "$B/bin/cuda_conv_test"

#### The PyTorch peer writes its JSON after each precision: a fake torch
# whose second precision hangs.
P="$TMP/fake_torch"
mkdir -p "$P/torch" "$P/torchvision"
cat >"$P/torch/__init__.py" <<'PY'
import time
class _Cuda:
    calls = 0
    def is_available(self):
        _Cuda.calls += 1
        if _Cuda.calls > 1:
            time.sleep(60)
        return False
cuda = _Cuda()
PY
: >"$P/torchvision/__init__.py"
PYTHONPATH="$P" python3 "$TOOLS/peers/torch_train_step.py" --precisions=bf16,fp16 --json="$P/out.json" \
  >/dev/null 2>&1 &
peer=$!
for _ in $(seq 1 100); do [ -e "$P/out.json" ] && break; sleep 0.1; done
kill "$peer" 2>/dev/null
wait "$peer" 2>/dev/null
python3 - "$P/out.json" <<'PY' || fail "the peer's JSON should hold the first precision before the second ends"
import json, sys
rows = json.load(open(sys.argv[1]))
assert [r["precision"] for r in rows] == ["bf16"] and "skipped" in rows[0], rows
PY

# sanitize.sh with a fake compute-sanitizer: it runs the test and prints an
# ERROR SUMMARY with $FAKE_ERRORS errors (exit 86 when there are some), or
# refuses the device when $FAKE_REFUSE is set.
cat >"$TMP/fake-sanitizer" <<'FAKE'
#!/usr/bin/env bash
[ "${1:-}" = "--version" ] && { echo "fake compute-sanitizer version 1.0"; exit 0; }
if [ -n "${FAKE_REFUSE:-}" ]; then
  echo "========= Error: Device not supported"; exit 1
fi
tool=""; code=0
while [ $# -gt 0 ]; do
  case "$1" in
    --tool) tool="$2"; shift 2 ;;
    --error-exitcode) code="$2"; shift 2 ;;
    --print-limit) shift 2 ;;
    *) break ;;
  esac
done
"$@"; rc=$?
echo "========= ERROR SUMMARY: ${FAKE_ERRORS:-0} errors ($tool)"
[ "${FAKE_ERRORS:-0}" -gt 0 ] && exit "$code"
exit $rc
FAKE
chmod +x "$TMP/fake-sanitizer"
printf '#!/usr/bin/env bash\nexit 0\n' >"$B/bin/cuda_a_test"
printf '#!/usr/bin/env bash\nexit "${FAKE_TEST_RC:-0}"\n' >"$B/bin/cuda_b_test"
chmod +x "$B/bin/cuda_a_test" "$B/bin/cuda_b_test"
san="$TMP/sanitize"
out="$(COMPUTE_SANITIZER="$TMP/fake-sanitizer" CNNBENCH_SANITIZE_TOOLS=memcheck,initcheck \
       "$B/sanitize.sh" "$san" 2>&1)"
[ $? -eq 0 ] || fail "sanitize.sh with clean runs should exit 0:"$'\n'"$out"
expect_in "$(sed -n '/^== the whole output/q;p' "$san/sanitize.log")" "cuda_a_test +memcheck +clean" "a clean memcheck line, above the whole output"
expect_in "$(cat "$san/sanitize.log")" "cuda_b_test +initcheck +clean" "every tool over every cuda_*_test"
[ "$(ls -A "$san")" = "sanitize.log" ] || fail "sanitize.sh should write one file, sanitize.log: $(ls -A "$san")"
expect_in "$(head -1 "$san/sanitize.log")" "^== sanitize summary" "the summary lines at the top"
expect_in "$(cat "$san/sanitize.log")" "ERROR SUMMARY: 0 errors \\(initcheck\\)" "the whole output kept"
grep -q "fake_test" "$san/sanitize.log" && fail "sanitize.sh ran a test that is not cuda_*_test"
out="$(FAKE_ERRORS=3 COMPUTE_SANITIZER="$TMP/fake-sanitizer" "$B/sanitize.sh" "$san" cuda_a_test 2>&1)"
[ $? -eq 1 ] || fail "sanitize.sh should exit 1 on findings"
expect_in "$out" "cuda_a_test +memcheck +errors 3" "findings counted"
out="$(FAKE_TEST_RC=1 COMPUTE_SANITIZER="$TMP/fake-sanitizer" "$B/sanitize.sh" "$san" cuda_b_test 2>&1)"
[ $? -eq 1 ] || fail "sanitize.sh should exit 1 when a test fails under it"
expect_in "$out" "cuda_b_test +memcheck +failed: exit 1" "a failing test told from findings"
out="$(FAKE_REFUSE=1 COMPUTE_SANITIZER="$TMP/fake-sanitizer" "$B/sanitize.sh" "$san" 2>&1)"
[ $? -eq 0 ] || fail "sanitize.sh should exit 0 when the device refuses the sanitizer"
expect_in "$out" "cuda_a_test +memcheck +refused by this machine" "a refusing device said so"
expect_in "$out" "cuda_b_test +memcheck +skipped: the sanitizer was refused" "later runs skipped after a refusal"
# No sanitizer anywhere it looks (checked only where this machine has none).
if [ ! -x /usr/local/cuda/bin/compute-sanitizer ] && ! command -v compute-sanitizer >/dev/null &&
   ! ls /usr/local/cuda/compute-sanitizer/compute-sanitizer /opt/nvidia/*/compute-sanitizer \
        /opt/nvidia/*/*/compute-sanitizer >/dev/null 2>&1; then
  out="$("$B/sanitize.sh" "$san" 2>&1)"
  [ $? -eq 0 ] || fail "sanitize.sh should exit 0 without a sanitizer"
  expect_in "$out" "no compute-sanitizer on this machine" "an absent sanitizer said so"
fi

# gather_libs.sh (the bundle's lib/ and cuda_libs.txt) with a fake ldd:
# glibc's libraries stay behind, CUDA's are listed (not the driver's), the
# rest are copied under their sonames once, a missing one names its program.
G="$TMP/gather"
rm -rf "$G" && mkdir -p "$G/built" "$G/sys"
for f in libabsl_strings.so.2 libdnnl.so.2 libgtest.so.1; do echo "$f" >"$G/sys/$f.real"; done
touch "$G/built/prog_a" "$G/built/prog_b" "$G/built/prog_static" "$G/built/prog_broken"
cat >"$G/fake-ldd" <<FAKE
#!/usr/bin/env bash
case "\$(basename "\$1")" in
  prog_a) printf '\tlinux-vdso.so.1 (0x0)\n\tlibabsl_strings.so.2 => $G/sys/libabsl_strings.so.2.real (0x0)\n\tlibcudart.so.13 => /usr/local/cuda/lib64/libcudart.so.13 (0x0)\n\tlibcudnn.so.9 => not found\n\tlibcuda.so.1 => not found\n\tlibc.so.6 => /lib/libc.so.6 (0x0)\n\tlibm.so.6 => /lib/libm.so.6 (0x0)\n' ;;
  prog_b) printf '\tlibabsl_strings.so.2 => $G/sys/libabsl_strings.so.2.real (0x0)\n\tlibdnnl.so.2 => $G/sys/libdnnl.so.2.real (0x0)\n\tlibcublasLt.so.13 => /x/libcublasLt.so.13 (0x0)\n\tlibcudart.so.13 => /x/libcudart.so.13 (0x0)\n' ;;
  prog_static) echo "	not a dynamic executable"; exit 1 ;;
  prog_broken) printf '\tlibgtest.so.1 => not found\n' ;;
esac
FAKE
chmod +x "$G/fake-ldd"
out="$(CNNBENCH_LDD="$G/fake-ldd" "$TOOLS/bundle/gather_libs.sh" "$G/out" "$G/built/prog_a" \
       "$G/built/prog_b" "$G/built/prog_static" 2>&1)"
[ $? -eq 0 ] || fail "gather_libs.sh should succeed:"$'\n'"$out"
[ "$(ls "$G/out/lib" | tr '\n' ' ')" = "libabsl_strings.so.2 libdnnl.so.2 " ] \
  || fail "gather_libs.sh lib/ should hold exactly the two non-system, non-CUDA libraries: $(ls "$G/out/lib")"
[ "$(cat "$G/out/lib/libdnnl.so.2" 2>/dev/null)" = "libdnnl.so.2" ] || fail "lib/ holds the resolved file"
[ "$(tr '\n' ' ' <"$G/out/cuda_libs.txt")" = "libcublasLt.so.13 libcudart.so.13 libcudnn.so.9 " ] \
  || fail "cuda_libs.txt should list the CUDA sonames once, sorted, without libcuda.so.1: $(cat "$G/out/cuda_libs.txt")"
out="$(CNNBENCH_LDD="$G/fake-ldd" "$TOOLS/bundle/gather_libs.sh" "$G/out2" "$G/built/prog_broken" 2>&1)"
[ $? -ne 0 ] || fail "gather_libs.sh should fail on a library ldd cannot find"
expect_in "$out" "prog_broken needs libgtest.so.1, which is not found" "the missing library named with its program"
out="$(CNNBENCH_LDD="$G/fake-ldd" "$TOOLS/bundle/gather_libs.sh" "$G/out3" "$G/built/nothing" 2>&1)"
[ $? -ne 0 ] || fail "gather_libs.sh should fail on a program that does not exist"
expect_in "$out" "nothing does not exist" "the missing program named"

#### The GPU's ceilings read against each other in summary.txt: our 8192^3
# GEMM against PyTorch's matmul, each NCCL collective's largest busbw
# against the d2d copy.
python3 - "$TOOLS/bundle/summarize.py" <<'PY' || fail "the ceilings' ratios"
import importlib.util, sys
spec = importlib.util.spec_from_file_location("summarize", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
cases = [{"name": "gemm/bf16/cuda/gemm:m8192n8192k8192", "value": 600.0},
         {"name": "peak/bf16/cuda/gemm:m8192n8192k8192", "value": 675.0},
         {"name": "pytorch/matmul/bf16/n:8192", "value": 750.0},
         {"name": "bandwidth/d2d/cuda/bytes:268435456/threads:1", "value": 4000.0},
         {"name": "broadcast/nccl/fp32/none/bytes:16777216/ranks:1", "value": 1000.0},
         {"name": "broadcast/nccl/fp32/none/bytes:67108864/ranks:1", "value": 2000.0},
         {"name": "allreduce/nccl/fp32/sum/bytes:67108864/ranks:1", "status": "skipped: x"}]
cases[4]["algbw"] = 1000.0
cases[5]["algbw"] = 2000.0
cases.append({"name": "allgather/nccl/fp32/none/bytes:67108864/ranks:1", "value": 1500.0,
              "unit": "algbw GB/s", "algbw": 1500.0})
lines = m.ceiling_ratios(cases)
assert lines == ["ratio cnnbench/pytorch bf16 8192^3 GEMM: 0.80",
                 "ratio cnnbench tensor-core peak/pytorch bf16 8192^3 matmul: 0.90",
                 "nccl allgather at 67108864 B, ranks 1: algbw 1500.0 GB/s (busbw is 0 by "
                 "definition at one rank; no ratio)",
                 "ratio nccl broadcast at 67108864 B, ranks 1: bytes read + written (2 x algbw) / "
                 "bandwidth d2d (read + write): 1.00"], lines
# bench_rows: a one-rank collective whose busbw is 0 shows its algbw.
rows = m.bench_rows({"benchmarks": [
    {"name": "allreduce/nccl/fp32/sum/bytes:8/ranks:1", "run_type": "iteration", "busbw": 0.0,
     "algbw": 2e9},
    {"name": "peak/bf16/cuda/gemm:m8192n8192k8192", "run_type": "iteration",
     "error_occurred": True, "error_message": "bf16 8192^3 matmul wrong at (1, 2)"},
    {"name": "train/x", "run_type": "iteration", "error_occurred": True,
     "error_message": "OOM: device allocation"}]})
assert rows[0]["value"] == 2.0 and rows[0]["unit"] == "algbw GB/s", rows
assert rows[1]["status"] == "failed: bf16 8192^3 matmul wrong at (1, 2)", rows
assert rows[2]["status"] == "skipped: OOM: device allocation", rows
assert m.ceiling_ratios(cases[:1]) == [], "no peer, no d2d: no ratio"
# The plan-choice file's compile-log lines, counted over the logs.
import os, tempfile
d = tempfile.mkdtemp()
with open(os.path.join(d, "bench.log"), "w") as f:
    f.write("compile 1 +1s op=a pass=fprop plan_cache=miss\n"
            "compile 1 +1s op=a pass=dgrad plan_cache=hit\n"
            "compile 1 +1s op=b pass=forward plan_cache=\"stale: CUDNN_STATUS_NOT_SUPPORTED\"\n"
            "plan_cache=hit on a line that is not the compile log\n")
with open(os.path.join(d, "tests.log"), "w") as f:
    f.write("compile 1 +1s op=a pass=fprop plan_cache=hit\n")
with open(os.path.join(d, "env.txt"), "w") as f:
    f.write("compile 1 +1s plan_cache=hit (not a log)\n")
counts = m.plan_cache_counts(d)
assert counts == {"hit": 2, "miss": 1, "stale": 1}, counts
assert m.plan_cache_line(counts) == [
    "plan-choice file: 1 plans searched and timed once, 2 built from the file in later steps, "
    "1 recorded plans no longer built"], m.plan_cache_line(counts)
assert m.plan_cache_line({"hit": 0, "miss": 0, "stale": 0}) == []
PY

#### A wrong command line: each script refuses it (exit 2, saying why)
# before anything runs or is written. An existing file as RESULTS_DIR once
# sent every log to / (mkdir and cd failed and the path went empty); an
# unknown option was taken for a folder.
W="$TMP/cmdline"
mkdir -p "$W/cwd"
echo "keep me" >"$W/cwd/afile"
# refused WHAT PATTERN CMD...: CMD exits 2 with PATTERN on stderr, and
# neither the folder it runs in nor the bundle gains a file.
refused() {
  local what="$1" pattern="$2" before_cwd before_bundle err rc
  shift 2
  before_cwd="$(ls -A "$W/cwd")"
  before_bundle="$(ls -A "$B")"
  err="$(cd "$W/cwd" && FAKE_NO_GPU=1 timeout 60 "$@" 2>&1 >/dev/null)"
  rc=$?
  [ $rc -eq 2 ] || fail "$what: exit $rc (2):"$'\n'"$err"
  expect_in "$err" "$pattern" "$what"
  [ "$(ls -A "$W/cwd")" = "$before_cwd" ] || fail "$what: files made where it ran: $(ls -A "$W/cwd")"
  [ "$(ls -A "$B")" = "$before_bundle" ] || fail "$what: files made in the bundle: $(ls -A "$B")"
}
for script in gpu_check.sh sanitize.sh; do
  refused "$script afile" "^$script: the results folder afile is a file, not a folder$" "$B/$script" afile
  refused "$script afile/sub" "^$script: cannot make the results folder afile/sub: .*Not a directory" \
    "$B/$script" afile/sub
  refused "$script --bogus" "^$script: unknown option '--bogus' \\(usage: $script RESULTS_DIR" "$B/$script" --bogus
  refused "$script results --bogus" "unknown option '--bogus'" "$B/$script" results --bogus
  [ -e "$W/cwd/results" ] && fail "$script results --bogus made its results folder"
  refused "$script without arguments" "^$script: no RESULTS_DIR" "$B/$script"
  out="$("$B/$script" --help 2>&1)"
  [ $? -eq 0 ] || fail "$script --help should exit 0"
  expect_in "$out" "^usage: $script RESULTS_DIR" "$script --help"
done
[ "$(cat "$W/cwd/afile")" = "keep me" ] || fail "a file given as RESULTS_DIR was changed"
refused "run.sh --bogus" "^run.sh: unknown option '--bogus' \\(usage: run.sh --libs \\| PROGRAM" "$B/run.sh" --bogus
refused "run.sh without arguments" "^run.sh: no PROGRAM" "$B/run.sh"
refused "run.sh --libs extra" "^run.sh: --libs takes no arguments" "$B/run.sh" --libs extra
refused "gather_libs.sh --bogus" "^gather_libs: unknown option '--bogus'" "$TOOLS/bundle/gather_libs.sh" --bogus x
refused "gather_libs.sh afile" "^gather_libs: cannot make afile/lib: .*Not a directory" \
  "$TOOLS/bundle/gather_libs.sh" afile /bin/true
# A folder that can be made is made, and the check runs there.
out="$(cd "$W/cwd" && FAKE_NO_GPU=1 "$B/gpu_check.sh" new/results 2>&1)"
[ $? -eq 3 ] || fail "gpu_check.sh new/results without a GPU: exit $? (3)"
[ -f "$W/cwd/new/results/env.txt" ] || fail "gpu_check.sh should make new/results: $(ls -AR "$W/cwd")"
ls -A "$W/cwd/new/results" | grep -q "^\.results_folder" && fail "the write probe was left behind"

#### summarize.py reads any JSON a step may leave without a traceback:
# every kind of step given each odd shape (an object where a list was
# meant, non-objects in a list, a top-level list, null where text was,
# NaN and Infinity where numbers were). Each step's row says what it
# found; none says summarize.py could not read it (its fallback for a
# reader that crashed); check.json stays strict JSON.
W="$TMP/odd_json"
S="$TMP/odd_json_out/results"
mkdir -p "$W" "$S"
: >"$W/steps.tsv"
: >"$W/plan.tsv"
i=0
while IFS= read -r shape; do
  i=$((i + 1))
  printf '%s\n' "$shape" >"$W/doc$i.json"
  for kind in bench test smoke torch overhead convergence; do
    for rc in 0 1 3; do
      printf '%s\t%s\t%s\t1\t\t%s\t\t0\n' "$kind" "${kind}_${i}_$rc" "$rc" "$W/doc$i.json" >>"$W/steps.tsv"
    done
  done
done <<'SHAPES'
[]
{}
null
1
"text"
NaN
[1, "x", null, [], {}]
{"benchmarks": {"a": 1}}
{"benchmarks": [1, "x", null, []]}
{"benchmarks": [{"name": "train/none", "run_type": "iteration", "error_occurred": true, "error_message": null}]}
{"benchmarks": [{"name": 7, "error_occurred": true, "error_message": 5, "label": {"x": 1}}]}
{"benchmarks": [{"name": "train/nan", "run_type": "iteration", "images_per_second": NaN}]}
{"benchmarks": [{"name": "gemm/inf", "run_type": "iteration", "flops": Infinity}]}
{"benchmarks": [{"name": "allreduce/nccl/fp32/sum/bytes:x/ranks:1", "busbw": 0, "algbw": NaN}]}
{"benchmarks": [{"name": "allreduce/nccl/fp32/sum/bytes:8/ranks:2", "busbw": "fast"}]}
{"benchmarks": [{"name": "infer/x", "latency_ms_p99": "slow", "latency_ms": NaN, "images_per_second": -Infinity}]}
{"benchmarks": [{"name": "bandwidth/d2d", "bytes_per_second": null}]}
{"testsuites": {"a": 1}}
{"testsuites": [1, {"testsuite": {}}, {"testsuite": [1, {"name": "A", "failures": {"x": 1}}, {"name": "B", "failures": "bad"}, {"name": "C", "failures": [null]}]}]}
[{"check": null, "status": null, "seconds": NaN}, {"check": "x", "status": 5, "seconds": "1"}]
[{"skipped": null}, {"layer": 1, "pass": 2, "ratio": NaN}, {"ratio": "x"}, {"layer": "l"}]
[{"model": "matmul", "tflops": NaN}, {"model": "resnet50", "images_per_second": "x"}, {"skipped": 3}]
{"points": {}}
{"points": [1, null]}
{"points": [{"validation_top1": NaN}], "passed": "yes"}
{"points": [{"validation_top1": 0.9}], "passed": true, "backend": null}
SHAPES
err="$(python3 "$TOOLS/bundle/summarize.py" "$W" "$S" "" 2>&1 >/dev/null)"
rc=$?
[ $rc -le 1 ] || fail "summarize.py exit $rc on odd JSON"
grep -q "Traceback" <<<"$err" && fail "summarize.py on odd JSON:"$'\n'"$err"
summary="$(cat "$S/summary.txt" 2>/dev/null)"
[ -n "$summary" ] || fail "summarize.py wrote no summary for odd JSON"
grep -q "could not read" <<<"$summary" && fail "a reader crashed on odd JSON:"$'\n'"$(grep "could not read" <<<"$summary")"
expect_in "$summary" "^bench_10_0 +train/none .*failed: \\(the case gave no error message\\)" "error_message null"
expect_in "$summary" "^bench_12_0 +train/nan +n/a +failed: n/a \\(not a finite number: images_per_second nan\\)" \
  "a NaN throughput shown as not a number, never 'nan images/s ok'"
expect_in "$summary" "^bench_13_0 +gemm/inf +n/a +failed: n/a \\(not a finite number: flops inf\\)" "an infinite figure"
grep -qiE "nan +images/s|inf +TFLOP/s|(^| )nan +ok" <<<"$summary" && fail "a figure that is not a number shown as one:"$'\n'"$summary"
expect_in "$summary" "^bench_8_0 +bench_8_0 .*failed: no cases ran" "benchmarks an object"
expect_in "$summary" "^bench_1_0 +bench_1_0 .*failed: no cases ran" "a top-level list"
expect_in "$summary" "^test_18_0 .*failed: exit 0, its JSON has no GoogleTest testsuites" "testsuites an object"
expect_in "$summary" "^test_19_0 +0 +3 +0 +failed: exit 0" "odd failures still count as failures"
expect_in "$summary" "^overhead_21_0 +1 2 direct/ours +n/a +failed: n/a \\(not a finite number: ratio nan\\)" "a NaN ratio"
expect_in "$summary" "^torch_22_0 +pytorch/matmul/bf16/n:None +n/a +failed: n/a" "a NaN matmul"
expect_in "$summary" "^convergence_25_0 +convergence/None/None +n/a +failed: n/a" "a NaN top-1"
expect_in "$summary" "^convergence_23_0 +convergence \\(convergence_23_0\\) .*failed: exit 0, its JSON has no points" \
  "points an object"
python3 - "$S/check.json" <<'PY' || fail "check.json should be strict JSON (no NaN or Infinity)"
import json, sys
def refuse(constant):
    raise ValueError(f"bare {constant} in check.json")
doc = json.loads(open(sys.argv[1]).read(), parse_constant=refuse)
nan_row = [c for c in doc["cases"] if c.get("name") == "train/nan"][0]
assert "value" not in nan_row, nan_row
step = [s for s in doc["steps"] if s["name"] == "bench_12_0"][0]
assert step["document"]["benchmarks"][0]["images_per_second"] is None, step  # NaN is null here
PY
# The fallback: a reader that raises costs its own step a failed row, and
# the summary is still written with every other step.
python3 - "$TOOLS/bundle/summarize.py" "$TMP/fallback" >/dev/null <<'PY' || fail "a reader that raises"
import importlib.util, json, os, sys
spec = importlib.util.spec_from_file_location("summarize", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
work, out = sys.argv[2] + "/work", sys.argv[2] + "/results"
os.makedirs(work), os.makedirs(out)
with open(work + "/b.json", "w") as f:
    json.dump({"benchmarks": [{"name": "train/x", "images_per_second": 1.0}]}, f)
with open(work + "/steps.tsv", "w") as f:
    f.write(f"bench\tfirst\t0\t1\t\t{work}/b.json\t\t0\nbench\tbroken\t0\t1\t\t{work}/b.json\t\t0\n"
            f"bench\tlast\t0\t1\t\t{work}/b.json\t\t0\n")
real = m.bench_rows
def broken(doc):
    if broken.calls == 1:
        broken.calls += 1
        raise RuntimeError("boom")
    broken.calls += 1
    return real(doc)
broken.calls = 0
m.bench_rows = broken
sys.argv = ["summarize.py", work, out, ""]
assert m.main() == 1
summary = open(out + "/summary.txt").read()
assert "broken" in summary and "could not read them (RuntimeError: boom)" in summary, summary
assert summary.count("train/x") == 2, summary  # first and last
assert "verdict: failed" in summary, summary
PY

finish
