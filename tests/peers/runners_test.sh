#!/usr/bin/env bash
# The peer runners and scripts: syntax; flag errors name the flag and exit 2
# before any framework is imported (an inference engine asked to train too);
# with PyTorch / TensorFlow / ONNX Runtime / OpenVINO importable by
# $CNNBENCH_PEERS_PYTHON (default python3), a tiny functional run (1 warm-up,
# 1 step or 2 batches, batch 1) writes the suite's case names, the framework
# and an unsupported case; without the framework that part prints "skipped".
set -u
# tools/peers' files are not Bazel targets of //tools (its BUILD exports only
# torch_train_step.py): read them from the runfiles where they are there, else
# from the source tree this script links to (the target is tagged "external").
ROOT="${TEST_SRCDIR:-}/${TEST_WORKSPACE:-}"
[ -f "$ROOT/tools/peers/peer_json.py" ] || ROOT="$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)"
PEERS="$ROOT/tools/peers"
PY="${CNNBENCH_PEERS_PYTHON:-python3}"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
export PYTHONDONTWRITEBYTECODE=1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

for s in setup.sh compare.sh; do bash -n "$PEERS/$s" || fail "bash -n $s"; done
for p in peer_json.py pytorch_train.py tensorflow_train.py engine_common.py onnxruntime_infer.py \
         openvino_infer.py; do
  python3 -c 'import ast,sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])' "$PEERS/$p" \
    || fail "python syntax of $p"
done
out="$("$PEERS/compare.sh" --steps=0 2>&1)"; rc=$?
[ "$rc" = 2 ] && grep -q "steps='0' is not an integer >= 1" <<<"$out" \
  || fail "compare.sh --steps=0: rc $rc, output: $out"
out="$("$PEERS/compare.sh" --frameworks=caffe 2>&1)"; rc=$?
[ "$rc" = 2 ] && grep -q "unknown framework 'caffe'" <<<"$out" || fail "compare.sh --frameworks=caffe: $out"
out="$("$PEERS/compare.sh" --frameworks=cnnbench,openvino 2>&1)"; rc=$?
[ "$rc" = 2 ] && grep -q "openvino is an inference engine: give --mode=infer" <<<"$out" \
  || fail "compare.sh --frameworks=cnnbench,openvino (train): rc $rc, output: $out"
out="$("$PEERS/setup.sh" --only=torch,onnx 2>&1)"; rc=$?
[ "$rc" = 2 ] && grep -q "unknown 'onnx'" <<<"$out" || fail "setup.sh --only=torch,onnx: $out"
out="$("$PEERS/setup.sh" --bogus 2>&1)"; rc=$?
[ "$rc" = 2 ] && grep -q "unknown argument '--bogus'" <<<"$out" || fail "setup.sh --bogus: $out"

for runner in pytorch_train.py tensorflow_train.py onnxruntime_infer.py openvino_infer.py; do
  out="$(python3 "$PEERS/$runner" --models=resnet5 --benchmark_out="$TMP/x.json" 2>&1)"; rc=$?
  [ "$rc" = 2 ] && grep -q "$runner: --models: unknown model 'resnet5'" <<<"$out" \
    || fail "$runner --models=resnet5: rc $rc, output: $out"
  out="$(python3 "$PEERS/$runner" --batch_sizes=0 --benchmark_out="$TMP/x.json" 2>&1)"; rc=$?
  [ "$rc" = 2 ] && grep -q -- "--batch_sizes: '0'" <<<"$out" || fail "$runner --batch_sizes=0: $out"
  [ -e "$TMP/x.json" ] && fail "$runner wrote a file after a flag error"
done
for runner in onnxruntime_infer.py openvino_infer.py; do
  out="$(python3 "$PEERS/$runner" --mode=train --benchmark_out="$TMP/x.json" 2>&1)"; rc=$?
  [ "$rc" = 2 ] && grep -q "is an inference engine: --mode=infer (the default), not --mode=train" \
    <<<"$out" || fail "$runner --mode=train: rc $rc, output: $out"
  [ -e "$TMP/x.json" ] && fail "$runner wrote a file after --mode=train"
done

# check_run FILE FRAMEWORK_WORD OK_MODEL UNSUPPORTED_MODEL
check_run() {
  python3 - "$@" <<'PY' || fail "$1: $(cat "$1" 2>/dev/null | head -c 2000)"
import json, sys
path, word, ok_model, bad_model = sys.argv[1:5]
infer = sys.argv[5:] == ["infer"]
run = json.load(open(path))
c = run["context"]
assert c["framework"].startswith(word + " "), c["framework"]
assert c["framework_settings"], "no framework_settings"
assert c["platform"] == "peer-test", c["platform"]
by_model = {b["name"].split("/")[1]: b for b in run["benchmarks"]}
ok = by_model[ok_model]
kind, n = ("infer", 2) if infer else ("train", 1)
assert ok["name"] == f"{kind}/{ok_model}/fp32/synthetic/batch:1/gpus:0/iterations:{n}/repeats:1/manual_time", ok["name"]
assert not ok.get("error_occurred"), ok.get("error_message")
assert ok["real_time"] > 0 and ok["images_per_second"] > 0 and ok["time_unit"] == "ms"
if infer:
    assert ok["latency_ms_p50"] > 0 and ok["timed_iterations"] == 2, ok
    assert c["infer_iterations"] == "2", c
bad = by_model[bad_model]
assert bad["error_occurred"] and bad["error_message"].startswith("unsupported: "), bad
print(f"{path}: {c['framework']}: {ok_model} ran, {bad_model} unsupported")
PY
}

if "$PY" -c "import torch, torchvision" 2>/dev/null; then
  "$PY" "$PEERS/pytorch_train.py" --models=resnet18,resnet50 --batch_sizes=1 --warmup_steps=1 \
    --steps=1 --repetitions=1 --layout=nchw --platform=peer-test \
    --benchmark_out="$TMP/pytorch.json" || fail "pytorch_train.py exited $?"
  check_run "$TMP/pytorch.json" pytorch resnet18 resnet50
else
  echo "skipped: PyTorch not installed (for $PY; tools/peers/setup.sh, then --test_env=CNNBENCH_PEERS_PYTHON=<venv>/bin/python)"
fi
if "$PY" -c "import tensorflow" 2>/dev/null; then
  "$PY" "$PEERS/tensorflow_train.py" --models=mobilenet,alexnet --batch_sizes=1 --warmup_steps=1 \
    --steps=1 --repetitions=1 --platform=peer-test \
    --benchmark_out="$TMP/tensorflow.json" || fail "tensorflow_train.py exited $?"
  check_run "$TMP/tensorflow.json" tensorflow mobilenet alexnet
else
  echo "skipped: TensorFlow not installed (for $PY; tools/peers/setup.sh, then --test_env=CNNBENCH_PEERS_PYTHON=<venv>/bin/python)"
fi
for engine in onnxruntime openvino; do
  imports="torch, torchvision, $engine"
  [ "$engine" = onnxruntime ] && imports="$imports, onnx, onnxscript"
  if "$PY" -c "import $imports" 2>/dev/null; then
    "$PY" "$PEERS/${engine}_infer.py" --models=resnet18,resnet50 --batch_sizes=1 --infer_warmup=1 \
      --infer_iterations=2 --repetitions=1 --platform=peer-test \
      --benchmark_out="$TMP/$engine.json" || fail "${engine}_infer.py exited $?"
    check_run "$TMP/$engine.json" "$engine" resnet18 resnet50 infer
  else
    echo "skipped: $engine not installed (for $PY; tools/peers/setup.sh, then --test_env=CNNBENCH_PEERS_PYTHON=<venv>/bin/python)"
  fi
done

if [ "$failures" -gt 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "PASS"
