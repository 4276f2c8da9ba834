#!/usr/bin/env bash
# tools/bundle's scripts without a GPU: bash syntax; run.sh's search order
# (CUDA home, then site-packages/nvidia/*/lib) and its clear failure when a
# library is missing; gpu_check.sh with a bench and tests that skip
# everything: it finishes, shows each case skipped with its reason, and
# leaves at most 8 files (what the device tool brings back).
set -u
TOOLS="$TEST_SRCDIR/$TEST_WORKSPACE/tools"
[ -d "$TOOLS" ] || TOOLS="$(cd "$(dirname "$0")/../../tools" && pwd)"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
expect_in() {  # expect_in TEXT PATTERN WHAT
  grep -qE -- "$2" <<<"$1" || fail "$3: '$2' not in output:"$'\n'"$1"
}

for s in bundle/run.sh bundle/gpu_check.sh device_bundle.sh; do
  bash -n "$TOOLS/$s" || fail "bash -n $s"
done
python3 -m py_compile "$TOOLS/bundle/summarize.py" "$TOOLS/peers/torch_train_step.py" \
  || fail "python syntax"

# A bundle with no programs and two CUDA libraries to find.
B="$TMP/bundle"
mkdir -p "$B/bin" "$B/lib" "$B/peers"
cp "$TOOLS/bundle/run.sh" "$TOOLS/bundle/gpu_check.sh" "$TOOLS/bundle/summarize.py" "$B/"
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
for a in "$@"; do case "$a" in --benchmark_out=*) out="${a#*=}" ;; esac; done
[ -n "$out" ] || exit 0
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
chmod +x "$B/bin/bench_all" "$B/bin/fake_test"
results="$TMP/results"
out="$(CNNBENCH_CHECK_SECONDS=120 CNNBENCH_CHECK_STEPS=1 CNNBENCH_CHECK_WARMUP=0 \
       "$B/gpu_check.sh" "$results" 2>&1)"
rc=$?
[ $rc -eq 0 ] || fail "gpu_check.sh exit $rc:"$'\n'"$out"
summary="$(cat "$results/summary.txt" 2>/dev/null)"
expect_in "$summary" "fake_test +0 +0 +1 +ok" "the test's skip counted"
expect_in "$summary" "train/resnet50_v1.5/bf16/.*skipped: unsupported: fake bench skips everything" \
  "a skipped case with its reason"
expect_in "$summary" "train_bf16_no_graph .*skipped: .*no --cuda_graph flag" "the missing flag marked"
expect_in "$summary" "pytorch/resnet50.*skipped" "the PyTorch peer skipped without a GPU"
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$results/check.json" || fail "check.json"
files=$(find "$results" -type f | wc -l)
[ "$files" -le 8 ] || fail "gpu_check.sh left $files files (the device tool brings back 8)"

if [ $failures -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "PASS"
