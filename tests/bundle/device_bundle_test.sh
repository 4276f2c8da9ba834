#!/usr/bin/env bash
# tools/device_bundle.sh without Bazel or a GPU: a copy of the tools in a
# fake tree whose ./bazelw "builds" stub programs, a fake CUDA toolkit and a
# fake ldd. Ten runs in a row each succeed (a pipeline that ends early under
# pipefail once failed one run in six); the bundle holds the programs, the
# scripts, cuda_libs.txt, libcudnn_ops as optional, the CPU's convergence
# JSON; a toolkit without libcudnn_ops fails naming it. No script of
# tools/ that sets pipefail pipes into head.
#
# Under Bazel (sh_test) or directly: bash tests/bundle/device_bundle_test.sh
set -u
. "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"

# No `| head` in a script that sets pipefail: head leaving early fails the
# writer with SIGPIPE, and pipefail the script.
for f in "$TOOLS"/*.sh "$TOOLS"/*/*.sh; do
  grep -q "pipefail" "$f" || continue
  if grep -nE '\|[[:space:]]*head\b' "$f"; then
    fail "$(basename "$f") pipes into head under pipefail"
  fi
done

# The tree: the tools, a ./bazelw that builds nothing, stub programs.
R="$TMP/root"
mkdir -p "$R/tools/bundle" "$R/tools/peers"
cp "$TOOLS/device_bundle.sh" "$R/tools/"
cp "$TOOLS"/bundle/*.sh "$TOOLS/bundle/summarize.py" "$TOOLS/bundle/bench_rows.py" "$R/tools/bundle/"
cp "$TOOLS/peers/torch_train_step.py" "$R/tools/peers/"
BIN="$TMP/bazel-bin"
cat >"$R/bazelw" <<FAKE
#!/usr/bin/env bash
case "\$1" in
  query) printf '//tests/kernels/cuda:cuda_ops_test\n//tests/train:gpu_train_test\n' ;;
  build) ;;
  info) echo "$BIN" ;;
esac
FAKE
chmod +x "$R/bazelw"
programs=(bench/all tools/step_breakdown bench/cuda_overhead tests/kernels/cuda/cuda_smoke
          tests/core/cuda_test tests/core/stream_test tests/core/timer_test
          tests/kernels/backend_contract_test tests/kernels/collectives/nccl_test
          tests/bench/bandwidth_cases_test tests/kernels/cuda/cuda_ops_test tests/train/gpu_train_test)
for p in "${programs[@]}"; do
  mkdir -p "$BIN/$(dirname "$p")"
  printf '#!/usr/bin/env bash\necho %s\n' "$p" >"$BIN/$p"
  chmod +x "$BIN/$p"
done
mkdir -p "$BIN/tools"
cat >"$BIN/tools/convergence" <<'FAKE'
#!/usr/bin/env bash
for a in "$@"; do case "$a" in --json=*) out="${a#*=}" ;; esac; done
echo '{"backend": "onednn", "precision": "fp32", "passed": true, "points": [{"validation_top1": 0.9}]}' >"$out"
FAKE
chmod +x "$BIN/tools/convergence"
# Libraries: many, so that the size listing has more lines than it shows.
mkdir -p "$TMP/sys"
for i in $(seq 1 30); do head -c $((i * 1000)) /dev/zero >"$TMP/sys/libfake$i.so.1"; done
cat >"$TMP/fake-ldd" <<FAKE
#!/usr/bin/env bash
for i in \$(seq 1 30); do printf '\tlibfake%s.so.1 => $TMP/sys/libfake%s.so.1 (0x0)\n' "\$i" "\$i"; done
printf '\tlibcudnn.so.9 => /x/libcudnn.so.9 (0x0)\n\tlibcudart.so.13 => /x/libcudart.so.13 (0x0)\n'
printf '\tlibc.so.6 => /lib/libc.so.6 (0x0)\n'
FAKE
chmod +x "$TMP/fake-ldd"
C="$TMP/cuda"
mkdir -p "$C/include" "$C/lib64"
echo '#define CUDART_VERSION 13000' >"$C/include/cuda_runtime_api.h"
printf '#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 19\n#define CUDNN_PATCHLEVEL 0\n' >"$C/include/cudnn_version.h"
printf '#define CUBLAS_VER_MAJOR 13\n#define CUBLAS_VER_MINOR 1\n#define CUBLAS_VER_PATCH 0\n' >"$C/include/cublas_api.h"
printf '#define NCCL_MAJOR 2\n#define NCCL_MINOR 28\n#define NCCL_PATCH 3\n' >"$C/include/nccl.h"
for l in libnvrtc.so.13 libnvrtc-builtins.so.13.0 libcudnn_graph.so.9 libcudnn_heuristic.so.9 \
         libcudnn_engines_precompiled.so.9 libcudnn_engines_runtime_compiled.so.9 libcudnn_ops.so.9; do
  touch "$C/lib64/$l"
done

# The loader cache of this machine is not the fake toolkit's: an empty one.
mkdir -p "$TMP/fakebin"
printf '#!/bin/sh\nexit 0\n' >"$TMP/fakebin/ldconfig"
chmod +x "$TMP/fakebin/ldconfig"
export PATH="$TMP/fakebin:$PATH"

bundle() {  # bundle: tools/device_bundle.sh in the fake tree; output in $out, status in $rc
  out="$(cd "$R" && CUDA_PATH="$C" CNNBENCH_LDD="$TMP/fake-ldd" tools/device_bundle.sh "$TMP/b/bundle" 2>&1)"
  rc=$?
}
for i in $(seq 1 10); do
  bundle
  [ $rc -eq 0 ] || { fail "run $i of 10: exit $rc:"$'\n'"$out"; break; }
done
B="$TMP/b/bundle"
for f in bin/bench_all bin/cuda_smoke bin/step_breakdown bin/convergence bin/cuda_overhead \
         bin/gpu_train_test bin/cuda_ops_test run.sh gpu_check.sh summarize.py bench_rows.py sanitize.sh script_args.sh \
         peers/torch_train_step.py build_versions.txt cuda_libs.txt; do
  [ -e "$B/$f" ] || fail "the bundle lacks $f: $(cd "$B" && find . | sort | tr '\n' ' ')"
done
[ -s "$TMP/b/bundle.tar.gz" ] || fail "no bundle.tar.gz"
grep -qx "libcudnn_ops.so.9" "$B/cuda_libs_optional.txt" 2>/dev/null ||
  fail "libcudnn_ops.so.9 in cuda_libs_optional.txt: $(cat "$B/cuda_libs_optional.txt" 2>&1)"
grep -q "libcudnn_ops" "$B/cuda_libs.txt" && fail "libcudnn_ops is optional there, not in cuda_libs.txt"
grep -qx "libcudnn_graph.so.9" "$B/cuda_libs.txt" || fail "cuDNN's run-time libraries in cuda_libs.txt"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["backend"] == "onednn"' \
  "$B/convergence_cpu.json" 2>/dev/null || fail "the CPU's convergence JSON in the bundle"
grep -q "^cudnn=9.19.0$" "$B/build_versions.txt" || fail "build_versions.txt: $(cat "$B/build_versions.txt")"
[ "$(ls "$B/lib" | wc -l)" -eq 30 ] || fail "the 30 libraries in lib/: $(ls "$B/lib" | wc -l)"

# A toolkit without cuDNN's legacy API library: the bundle says so.
rm "$C/lib64/libcudnn_ops.so.9"
bundle
[ $rc -ne 0 ] || fail "a toolkit without libcudnn_ops.so.9 should fail"
grep -q "libcudnn_ops.so.9" <<<"$out" || fail "the missing libcudnn_ops named:"$'\n'"$out"

finish
