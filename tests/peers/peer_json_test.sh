#!/usr/bin/env bash
# Runs peer_json_test.py with plain python3 (no PyTorch, no TensorFlow) on the
# runfiles: the peers' JSON writer, and the report reading what it writes.
set -eu
RUN="${TEST_SRCDIR:-}/${TEST_WORKSPACE:-}"
# tools/peers' files are not Bazel targets of //tools (its BUILD exports only
# torch_train_step.py), so outside the runfiles they are read from the source
# tree this script links to; the target is tagged "external" (never cached).
SRC="$RUN"
[ -f "$SRC/tools/peers/peer_json.py" ] || SRC="$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)"
[ -f "$SRC/tools/peers/peer_json.py" ] || { echo "peer_json_test: tools/peers not found from $0" >&2; exit 1; }
export TOOLS="$SRC/tools"
export REPORT="$RUN/tools/report"
export MODEL_SUMMARY="$RUN/tools/model_summary"
# The report's own suite fixture (tests/tools/testdata is not exported either).
export SUITE_JSON="$RUN/tests/tools/testdata/cpu_box.json"
[ -f "$SUITE_JSON" ] || SUITE_JSON="$SRC/tests/tools/testdata/cpu_box.json"
export INFER_JSON="$RUN/tests/tools/testdata/inference.json"
[ -f "$INFER_JSON" ] || INFER_JSON="$SRC/tests/tools/testdata/inference.json"
export PYTHONDONTWRITEBYTECODE=1
exec python3 "$RUN/tests/peers/peer_json_test.py"
