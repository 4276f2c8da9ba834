#!/usr/bin/env bash
# tools/bundle's scripts without a GPU: bash syntax; run.sh's search order
# (CUDA home, then site-packages/nvidia/*/lib) and its clear failure when a
# library is missing; gpu_check.sh with a bench and tests that skip
# everything: it finishes, shows each case skipped with its reason, and
# leaves at most 8 files (what the device tool brings back); sanitize.sh
# with fake sanitizers: clean, findings, a failing test, a refusing device,
# none installed; gather_libs.sh (the bundle's libraries) with a fake ldd.
set -u
TOOLS="$TEST_SRCDIR/$TEST_WORKSPACE/tools"
[ -d "$TOOLS" ] || TOOLS="$(cd "$(dirname "$0")/../../tools" && pwd)"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
expect_in() {  # expect_in TEXT PATTERN WHAT
  grep -qE -- "$2" <<<"$1" || fail "$3: '$2' not in output:"$'\n'"$1"
}

for s in bundle/run.sh bundle/gpu_check.sh bundle/sanitize.sh bundle/gather_libs.sh device_bundle.sh; do
  bash -n "$TOOLS/$s" || fail "bash -n $s"
done
python3 -m py_compile "$TOOLS/bundle/summarize.py" "$TOOLS/peers/torch_train_step.py" \
  || fail "python syntax"

# A bundle with no programs and two CUDA libraries to find.
B="$TMP/bundle"
mkdir -p "$B/bin" "$B/lib" "$B/peers"
cp "$TOOLS/bundle/run.sh" "$TOOLS/bundle/gpu_check.sh" "$TOOLS/bundle/sanitize.sh" \
  "$TOOLS/bundle/summarize.py" "$B/"
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
expect_in "$summary" "train_bf16_no_graph .*skipped: .*no --cuda_graph flag" "the missing flag marked"
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
[ "$files" -le 8 ] || fail "gpu_check.sh left $files files (the device tool brings back 8)"

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
expect_in "$(cat "$san/sanitize.txt")" "cuda_a_test +memcheck +clean" "a clean memcheck line"
expect_in "$(cat "$san/sanitize.txt")" "cuda_b_test +initcheck +clean" "every tool over every cuda_*_test"
grep -q "fake_test" "$san/sanitize.txt" && fail "sanitize.sh ran a test that is not cuda_*_test"
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

if [ $failures -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "PASS"
