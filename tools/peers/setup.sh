#!/usr/bin/env bash
# Creates the virtual environment the peer runners (pytorch_train.py,
# tensorflow_train.py, onnxruntime_infer.py, openvino_infer.py) run in, with
# pinned PyTorch, torchvision, TensorFlow (CPU build), ONNX Runtime (with
# onnx and onnxscript for torch.onnx.export) and OpenVINO from PyPI. Never a
# dependency of the suite or its tests: only tools/peers/compare.sh and a
# person comparing frameworks use it.
#
#   tools/peers/setup.sh                 # ~/.cache/cnnbench/peers-venv
#   CNNBENCH_PEERS_VENV=/path tools/peers/setup.sh
#   tools/peers/setup.sh --torch_index=https://download.pytorch.org/whl/cpu
#   tools/peers/setup.sh --only=torch,onnxruntime,openvino   # the engines
#                        # build their models with torch: name it with them
#
# PyPI's Linux torch wheel is the CUDA build (it pulls NVIDIA's runtime
# wheels, several GB); PyTorch's own CPU-only index is smaller where it can
# be reached (--torch_index). tensorflow-cpu is on PyPI itself.
set -euo pipefail

TORCH_VERSION=2.15.0
TORCHVISION_VERSION=0.29.2
TENSORFLOW_VERSION=2.21.0
ONNXRUNTIME_VERSION=1.32.0
ONNX_VERSION=1.23.2
ONNXSCRIPT_VERSION=0.7.2
OPENVINO_VERSION=2026.4.1

VENV="${CNNBENCH_PEERS_VENV:-}"
TORCH_INDEX=""
WHAT="torch,tensorflow,onnxruntime,openvino"
PYTHON="${PYTHON:-python3}"
for arg in "$@"; do
  case "$arg" in
    --venv=*) VENV="${arg#--venv=}" ;;
    --torch_index=*) TORCH_INDEX="${arg#--torch_index=}" ;;
    --only=*) WHAT="${arg#--only=}" ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup.sh: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
  esac
done
IFS=, read -r -a PARTS <<<"$WHAT"
[ "${#PARTS[@]}" -gt 0 ] || { echo "setup.sh: --only is empty" >&2; exit 2; }
for part in "${PARTS[@]}"; do
  case "$part" in
    torch|tensorflow|onnxruntime|openvino) ;;
    *) echo "setup.sh: --only: unknown '$part' (torch, tensorflow, onnxruntime, openvino)" >&2
       exit 2 ;;
  esac
done
if [ -z "$VENV" ]; then
  [ -n "${HOME:-}" ] || { echo "setup.sh: HOME is not set; give --venv=PATH" >&2; exit 2; }
  VENV="$HOME/.cache/cnnbench/peers-venv"
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "setup.sh: creating $VENV"
  mkdir -p "$(dirname "$VENV")"
  "$PYTHON" -m venv "$VENV" || { echo "setup.sh: '$PYTHON -m venv' failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
fi
PIP=("$VENV/bin/python" -m pip install --disable-pip-version-check)
"${PIP[@]}" --upgrade pip >/dev/null

if [[ ",$WHAT," == *,torch,* ]]; then
  if [ -n "$TORCH_INDEX" ]; then
    "${PIP[@]}" --index-url "$TORCH_INDEX" "torch==$TORCH_VERSION" "torchvision==$TORCHVISION_VERSION"
  else
    "${PIP[@]}" "torch==$TORCH_VERSION" "torchvision==$TORCHVISION_VERSION"
  fi
fi
if [[ ",$WHAT," == *,tensorflow,* ]]; then
  "${PIP[@]}" "tensorflow-cpu==$TENSORFLOW_VERSION"
fi
if [[ ",$WHAT," == *,onnxruntime,* ]]; then
  "${PIP[@]}" "onnxruntime==$ONNXRUNTIME_VERSION" "onnx==$ONNX_VERSION" "onnxscript==$ONNXSCRIPT_VERSION"
fi
if [[ ",$WHAT," == *,openvino,* ]]; then
  "${PIP[@]}" "openvino==$OPENVINO_VERSION"
fi

"$VENV/bin/python" - "$WHAT" <<'PY'
import sys
what = sys.argv[1].split(",")
if "torch" in what:
    import torch, torchvision
    print(f"setup.sh: torch {torch.__version__}, torchvision {torchvision.__version__}")
if "tensorflow" in what:
    import tensorflow as tf
    print(f"setup.sh: tensorflow {tf.__version__}")
if "onnxruntime" in what:
    import onnxruntime
    print(f"setup.sh: onnxruntime {onnxruntime.__version__}")
if "openvino" in what:
    import openvino
    print(f"setup.sh: openvino {openvino.get_version()}")
PY
echo "setup.sh: ready; runners: $VENV/bin/python tools/peers/pytorch_train.py --help"
