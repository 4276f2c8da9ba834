#!/usr/bin/env bash
# Runs a program of this bundle (made by tools/device_bundle.sh) with the
# loader pointed at the CUDA libraries this machine has.
#
#   ./run.sh --libs                 # which CUDA libraries load, from where, their versions
#   ./run.sh bench_all --list       # a program from bin/ (or any command) with that environment
#
# Where the CUDA libraries the build needs (cuda_libs.txt) come from: one
# origin when one has them all, so that cuDNN, cuBLAS, NVRTC and the runtime
# never mix releases: $CNNBENCH_CUDA_HOME (default /usr/local/cuda: lib64,
# lib, targets/*/lib) if it has every one; else the first python3
# site-packages whose nvidia/*/lib folders (NVIDIA's wheels, as PyTorch
# installs them) have every one ($CNNBENCH_SITE_PACKAGES, colon-separated,
# replaces what python3 reports); else each library from the first of those
# places that has it, said as mixed origins. The bundle's own lib/ comes
# first for everything else.
#
# --libs prints the origin, each library's real path, the libraries loaded
# at run time that the programs do not link (NVRTC and its builtins, cuDNN's
# sub-libraries), the driver's libcuda.so.1 and version, the loaded versions
# of the CUDA runtime, cuDNN, cuBLAS, cuBLASLt and NCCL beside the ones the
# build compiled against, and every program's unresolved symbols
# ("MISSING API in <program>: <symbol> ..."). $CNNBENCH_LDD replaces ldd.
#
# Exit status: 2 when a library the build needs is missing (for --libs and
# for a program), or for a wrong command line (no PROGRAM, an option other
# than --libs: nothing runs); for --libs, 3 when every library is there but
# some programs have unresolved symbols (those programs are named; the
# others can run).
set -u
BUNDLE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
LDD="${CNNBENCH_LDD:-ldd}"
CUDA_HOME_DIR="${CNNBENCH_CUDA_HOME:-/usr/local/cuda}"
SYSTEM_LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}"

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

# The library folders of one origin, in search order, one per line:
# origin_dirs home | origin_dirs SITE_PACKAGES_DIR
origin_dirs() {
  local d
  if [ "$1" = home ]; then
    for d in "$CUDA_HOME_DIR/lib64" "$CUDA_HOME_DIR/lib" "$CUDA_HOME_DIR"/targets/*/lib; do
      [ -d "$d" ] && echo "$d"
    done
  else
    for d in "$1"/nvidia/*/lib "$1"/nvidia/*/lib64; do
      [ -d "$d" ] && echo "$d"
    done
  fi
  return 0
}

# The origins in search order (home first), one per line.
origins() {
  local sp
  echo home
  while IFS= read -r sp; do
    [ -n "$sp" ] && echo "$sp"
  done < <(site_packages)
}

origin_name() {
  if [ "$1" = home ]; then echo "$CUDA_HOME_DIR (the CUDA home)"; else echo "$1 (site-packages, nvidia/*/lib)"; fi
}

required_libs() {
  [ -f "$BUNDLE/cuda_libs.txt" ] || return 0
  grep -v '^[[:space:]]*$' "$BUNDLE/cuda_libs.txt"
}

# The CUDA libraries the build loads only for some steps
# (cuda_libs_optional.txt: libcudnn_ops, cuDNN's legacy API, for
# --cuda_batch_norm=legacy). --libs says "OPTIONAL MISSING" for each absent.
optional_libs() {
  [ -f "$BUNDLE/cuda_libs_optional.txt" ] || return 0
  grep -v '^[[:space:]]*$' "$BUNDLE/cuda_libs_optional.txt"
}

# find_in LIB DIR...: the first DIR/LIB that exists. NVRTC's builtins
# match by major version (libnvrtc-builtins.so.13.*): NVRTC loads the
# builtins of its own minor version, which need not be the build's.
find_in() {
  local lib="$1" d f
  shift
  for d in "$@"; do
    if [ -e "$d/$lib" ]; then echo "$d/$lib"; return 0; fi
  done
  case "$lib" in
    libnvrtc-builtins.so.*.*)
      for d in "$@"; do
        for f in "$d/${lib%.*}".*; do
          if [ -e "$f" ]; then echo "$f"; return 0; fi
        done
      done
      ;;
  esac
  return 1
}

# Chooses where the libraries come from: sets ORIGIN (an origin, or
# "mixed"), SEARCH_DIRS (the folders searched, in order) and ORIGIN_LACKS
# (per origin, what it lacks, for --libs).
choose_origin() {
  local o libs=() dirs=() lib lacks all=()
  mapfile -t libs < <(required_libs)
  ORIGIN_LACKS=""
  while IFS= read -r o; do
    mapfile -t dirs < <(origin_dirs "$o")
    all+=("${dirs[@]}")
    lacks=""
    for lib in "${libs[@]}"; do
      find_in "$lib" "${dirs[@]}" >/dev/null || lacks="$lacks $lib"
    done
    if [ -z "$lacks" ] && [ ${#dirs[@]} -gt 0 ]; then
      ORIGIN="$o"
      SEARCH_DIRS=("${dirs[@]}")
      return 0
    fi
    [ ${#dirs[@]} -eq 0 ] && lacks=" (no library folders)"
    ORIGIN_LACKS="${ORIGIN_LACKS}    $(origin_name "$o") lacks:$lacks"$'\n'
  done < <(origins)
  ORIGIN=mixed
  SEARCH_DIRS=("${all[@]}")
}

# Fills FOUND_DIRS (the loader path) and prints "found soname -> path" or
# "MISSING soname" for each library in cuda_libs.txt; returns 1 if any is
# missing. Also adds the folders of the run-time loaded libraries found.
resolve() {
  local used=() d lib missing=0 path
  choose_origin
  FOUND_DIRS=""
  while IFS= read -r lib; do
    if ! path="$(find_in "$lib" "${SEARCH_DIRS[@]}")"; then
      echo "MISSING  $lib (searched: ${SEARCH_DIRS[*]:-nothing})"
      missing=1
      continue
    fi
    echo "found    $lib -> $(readlink -f "$path")"
    used+=("$(dirname "$path")")
  done < <(required_libs)
  while IFS=$'\t' read -r _ _ path; do
    [ -n "$path" ] && used+=("$(dirname "$path")")
  done < <(runtime_libs)
  # The folders in search order, so each library loads from where it was found.
  for d in "${SEARCH_DIRS[@]}"; do
    case " ${used[*]:-} " in
      *" $d "*) case ":$FOUND_DIRS:" in *":$d:"*) ;; *) FOUND_DIRS="${FOUND_DIRS:+$FOUND_DIRS:}$d" ;; esac ;;
    esac
  done
  return $missing
}

# The libraries loaded at run time that ldd does not see (cuDNN dlopens its
# sub-libraries, its run-time compiled engines dlopen NVRTC, NVRTC its
# builtins), one per line: "required|optional<TAB>soname-or-stem<TAB>path"
# (path empty where absent), searched in SEARCH_DIRS. The soname is the one
# cuda_libs.txt lists where it lists one.
runtime_libs() {
  local entry need stem listed path f best
  for entry in required:libnvrtc required:libnvrtc-builtins required:libcudnn_graph \
               required:libcudnn_heuristic required:libcudnn_engines_precompiled \
               required:libcudnn_engines_runtime_compiled optional:libcudnn_ops \
               optional:libcudnn_cnn optional:libcudnn_adv; do
    need="${entry%%:*}"
    stem="${entry#*:}"
    listed="$({ required_libs; optional_libs; } | grep -m1 -E "^${stem}\.so\.[0-9]" || true)"
    if [ -n "$listed" ]; then
      path="$(find_in "$listed" "${SEARCH_DIRS[@]}")" || path=""
      printf '%s\t%s\t%s\n' "$need" "$listed" "$path"
      continue
    fi
    # Not listed: the shortest versioned name (the soname) in the first
    # folder that has one.
    best=""
    for d in "${SEARCH_DIRS[@]}"; do
      for f in "$d/$stem".so.[0-9]*; do
        [ -e "$f" ] || continue
        if [ -z "$best" ] || [ ${#f} -lt ${#best} ]; then best="$f"; fi
      done
      [ -n "$best" ] && break
    done
    if [ -n "$best" ]; then
      printf '%s\t%s\t%s\n' "$need" "$(basename "$best")" "$best"
    else
      printf '%s\t%s\t\n' "$need" "$stem"
    fi
  done
}

# The driver's libcuda.so.1: the loader cache, then LD_LIBRARY_PATH as this
# script was given it, then the usual driver folders.
driver_line() {
  local path="" d version="" how=""
  if command -v ldconfig >/dev/null 2>&1; then
    path="$(ldconfig -p 2>/dev/null | awk '$1 == "libcuda.so.1" && /x86-64/ {print $NF; exit}')"
    [ -n "$path" ] || path="$(ldconfig -p 2>/dev/null | awk '$1 == "libcuda.so.1" {print $NF; exit}')"
  fi
  if [ -z "$path" ]; then
    local dirs=()
    IFS=':' read -r -a dirs <<<"$SYSTEM_LD_LIBRARY_PATH"
    for d in "${dirs[@]}" /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu \
             /usr/lib64 /lib/x86_64-linux-gnu /lib64 /usr/lib/wsl/lib /usr/lib; do
      [ -n "$d" ] && [ -e "$d/libcuda.so.1" ] && { path="$d/libcuda.so.1"; break; }
    done
  fi
  if [ -z "$path" ]; then
    echo "driver   no libcuda.so.1 found (no GPU driver here?): searched the loader cache, LD_LIBRARY_PATH, /usr/local/nvidia/lib64, /usr/lib/x86_64-linux-gnu, /usr/lib64"
    return
  fi
  if command -v nvidia-smi >/dev/null 2>&1; then
    version="$(timeout 20 nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | awk 'NR == 1')"
    how="nvidia-smi"
  fi
  if [ -z "$version" ] && [ -r /proc/driver/nvidia/version ]; then
    version="$(sed -n 's/.*Kernel Module *\([0-9][0-9.]*\).*/\1/p' /proc/driver/nvidia/version | awk 'NR == 1')"
    how="/proc/driver/nvidia/version"
  fi
  echo "driver   libcuda.so.1 -> $(readlink -f "$path") (driver ${version:-version unknown}${version:+, from $how})"
}

# Loaded versions of the CUDA runtime, cuDNN, cuBLAS, cuBLASLt and NCCL,
# asked of the libraries themselves, beside the ones the build compiled
# against, with the file each loaded from.
versions() {
  command -v python3 >/dev/null 2>&1 || { echo "versions: no python3 to ask the libraries"; return 0; }
  python3 - "$BUNDLE/build_versions.txt" <<'PY'
import ctypes, os, sys
built = {}
try:
    for line in open(sys.argv[1]):
        if "=" in line:
            k, v = line.strip().split("=", 1)
            built[k] = v
except OSError:
    pass

def loaded_path(soname):
    try:
        for line in open("/proc/self/maps"):
            p = line.split()[-1]
            if os.path.basename(p).startswith(soname.split(".so")[0] + ".so"):
                return os.path.realpath(p)
    except OSError:
        pass
    return ""

def ask(soname, query):
    try:
        lib = ctypes.CDLL(soname)
    except OSError as e:
        return f"not loadable ({e})", ""
    try:
        return query(lib), loaded_path(soname)
    except Exception as e:  # an old library lacking the query
        return f"unknown ({e})", loaded_path(soname)

def int_out(fn):
    def q(lib):
        v = ctypes.c_int(0)
        getattr(lib, fn)(ctypes.byref(v))
        return v.value
    return q

def size_t(fn):
    def q(lib):
        f = getattr(lib, fn)
        f.restype = ctypes.c_size_t
        return f()
    return q

def cublas_property(lib):  # MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL
    parts = []
    for prop in (0, 1, 2):
        v = ctypes.c_int(0)
        if lib.cublasGetProperty(prop, ctypes.byref(v)) != 0:
            raise RuntimeError("cublasGetProperty failed")
        parts.append(v.value)
    return parts[0] * 10000 + parts[1] * 100 + parts[2]

three = lambda v: f"{v // 10000}.{v % 10000 // 100}.{v % 100}"
cudnn = lambda v: three(v) if v >= 90000 else f"{v // 1000}.{v % 1000 // 100}.{v % 100}"
cudart = lambda v: f"{v // 1000}.{v % 1000 // 10}"
cublaslt_soname = built.get("cublaslt_soname", "libcublasLt.so")
rows = [("cudart", built.get("cudart_soname", "libcudart.so"), int_out("cudaRuntimeGetVersion"), cudart),
        ("cudnn", built.get("cudnn_soname", "libcudnn.so"), size_t("cudnnGetVersion"), cudnn),
        ("cublas", built.get("cublas_soname", cublaslt_soname.replace("cublasLt", "cublas")),
         cublas_property, three),
        ("cublasLt", cublaslt_soname, size_t("cublasLtGetVersion"), three),
        ("nccl", built.get("nccl_soname", "libnccl.so"), int_out("ncclGetVersion"), three)]
print(f"{'library':<10} {'built with':<12} {'loaded':<12} from")
older = []
for name, soname, query, decode in rows:
    value, path = ask(soname, query)
    loaded = decode(value) if isinstance(value, int) else value
    b = built.get(name, "?")
    note = ""
    try:
        if tuple(map(int, loaded.split("."))) < tuple(map(int, b.split("."))):
            note = "  (older than the build)"
            older.append(name)
    except ValueError:
        pass
    print(f"{name:<10} {b:<12} {loaded:<12} {path or soname}{note}")
if older:
    print("note: " + ", ".join(older) + " loaded older than built; an API newer than the "
          "loaded version shows below as an unresolved symbol")
PY
}

# Unresolved symbols or missing libraries of the bundle's programs under
# this loader path. Prints "MISSING API in <program>: <symbol> ..." (the
# first symbols) per program with unresolved symbols and "MISSING LIBRARY
# in <program>: <soname>" per library the loader cannot find; returns 2 for
# a missing library, 3 for unresolved symbols only, 0 when all resolve.
check_symbols() {
  local bin out status=0 name syms libs listings
  command -v "$LDD" >/dev/null 2>&1 || { echo "symbols: no ldd here; not checked"; return 0; }
  # Every program at once (each ldd -r relocates cuDNN and cuBLAS: seconds).
  listings="$(mktemp -d)"
  for bin in "$BUNDLE"/bin/*; do
    [ -x "$bin" ] || continue
    "$LDD" -r "$bin" >"$listings/$(basename "$bin")" 2>&1 &
  done
  wait
  for bin in "$BUNDLE"/bin/*; do
    [ -x "$bin" ] || continue
    name="$(basename "$bin")"
    out="$(cat "$listings/$name")"
    case "$out" in *"not a dynamic executable"*) continue ;; esac
    libs="$(sed -n 's/^[[:space:]]*\([^[:space:]]*\) => not found.*/\1/p' <<<"$out" | sort -u | tr '\n' ' ')"
    # "undefined symbol: NAME[, version V]", "symbol NAME version V not
    # defined in file F ...", "F: version `V' not found (required by P)".
    syms="$(sed -n -e 's/.*undefined symbol: \([^[:space:],]*\).*/\1/p' \
                   -e 's/.*symbol \([^[:space:]]*\) version \([^[:space:]]*\) not defined.*/\1@\2/p' \
                   -e "s/^[[:space:]]*\\([^:]*\\): version \`\\([^']*\\)' not found.*/\\2 (\\1)/p" <<<"$out" \
            | awk '!seen[$0]++')"
    if [ -n "$libs" ]; then
      echo "MISSING LIBRARY in $name: ${libs% }"
      status=2
    fi
    if [ -n "$syms" ]; then
      local n first
      n=$(wc -l <<<"$syms")
      first="$(head -5 <<<"$syms" | tr '\n' ' ')"
      echo "MISSING API in $name: ${first% }$([ "$n" -gt 5 ] && echo " (and $((n - 5)) more)")"
      [ $status -eq 0 ] && status=3
    fi
  done
  rm -rf "$listings"
  [ $status -eq 0 ] && echo "symbols: every program's symbols resolve"
  return $status
}

USAGE="usage: run.sh --libs | PROGRAM [ARGS...]"
case "${1:-}" in
  --libs) ;;
  -h|--help) echo "$USAGE   (programs: $(ls "$BUNDLE/bin" 2>/dev/null | tr '\n' ' '))"; exit 0 ;;
  "") echo "run.sh: no PROGRAM ($USAGE; programs: $(ls "$BUNDLE/bin" 2>/dev/null | tr '\n' ' '))" >&2; exit 2 ;;
  -*) echo "run.sh: unknown option '$1' ($USAGE)" >&2; exit 2 ;;
esac

if [ "$1" = "--libs" ]; then
  [ $# -eq 1 ] || { echo "run.sh: --libs takes no arguments, got '${*:2}' ($USAGE)" >&2; exit 2; }
  status=0
  choose_origin
  if [ "$ORIGIN" = mixed ]; then
    echo "origin: mixed origins (no one place has every library in cuda_libs.txt; each from the first place that has it, so releases may mix)"
    printf '%s' "$ORIGIN_LACKS"
  else
    echo "origin: $(origin_name "$ORIGIN"), which has every library in cuda_libs.txt; only it is used"
  fi
  echo "== CUDA libraries the programs link (cuda_libs.txt)"
  resolve || status=2
  export LD_LIBRARY_PATH="$BUNDLE/lib${FOUND_DIRS:+:$FOUND_DIRS}${SYSTEM_LD_LIBRARY_PATH:+:$SYSTEM_LD_LIBRARY_PATH}"
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  echo "== loaded at run time (dlopen; ldd does not see these)"
  while IFS=$'\t' read -r need lib path; do
    if [ -n "$path" ]; then
      echo "runtime  $lib -> $(readlink -f "$path")"
    elif optional_libs | grep -qxF "$lib"; then
      echo "OPTIONAL MISSING $lib (searched: ${SEARCH_DIRS[*]:-nothing}; only cuDNN's legacy API, --cuda_batch_norm=legacy, loads it: those steps skip)"
    elif [ "$need" = required ]; then
      if required_libs | grep -qxF "$lib"; then
        echo "MISSING  $lib (searched: ${SEARCH_DIRS[*]:-nothing})"
      else
        echo "absent   $lib.so.* (this bundle's cuda_libs.txt does not list it, so it is not required; searched: ${SEARCH_DIRS[*]:-nothing})"
      fi
    fi
  done < <(runtime_libs)
  echo "== driver"
  driver_line
  echo "== versions"
  versions
  echo "== symbols"
  check_symbols
  rc=$?
  if [ $rc -eq 2 ] || [ $status -eq 2 ]; then
    status=2
  elif [ $rc -eq 3 ]; then
    status=3
  fi
  exit $status
fi

if ! resolve >/dev/null; then
  resolve | grep MISSING >&2
  echo "run.sh: CUDA libraries the build needs are missing; see ./run.sh --libs" >&2
  exit 2
fi
export LD_LIBRARY_PATH="$BUNDLE/lib${FOUND_DIRS:+:$FOUND_DIRS}${SYSTEM_LD_LIBRARY_PATH:+:$SYSTEM_LD_LIBRARY_PATH}"
program="$1"
shift
if [ -x "$BUNDLE/bin/$program" ]; then exec "$BUNDLE/bin/$program" "$@"; fi
exec "$program" "$@"
