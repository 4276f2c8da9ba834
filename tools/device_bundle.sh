#!/usr/bin/env bash
# Builds //bench:all and the GPU test binaries and gathers them, with the
# non-CUDA shared libraries they need, into one folder for a machine with a
# GPU but no Bazel (README.md, "Running on a GPU machine"):
#
#   tools/device_bundle.sh OUT_DIR        # then, there: OUT_DIR/gpu_check.sh RESULTS_DIR
#
# It also packs OUT_DIR into OUT_DIR.tar.gz (about a third of the folder's
# size, oneDNN's library being most of it), which is what travels:
#
#   there: tar xzf OUT_DIR.tar.gz && OUT_DIR/gpu_check.sh RESULTS_DIR
#
# OUT_DIR/bin: the programs (bench_all, cuda_smoke, step_breakdown, convergence,
# cuda_overhead, the GPU tests); lib: their shared libraries except glibc's
# own and CUDA's (those are found there by run.sh); cuda_libs.txt: the CUDA
# libraries they need, those ldd sees and those loaded at run time
# (NVRTC's builtins, cuDNN's sub-libraries); build_versions.txt: the
# versions they were built against; cuda_libs_optional.txt: those only
# some steps load (libcudnn_ops); convergence_cpu.json: the CPU's
# convergence check, the GPU's reference; run.sh, gpu_check.sh, sanitize.sh
# (compute-sanitizer over the GPU op tests, a call of its own),
# summarize.py and bench_rows.py, peers/. Binaries and libraries are stripped. The packed
# bundle and the working tree git carries (tracked and untracked files it
# does not ignore), which travel together, must stay under
# CNNBENCH_BUNDLE_MAX_MIB (60) together. Extra Bazel flags:
# $CNNBENCH_BUNDLE_BAZEL_FLAGS.
set -euo pipefail
OUT="${1:?usage: tools/device_bundle.sh OUT_DIR}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MAX_MIB="${CNNBENCH_BUNDLE_MAX_MIB:-60}"
CUDA_HOME="${CUDA_PATH:-/usr/local/cuda}"
cd "$ROOT"

[ -d "$CUDA_HOME/include" ] || { echo "device_bundle: no CUDA toolkit at $CUDA_HOME" >&2; exit 1; }

# The GPU tests: fixed core ones, every test of the cuda backend and the
# suite's cuda cases, and the training tests named for GPUs.
TESTS=(//tests/core:cuda_test //tests/core:stream_test //tests/core:timer_test
       //tests/kernels:backend_contract_test
       //tests/kernels/collectives:nccl_test //tests/bench:bandwidth_cases_test)
while IFS= read -r t; do
  [ -n "$t" ] && TESTS+=("$t")
done < <(./bazelw query --noshow_progress \
           'kind(cc_test, //tests/kernels/cuda:all + //tests/bench/cuda_cases:all) +
            attr(name, "gpu|cuda", kind(cc_test, //tests/train:all))' 2>/dev/null | sort -u)
echo "device_bundle: building //bench:all and ${#TESTS[@]} tests" >&2
# shellcheck disable=SC2086
./bazelw build ${CNNBENCH_BUNDLE_BAZEL_FLAGS:-} //bench:all //tests/kernels/cuda:cuda_smoke //bench:cuda_overhead \
  //tools:step_breakdown //tools:convergence "${TESTS[@]}"

rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/lib" "$OUT/peers"
BIN="$(./bazelw info bazel-bin 2>/dev/null)"
SOURCES=("$BIN/bench/all")
cp -L "$BIN/bench/all" "$OUT/bin/bench_all"
cp -L "$BIN/tools/step_breakdown" "$OUT/bin/step_breakdown"
cp -L "$BIN/tools/convergence" "$OUT/bin/convergence"
cp -L "$BIN/bench/cuda_overhead" "$OUT/bin/cuda_overhead"
cp -L "$BIN/tests/kernels/cuda/cuda_smoke" "$OUT/bin/cuda_smoke"
SOURCES+=("$BIN/tools/step_breakdown" "$BIN/tools/convergence" "$BIN/bench/cuda_overhead" "$BIN/tests/kernels/cuda/cuda_smoke")
for t in "${TESTS[@]}"; do
  pkg="${t#//}"; pkg="${pkg%%:*}"; name="${t##*:}"
  cp -L "$BIN/$pkg/$name" "$OUT/bin/$name"
  SOURCES+=("$BIN/$pkg/$name")
done
chmod u+w "$OUT"/bin/*

# The shared libraries they need (glibc's and CUDA's come from the GPU
# machine; cuda_libs.txt names the CUDA ones for run.sh).
tools/bundle/gather_libs.sh "$OUT" "${SOURCES[@]}"

# The CUDA libraries loaded at run time, which ldd does not see: cuDNN
# dlopens its sub-libraries, its run-time compiled engines NVRTC, and NVRTC
# its builtins (whose soname carries the toolkit's major.minor). Each must
# be in this toolkit; run.sh then requires them on the GPU machine.
soname_in_toolkit() {  # soname_in_toolkit LIBNAME (e.g. libnvrtc-builtins)
  local f
  for f in "$CUDA_HOME/lib64/$1.so" "$CUDA_HOME/lib/$1.so" "$CUDA_HOME"/targets/*/lib/"$1.so"; do
    [ -e "$f" ] || continue
    readelf -d "$f" 2>/dev/null | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p' | awk 'NR == 1'
    return 0
  done
}
in_toolkit() {  # in_toolkit SONAME
  local f
  for f in "$CUDA_HOME/lib64/$1" "$CUDA_HOME/lib/$1" "$CUDA_HOME"/targets/*/lib/"$1"; do
    [ -e "$f" ] && return 0
  done
  return 1
}
cudart_version="$(sed -n 's/^#define CUDART_VERSION *\([0-9]*\).*/\1/p' "$CUDA_HOME/include/cuda_runtime_api.h" | awk 'NR == 1')"
runtime_libs=()
nvrtc="$(soname_in_toolkit libnvrtc)"
[ -n "$nvrtc" ] || nvrtc="libnvrtc.so.$((cudart_version / 1000))"
builtins="$(soname_in_toolkit libnvrtc-builtins)"
[ -n "$builtins" ] || builtins="libnvrtc-builtins.so.$((cudart_version / 1000)).$((cudart_version % 1000 / 10))"
runtime_libs+=("$nvrtc" "$builtins")
cudnn_soname="$(grep -m1 -E '^libcudnn\.so\.[0-9]+$' "$OUT/cuda_libs.txt" || true)"
if [ -n "$cudnn_soname" ]; then
  cudnn_major="${cudnn_soname##*.so.}"
  for sub in graph heuristic engines_precompiled engines_runtime_compiled; do
    runtime_libs+=("libcudnn_$sub.so.$cudnn_major")
  done
fi
findable() {  # findable SONAME: in the toolkit or the loader cache
  in_toolkit "$1" ||
    { ldconfig -p 2>/dev/null || true; } | awk -v l="$1" '$1 == l {f = 1} END {exit !f}'
}
for lib in "${runtime_libs[@]}"; do
  if ! findable "$lib"; then
    echo "device_bundle: $lib (loaded at run time) is neither in $CUDA_HOME nor in the loader cache" >&2
    exit 1
  fi
  echo "$lib" >>"$OUT/cuda_libs.txt"
done
sort -u -o "$OUT/cuda_libs.txt" "$OUT/cuda_libs.txt"
# cuDNN's legacy API, loaded only for --cuda_batch_norm=legacy: required
# here, optional there (run.sh says "OPTIONAL MISSING"; gpu_check.sh then
# skips only the legacy batch norm step).
: >"$OUT/cuda_libs_optional.txt"
if [ -n "$cudnn_soname" ]; then
  if ! findable "libcudnn_ops.so.$cudnn_major"; then
    echo "device_bundle: libcudnn_ops.so.$cudnn_major (cuDNN's legacy API, loaded at run time) is" \
      "neither in $CUDA_HOME nor in the loader cache" >&2
    exit 1
  fi
  echo "libcudnn_ops.so.$cudnn_major" >"$OUT/cuda_libs_optional.txt"
fi

strip --strip-unneeded "$OUT"/bin/* "$OUT"/lib/* 2>/dev/null || true

# The versions this build compiled against, beside which run.sh prints the loaded ones.
define() { sed -n "s/^#define $2 *\([0-9]*\).*/\1/p" "$CUDA_HOME/include/$1" | awk 'NR == 1'; }
soname_of() { grep -m1 "^$1" "$OUT/cuda_libs.txt" || echo "$1"; }
{
  echo "cudart=$(( $(define cuda_runtime_api.h CUDART_VERSION) / 1000 )).$(( $(define cuda_runtime_api.h CUDART_VERSION) % 1000 / 10 ))"
  echo "cudnn=$(define cudnn_version.h CUDNN_MAJOR).$(define cudnn_version.h CUDNN_MINOR).$(define cudnn_version.h CUDNN_PATCHLEVEL)"
  echo "cublas=$(define cublas_api.h CUBLAS_VER_MAJOR).$(define cublas_api.h CUBLAS_VER_MINOR).$(define cublas_api.h CUBLAS_VER_PATCH)"
  echo "cublasLt=$(define cublas_api.h CUBLAS_VER_MAJOR).$(define cublas_api.h CUBLAS_VER_MINOR).$(define cublas_api.h CUBLAS_VER_PATCH)"
  echo "nccl=$(define nccl.h NCCL_MAJOR).$(define nccl.h NCCL_MINOR).$(define nccl.h NCCL_PATCH)"
  echo "cudart_soname=$(soname_of libcudart.so)"
  echo "cudnn_soname=$(soname_of libcudnn.so)"
  # cuBLAS where the programs link it; else the one beside cuBLASLt.
  echo "cublas_soname=$(grep -m1 '^libcublas\.so' "$OUT/cuda_libs.txt" || soname_of libcublasLt.so | sed 's/cublasLt/cublas/')"
  echo "cublaslt_soname=$(soname_of libcublasLt.so)"
  echo "nccl_soname=$(soname_of libnccl.so)"
  echo "glibc=$(ldd --version | awk 'NR == 1 {print $NF}')"
  echo "commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo -dirty)"
  echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$OUT/build_versions.txt"

# The CPU's convergence, the GPU's reference in gpu_check.sh, measured here
# so that the GPU machine spends no device time on oneDNN work.
if ! "$BIN/tools/convergence" --backend=onednn --json="$OUT/convergence_cpu.json" \
     >"$OUT/.convergence_cpu.log" 2>&1; then
  echo "device_bundle: the CPU's convergence check failed; its JSON says how:" >&2
  tail -n 5 "$OUT/.convergence_cpu.log" >&2
fi
rm -f "$OUT/.convergence_cpu.log"

cp tools/bundle/run.sh tools/bundle/gpu_check.sh tools/bundle/sanitize.sh tools/bundle/script_args.sh tools/bundle/summarize.py \
  tools/bundle/bench_rows.py "$OUT/"
cp tools/peers/torch_train_step.py "$OUT/peers/"
chmod +x "$OUT/run.sh" "$OUT/gpu_check.sh" "$OUT/sanitize.sh"

size_kib=$(du -sk "$OUT" | cut -f1)
echo "device_bundle: $OUT: $(ls "$OUT/bin" | wc -l) programs, $(ls "$OUT/lib" | wc -l) libraries, $((size_kib / 1024)) MiB" >&2
# (awk, not head: under pipefail, head leaving early would fail sort with SIGPIPE.)
du -sk "$OUT"/bin/* "$OUT"/lib/* | sort -rn | awk 'NR <= 8' >&2
PACK="${OUT%/}.tar.gz"
tar -C "$(dirname "$OUT")" -czf "$PACK" "$(basename "$OUT")"
pack_bytes=$(stat -c %s "$PACK")
# What travels beside it: the working tree git carries (tracked files, and
# untracked ones it does not ignore), the pack itself left out.
pack_rel="$(realpath -m --relative-to="$ROOT" "$PACK")"
tree_bytes=$({ git ls-files -z --cached --others --exclude-standard 2>/dev/null || true; } \
  | { grep -zvxF -- "$pack_rel" || true; } | { xargs -0 -r stat -c %s -- 2>/dev/null || true; } \
  | awk '{s += $1} END {print s + 0}')
mib() { awk -v b="$1" 'BEGIN {printf "%.1f", b / 1048576}'; }
total_bytes=$((pack_bytes + tree_bytes))
echo "device_bundle: packed into $PACK, $(mib "$pack_bytes") MiB; with the working tree git carries," \
  "$(mib "$tree_bytes") MiB, $(mib "$total_bytes") MiB travel" >&2
if [ "$total_bytes" -gt $((MAX_MIB * 1024 * 1024)) ]; then
  echo "device_bundle: $PACK ($(mib "$pack_bytes") MiB) and the working tree git carries" \
    "($(mib "$tree_bytes") MiB) are $(mib "$total_bytes") MiB together, over CNNBENCH_BUNDLE_MAX_MIB (${MAX_MIB} MiB)" >&2
  exit 1
fi
