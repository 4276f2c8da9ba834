#!/usr/bin/env bash
# Runs a program of this bundle (made by tools/device_bundle.sh) with the
# loader pointed at the CUDA libraries this machine has.
#
#   ./run.sh --libs                 # which CUDA libraries load, and their versions
#   ./run.sh bench_all --list       # a program from bin/ (or any command) with that environment
#
# Search order for each CUDA library the build needs (cuda_libs.txt):
# $CNNBENCH_CUDA_HOME (default /usr/local/cuda: lib64, lib, targets/*/lib),
# then python3's site-packages/nvidia/*/lib (NVIDIA's wheels, as PyTorch
# installs them; $CNNBENCH_SITE_PACKAGES, colon-separated, replaces what
# python3 reports). The bundle's own lib/ comes first for everything else.
# Exit status 2 when a library or an API the build needs is missing.
set -u
BUNDLE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

site_packages() {
  if [ -n "${CNNBENCH_SITE_PACKAGES+x}" ]; then
    tr ':' '\n' <<<"$CNNBENCH_SITE_PACKAGES"
    return
  fi
  command -v python3 >/dev/null 2>&1 || return 0
  python3 - <<'PY' 2>/dev/null
import site, sys
paths = list(getattr(site, "getsitepackages", lambda: [])())
paths.append(site.getusersitepackages())
paths += [p for p in sys.path if p.endswith("-packages")]
seen = set()
for p in paths:
    if p not in seen:
        seen.add(p)
        print(p)
PY
}

# Candidate folders, in search order, one per line.
candidate_dirs() {
  local home="${CNNBENCH_CUDA_HOME:-/usr/local/cuda}" d sp
  for d in "$home/lib64" "$home/lib" "$home"/targets/*/lib; do
    [ -d "$d" ] && echo "$d"
  done
  while IFS= read -r sp; do
    [ -n "$sp" ] || continue
    for d in "$sp"/nvidia/*/lib "$sp"/nvidia/*/lib64; do
      [ -d "$d" ] && echo "$d"
    done
  done < <(site_packages)
}

# Fills FOUND_DIRS (loader path) and prints "soname -> path" for each
# library in cuda_libs.txt; returns 1 if any is missing.
resolve() {
  local dirs=() used=() d lib missing=0 path
  mapfile -t dirs < <(candidate_dirs)
  FOUND_DIRS=""
  while IFS= read -r lib; do
    [ -n "$lib" ] || continue
    path=""
    for d in "${dirs[@]}"; do
      if [ -e "$d/$lib" ]; then path="$d/$lib"; break; fi
    done
    if [ -z "$path" ]; then
      echo "MISSING  $lib (searched: ${dirs[*]:-nothing})"
      missing=1
      continue
    fi
    echo "found    $lib -> $(readlink -f "$path")"
    used+=("$(dirname "$path")")
  done <"$BUNDLE/cuda_libs.txt"
  # The folders in search order, so each library loads from where it was found.
  for d in "${dirs[@]}"; do
    case " ${used[*]:-} " in
      *" $d "*) case ":$FOUND_DIRS:" in *":$d:"*) ;; *) FOUND_DIRS="${FOUND_DIRS:+$FOUND_DIRS:}$d" ;; esac ;;
    esac
  done
  return $missing
}

# Loaded versions of cuDNN, cuBLAS(Lt), NCCL and the CUDA runtime, asked of
# the libraries themselves, beside the ones the build compiled against.
versions() {
  command -v python3 >/dev/null 2>&1 || { echo "versions: no python3 to ask the libraries"; return 0; }
  python3 - "$BUNDLE/build_versions.txt" <<'PY'
import ctypes, sys
built = {}
for line in open(sys.argv[1]):
    if "=" in line:
        k, v = line.strip().split("=", 1)
        built[k] = v
def ask(soname, fn, decode):
    try:
        lib = ctypes.CDLL(soname)
    except OSError as e:
        return f"not loadable ({e})"
    try:
        if fn == "ncclGetVersion":
            v = ctypes.c_int(0)
            lib.ncclGetVersion(ctypes.byref(v))
            return decode(v.value)
        if fn == "cudaRuntimeGetVersion":
            v = ctypes.c_int(0)
            lib.cudaRuntimeGetVersion(ctypes.byref(v))
            return decode(v.value)
        f = getattr(lib, fn)
        f.restype = ctypes.c_size_t
        return decode(f())
    except Exception as e:  # an old library lacking the query
        return f"unknown ({e})"
cudnn = lambda v: f"{v // 10000}.{v % 10000 // 100}.{v % 100}" if v >= 90000 else f"{v // 1000}.{v % 1000 // 100}.{v % 100}"
cublas = lambda v: f"{v // 10000}.{v % 10000 // 100}.{v % 100}"
nccl = lambda v: f"{v // 10000}.{v % 10000 // 100}.{v % 100}"
cudart = lambda v: f"{v // 1000}.{v % 1000 // 10}"
rows = [("cudart", built.get("cudart_soname", "libcudart.so"), "cudaRuntimeGetVersion", cudart),
        ("cudnn", built.get("cudnn_soname", "libcudnn.so"), "cudnnGetVersion", cudnn),
        ("cublasLt", built.get("cublaslt_soname", "libcublasLt.so"), "cublasLtGetVersion", cublas),
        ("nccl", built.get("nccl_soname", "libnccl.so"), "ncclGetVersion", nccl)]
print(f"{'library':<10} {'built with':<12} loaded")
older = []
for name, soname, fn, decode in rows:
    loaded = ask(soname, fn, decode)
    b = built.get(name, "?")
    note = ""
    try:
        if tuple(map(int, loaded.split("."))) < tuple(map(int, b.split("."))):
            note = "  (older than the build)"
            older.append(name)
    except ValueError:
        pass
    print(f"{name:<10} {b:<12} {loaded}{note}")
if older:
    print("note: " + ", ".join(older) + " loaded older than built; an API newer than the "
          "loaded version shows below as an undefined symbol")
PY
}

# Undefined symbols or versions in the bundle's programs under this loader
# path: an API the build needs that the loaded libraries lack.
check_symbols() {
  local bin out bad=0
  command -v ldd >/dev/null 2>&1 || { echo "symbols: no ldd here; not checked"; return 0; }
  for bin in "$BUNDLE"/bin/*; do
    [ -x "$bin" ] || continue
    out="$(ldd -r "$bin" 2>&1)" || true
    case "$out" in *"not a dynamic executable"*) continue ;; esac
    if grep -E "undefined symbol|not found" <<<"$out" | grep -v "^\s*$" >/dev/null; then
      echo "MISSING API in $(basename "$bin"):"
      grep -E "undefined symbol|not found" <<<"$out" | sed 's/^/    /' | head -20
      bad=1
    fi
  done
  [ $bad -eq 0 ] && echo "symbols: every program's symbols resolve"
  return $bad
}

if [ "${1:-}" = "--libs" ]; then
  status=0
  echo "== CUDA libraries (search order: ${CNNBENCH_CUDA_HOME:-/usr/local/cuda}, then site-packages/nvidia/*/lib)"
  resolve || status=2
  export LD_LIBRARY_PATH="$BUNDLE/lib${FOUND_DIRS:+:$FOUND_DIRS}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  if command -v ldconfig >/dev/null 2>&1 && ldconfig -p 2>/dev/null | grep -q "libcuda.so.1"; then
    echo "driver   libcuda.so.1 (system)"
  else
    echo "driver   libcuda.so.1 not in the loader cache (no GPU driver here?)"
  fi
  echo "== versions"
  versions
  echo "== symbols"
  check_symbols || status=2
  exit $status
fi

if [ $# -eq 0 ]; then
  echo "usage: $0 --libs | PROGRAM [ARGS...]   (programs: $(ls "$BUNDLE/bin" | tr '\n' ' '))" >&2
  exit 64
fi
if ! resolve >/dev/null; then
  resolve | grep MISSING >&2
  echo "run.sh: CUDA libraries the build needs are missing; see ./run.sh --libs" >&2
  exit 2
fi
export LD_LIBRARY_PATH="$BUNDLE/lib${FOUND_DIRS:+:$FOUND_DIRS}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
program="$1"
shift
if [ -x "$BUNDLE/bin/$program" ]; then exec "$BUNDLE/bin/$program" "$@"; fi
exec "$program" "$@"
