#!/usr/bin/env bash
# Gathers what the device bundle's programs need from this machine:
#
#   gather_libs.sh OUT_DIR BINARY...
#
# For each BINARY (where Bazel built it: tests find Bazel's own shared
# libraries through run paths relative to there), every shared library ldd
# lists is copied into OUT_DIR/lib under its soname, except glibc's (the
# GPU machine has its own) and CUDA's (run.sh finds those there: their
# sonames go to OUT_DIR/cuda_libs.txt, sorted, without the driver's
# libcuda.so.1). A library ldd cannot find is an error naming the binary.
# $CNNBENCH_LDD replaces ldd (the tests' fake). A wrong command line (an
# option, no OUT_DIR, an OUT_DIR that is a file or cannot be made) exits 2
# before anything is copied.
set -euo pipefail
USAGE="usage: gather_libs.sh OUT_DIR BINARY..."
for a in "$@"; do
  case "$a" in -*) echo "gather_libs: unknown option '$a' ($USAGE)" >&2; exit 2 ;; esac
done
OUT="${1:-}"
[ -n "$OUT" ] || { echo "gather_libs: no OUT_DIR ($USAGE)" >&2; exit 2; }
shift
LDD="${CNNBENCH_LDD:-ldd}"
if ! err="$(mkdir -p -- "$OUT/lib" 2>&1)"; then
  echo "gather_libs: cannot make $OUT/lib: ${err#mkdir: }" >&2
  exit 2
fi

is_system() {
  case "$1" in
    linux-vdso.so.*|ld-linux*|libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|libutil.so.*|libresolv.so.*) return 0 ;;
  esac
  return 1
}
is_cuda() {
  case "$1" in
    libcuda.so.*|libcudart.so.*|libcublas.so.*|libcublasLt.so.*|libcudnn*.so.*|libnccl.so.*|libnvrtc*.so.*|libnvJitLink.so.*|libcurand.so.*|libcufft.so.*|libcusparse.so.*|libcusolver.so.*|libnvToolsExt.so.*|libnvidia-*.so.*) return 0 ;;
  esac
  return 1
}

cuda_list="$(mktemp)"
trap 'rm -f "$cuda_list"' EXIT
for b in "$@"; do
  [ -e "$b" ] || { echo "gather_libs: $b does not exist" >&2; exit 1; }
  # A static program is "not a dynamic executable" (exit status 1): nothing
  # to gather; any other failure of ldd is an error.
  if ! listing="$(env -u LD_LIBRARY_PATH "$LDD" "$b" 2>&1)"; then
    if ! grep -q "not a dynamic executable" <<<"$listing"; then
      echo "gather_libs: ldd $b failed: $listing" >&2
      exit 1
    fi
    listing=""
  fi
  while read -r soname arrow path _; do
    [ "$arrow" = "=>" ] || continue
    is_system "$soname" && continue
    if is_cuda "$soname"; then
      [ "$soname" = libcuda.so.1 ] || echo "$soname" >>"$cuda_list"
      continue
    fi
    if [ "$path" = "not" ]; then
      echo "gather_libs: $(basename "$b") needs $soname, which is not found here" >&2
      exit 1
    fi
    [ -e "$OUT/lib/$soname" ] || cp -L "$path" "$OUT/lib/$soname"
  done <<<"$listing"
done
sort -u "$cuda_list" >"$OUT/cuda_libs.txt"
chmod u+w "$OUT"/lib/* 2>/dev/null || true
