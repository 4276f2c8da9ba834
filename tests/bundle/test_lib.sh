# Shared by the bundle tests (sourced): where the tools under test are, a
# scratch folder, the assertions, a fake nvidia-smi.
#
#   . "$(dirname "${BASH_SOURCE[0]}")/test_lib.sh"
#
# Sets ROOT (the tree: Bazel's runfiles, else this checkout), TOOLS
# ($ROOT/tools), TMP (the test's scratch folder, removed at exit when not
# Bazel's) and failures; fail MESSAGE counts a failure; expect_in TEXT
# PATTERN WHAT fails unless the extended regex PATTERN is in TEXT;
# fake_nvidia_smi DIR writes DIR/nvidia-smi, which lists one H200 (none,
# "No devices were found" and exit 6, when FAKE_NO_GPU is set);
# finish prints PASS or the count and exits.
ROOT=""
if [ -n "${TEST_SRCDIR:-}" ]; then ROOT="$TEST_SRCDIR/${TEST_WORKSPACE:-}"; fi
[ -n "$ROOT" ] && [ -d "$ROOT/tools" ] || ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TOOLS="$ROOT/tools"
if [ -n "${TEST_TMPDIR:-}" ]; then
  TMP="$TEST_TMPDIR"
else
  TMP="$(mktemp -d)"
  trap 'rm -rf "$TMP"' EXIT
fi
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

expect_in() {  # expect_in TEXT PATTERN WHAT
  grep -qE -- "$2" <<<"$1" || fail "$3: '$2' not in output:"$'\n'"$1"
}

fake_nvidia_smi() {  # fake_nvidia_smi DIR
  mkdir -p "$1"
  cat >"$1/nvidia-smi" <<'FAKE'
#!/usr/bin/env bash
if [ -n "${FAKE_NO_GPU:-}" ]; then echo "No devices were found"; exit 6; fi
case "$*" in
  -L) echo "GPU 0: NVIDIA H200 (UUID: GPU-fake)" ;;
  --query-gpu=name,driver_version,*)
    echo "name, driver_version, memory.total [MiB], clocks.max.sm [MHz], power.limit [W]"
    echo "NVIDIA H200, 580.65.06, 143771 MiB, 1980 MHz, 700.00 W" ;;
  *) echo 580.65.06 ;;
esac
FAKE
  chmod +x "$1/nvidia-smi"
}

finish() {
  if [ "$failures" -ne 0 ]; then
    echo "$failures failure(s)"
    exit 1
  fi
  echo "PASS"
}
