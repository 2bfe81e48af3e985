"""rules/ is pure (DESIGN.md): no I/O, no clock, no printing, no logging — checked on the source and at runtime."""

import ast
import builtins
from pathlib import Path

import pytest

import rules
from rules.evaluate import evaluate
from tests.unit.rules.factories import healthy, live

RULES_DIR = Path(rules.__file__).parent
SOURCES = sorted(RULES_DIR.rglob("*.py"))
FORBIDDEN_MODULES = {
    "os",
    "sys",
    "io",
    "pathlib",
    "shutil",
    "glob",
    "tempfile",
    "socket",
    "ssl",
    "select",
    "subprocess",
    "multiprocessing",
    "threading",
    "asyncio",
    "requests",
    "aiohttp",
    "urllib",
    "http",
    "httpx",
    "logging",
    "time",
    "datetime",
    "random",
    "secrets",
    "importlib",
    "pickle",
    "sqlite3",
    "advisor",
    "engine",
    "loadtest",
    "reports",
    "servops_kernels",
}
FORBIDDEN_CALLS = {"open", "print", "input", "exec", "eval", "breakpoint", "__import__"}


def _imports(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_the_rules_package_has_sources_to_check():
    assert len(SOURCES) >= 10


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(RULES_DIR)))
def test_no_io_clock_or_project_imports(path):
    bad = _imports(ast.parse(path.read_text())) & FORBIDDEN_MODULES
    assert not bad, f"{path.name} imports {sorted(bad)}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(RULES_DIR)))
def test_no_printing_or_file_calls(path):
    calls = {
        node.func.id
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    assert not calls & FORBIDDEN_CALLS, f"{path.name} calls {sorted(calls & FORBIDDEN_CALLS)}"


def test_evaluation_opens_no_file_and_prints_nothing(monkeypatch, capsys):
    def refuse(*args, **kwargs):
        raise AssertionError("rules/ tried to open a file")

    monkeypatch.setattr(builtins, "open", refuse)
    busy = live(running=60, waiting=14, kv=0.99, preemptions_added=12, ttft={6.0: 20})
    for facts in (healthy(), busy):
        evaluate(facts)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
