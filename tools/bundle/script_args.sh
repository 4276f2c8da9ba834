# Sourced by the GPU call's scripts (gpu_check.sh, sanitize.sh): their
# command line checked before anything runs or is written. A folder that
# cannot be used must stop a script before it runs, or every log would go
# to the folder it runs in, or to /.

# check_args SCRIPT USAGE ARG...: -h/--help prints USAGE and exits 0; no
# RESULTS_DIR, or an argument starting with "-" (no step or test name
# does), is refused with exit 2.
check_args() {
  local script="$1" usage="$2" arg
  shift 2
  case "${1:-}" in
    -h|--help) echo "$usage"; exit 0 ;;
    "") echo "$script: no RESULTS_DIR ($usage)" >&2; exit 2 ;;
  esac
  for arg in "$@"; do
    case "$arg" in -*) echo "$script: unknown option '$arg' ($usage)" >&2; exit 2 ;; esac
  done
}

# results_folder SCRIPT DIR: DIR made if need be and written to once (a
# file made there and removed), its absolute path printed; else why not on
# stderr and status 1.
results_folder() {
  local err probe
  if [ -e "$2" ] && [ ! -d "$2" ]; then
    echo "$1: the results folder $2 is a file, not a folder" >&2
    return 1
  fi
  if ! err="$(mkdir -p -- "$2" 2>&1)"; then
    echo "$1: cannot make the results folder $2: ${err#mkdir: }" >&2
    return 1
  fi
  if ! probe="$(mktemp "$2/.results_folder.XXXXXX" 2>&1)"; then
    echo "$1: cannot write in the results folder $2: ${probe#mktemp: }" >&2
    return 1
  fi
  rm -f -- "$probe"
  (cd -- "$2" 2>/dev/null && pwd) || { echo "$1: cannot enter the results folder $2" >&2; return 1; }
}
