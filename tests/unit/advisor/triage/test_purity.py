"""Triage's decision is pure (docs/design.md): what reads servers and files lives in `triage/collect.py` and
the CLI, so the modules that turn facts into valued findings do no I/O, read no clock and print nothing.

Checked on the source, like tests/unit/rules/test_purity.py. `collect.py` calls the collectors and then the
decision (`run.decide`), `context.py` resolves the model and GPU from the catalogs (a model's config.json on
disk, a host profile) while collecting, and `result.py` stamps the document's time: those three are the
named exceptions; `run.py`, the decision itself, is checked.
"""

import ast
from pathlib import Path

import pytest

import advisor.triage
from tests.unit.rules.test_purity import FORBIDDEN_CALLS
from tests.unit.rules.test_purity import FORBIDDEN_MODULES as RULES_FORBIDDEN

TRIAGE_DIR = Path(advisor.triage.__file__).parent
IMPURE = {"__init__.py", "collect.py", "context.py", "result.py"}
PURE_SOURCES = sorted(path for path in TRIAGE_DIR.glob("*.py") if path.name not in IMPURE)
# rules/'s list of I/O and clock modules (the project's own packages aside: triage is the advisor and reads
# loadtest's and rules' models), and the collectors that reach a server or a file.
FORBIDDEN_MODULES = (RULES_FORBIDDEN - {"advisor", "engine", "loadtest", "reports", "servops_kernels"}) | {
    "advisor.collect.metrics",
    "advisor.collect.prometheus",
    "advisor.collect.probe",
    "advisor.collect.logs",
    "advisor.collect.host",
    "advisor.triage.collect",
    "advisor.triage.context",
    "advisor.cli",
}


def _imported(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _forbidden(module: str) -> bool:
    return any(module == name or module.startswith(name + ".") for name in FORBIDDEN_MODULES)


def test_the_decision_has_modules_to_check():
    assert {path.name for path in PURE_SOURCES} >= {
        "run.py",
        "valuation.py",
        "forecast.py",
        "layouts.py",
        "tp_choice.py",
    }


@pytest.mark.parametrize("path", PURE_SOURCES, ids=lambda p: p.name)
def test_no_io_clock_or_collector_imports(path):
    bad = sorted(module for module in _imported(ast.parse(path.read_text())) if _forbidden(module))
    assert not bad, f"{path.name} imports {bad}"


@pytest.mark.parametrize("path", PURE_SOURCES, ids=lambda p: p.name)
def test_no_printing_or_file_calls(path):
    calls = {
        node.func.id
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    assert not calls & FORBIDDEN_CALLS, f"{path.name} calls {sorted(calls & FORBIDDEN_CALLS)}"
