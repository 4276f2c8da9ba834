#!/usr/bin/env bash
# compute-sanitizer over the GPU op tests, inside a bundle made by
# tools/device_bundle.sh. Separate from gpu_check.sh so that the timed check
# keeps its minutes: run it in a call of its own when device time is left.
#
#   ./sanitize.sh RESULTS_DIR [TEST ...]     # default: every cuda_*_test in bin/,
#                                            # cuda_ops_test and cuda_backend_test first
#
# Tools: $CNNBENCH_SANITIZE_TOOLS (comma-separated; default memcheck; also
# initcheck, racecheck, synccheck). Budget: $CNNBENCH_SANITIZE_SECONDS (240)
# for all of it, at most 150 s per test and tool. $CNNBENCH_SANITIZE_FILTER:
# a --gtest_filter for every test (default: all of each test). The sanitizer is looked for
# as $COMPUTE_SANITIZER, on PATH, then under /usr/local/cuda and
# /opt/nvidia. Some machines refuse it ("Device not supported"): that is
# reported as refused, not as a finding.
#
# Writes one file, RESULTS_DIR/sanitize.log (so that it can share a results
# folder with gpu_check.sh's): first a line per test and tool (clean,
# errors N, refused, failed, timed out; also printed), then, after a
# marked line, the whole output. It is rewritten after each run, so a stop
# from outside leaves the runs finished. Exit status: 0 when every run was
# clean or the sanitizer is refused or absent, 1 when a run reported errors
# or failed, 2 when the arguments are wrong (an unknown option, a
# RESULTS_DIR that is a file or cannot be made or written: nothing runs).
set -u
BUNDLE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
USAGE="usage: sanitize.sh RESULTS_DIR [TEST ...]"
# The shared checks (script_args.sh, beside this script in the bundle).
# shellcheck source=tools/bundle/script_args.sh
source "$(dirname "${BASH_SOURCE[0]}")/script_args.sh"
check_args sanitize.sh "$USAGE" "$@"
OUT="$(results_folder sanitize.sh "$1")" || exit 2
shift
BUDGET="${CNNBENCH_SANITIZE_SECONDS:-240}"
FILTER="${CNNBENCH_SANITIZE_FILTER:-*}"
IFS=',' read -r -a TOOLS <<<"${CNNBENCH_SANITIZE_TOOLS:-memcheck}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
SUMMARY="$WORK/summary.txt"
LOG="$WORK/output.log"
: >"$SUMMARY"
: >"$LOG"
START=$SECONDS

# sanitize.log: the summary lines, then the whole output; replaced whole.
write_log() {
  {
    echo "== sanitize summary (a line per test and tool${1:+; $1}; the whole output follows)"
    cat "$SUMMARY"
    echo "== the whole output"
    cat "$LOG"
  } >"$OUT/.sanitize.log.tmp" && mv -f "$OUT/.sanitize.log.tmp" "$OUT/sanitize.log"
}
say() { echo "$*" | tee -a "$SUMMARY"; write_log "still running"; }

find_sanitizer() {
  local c
  if [ -n "${COMPUTE_SANITIZER:-}" ]; then echo "$COMPUTE_SANITIZER"; return 0; fi
  if c="$(command -v compute-sanitizer 2>/dev/null)"; then echo "$c"; return 0; fi
  for c in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer \
           /opt/nvidia/*/compute-sanitizer /opt/nvidia/*/*/compute-sanitizer; do
    [ -x "$c" ] && { echo "$c"; return 0; }
  done
  return 1
}

if ! SANITIZER="$(find_sanitizer)"; then
  say "sanitize: no compute-sanitizer on this machine (PATH, /usr/local/cuda, /opt/nvidia); nothing checked"
  write_log
  exit 0
fi
say "sanitize: $SANITIZER ($("$SANITIZER" --version 2>/dev/null | grep -m1 -i version || echo 'version unknown'))"

TESTS=("$@")
if [ ${#TESTS[@]} -eq 0 ]; then
  # The op tests first: the backend's own kernels are what memcheck is for.
  for t in "$BUNDLE/bin/cuda_ops_test" "$BUNDLE/bin/cuda_backend_test" "$BUNDLE"/bin/cuda_*_test; do
    name="$(basename "$t")"
    [ -x "$t" ] || continue
    case " ${TESTS[*]:-} " in *" $name "*) continue ;; esac
    TESTS+=("$name")
  done
fi
[ ${#TESTS[@]} -gt 0 ] || { say "sanitize: no cuda_*_test in $BUNDLE/bin"; write_log; exit 1; }

status=0
refused=0
for tool in "${TOOLS[@]}"; do
  for t in "${TESTS[@]}"; do
    label="$(printf '%-22s %-10s' "$t" "$tool")"
    if [ "$refused" -eq 1 ]; then
      say "$label skipped: the sanitizer was refused above"
      continue
    fi
    left=$((BUDGET - (SECONDS - START)))
    if [ "$left" -lt 20 ]; then
      say "$label skipped: out of time (the run has ${BUDGET}s)"
      continue
    fi
    limit=150
    [ "$limit" -gt "$left" ] && limit=$left
    echo "== $t $tool (limit ${limit}s)" >>"$LOG"
    t0=$SECONDS
    # --error-exitcode tells findings (86) from a test that fails (1).
    out="$(timeout -k 5 "$limit" "$BUNDLE/run.sh" "$SANITIZER" --tool "$tool" --error-exitcode 86 \
             --print-limit 20 "$BUNDLE/bin/$t" --gtest_brief=1 --gtest_filter="$FILTER" 2>&1)"
    rc=$?
    printf '%s\n' "$out" >>"$LOG"
    secs=$((SECONDS - t0))
    errors="$(sed -n 's/.*ERROR SUMMARY: \([0-9][0-9]*\) error.*/\1/p' <<<"$out" | tail -1)"
    if grep -qiE "device not supported|not supported on this (device|platform)|unable to (attach|initialize)" <<<"$out"; then
      say "$label refused by this machine (${secs}s): $(grep -m1 -iE 'not supported|unable to' <<<"$out")"
      refused=1
    elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
      say "$label timed out after ${limit}s"
      status=1
    elif [ $rc -eq 86 ] || { [ -n "$errors" ] && [ "$errors" -gt 0 ]; }; then
      say "$label errors ${errors:-?} (${secs}s; sanitize.log has them)"
      status=1
    elif [ $rc -ne 0 ]; then
      say "$label failed: exit $rc (${secs}s; sanitize.log)"
      status=1
    else
      say "$label clean (${secs}s${errors:+, ERROR SUMMARY: $errors errors})"
    fi
  done
done
say "sanitize: $((SECONDS - START))s; results in $OUT/sanitize.log"
write_log
exit $status
