"""No top-level package of the project may share its import name with an installed distribution.

The repository root comes first on `sys.path` under pytest and in every script run from it, so a
project folder named like an installed package hides that package from everything that imports it.
It happened: transformers 5.25 requires Hugging Face's `kernels` distribution and imports it when it
is installed; our folder, then called `kernels`, shadowed it, and every transformers model class
failed to import (`cannot import name 'CUDAProperties' from 'kernels'`). The folder is now
`servops_kernels`. This test names the next collision before a dependency's release breaks the suite.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _project_packages() -> list[str]:
    """Every import name the repository root puts on `sys.path`: its folders that are packages."""
    return sorted(folder.name for folder in ROOT.iterdir() if (folder / "__init__.py").is_file())


def test_the_project_packages_are_found() -> None:
    assert {"advisor", "engine", "rules", "servops_kernels"} <= set(_project_packages())


def test_no_project_package_shadows_an_installed_distribution() -> None:
    owners = importlib.metadata.packages_distributions()
    shadowed = {
        name: sorted(set(owners[name]) - {"servops"})
        for name in _project_packages()
        if set(owners.get(name, [])) - {"servops"}
    }
    assert not shadowed, f"these project folders hide installed distributions of the same import name: {shadowed}"
