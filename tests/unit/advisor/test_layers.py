"""advisor/ is layered (docs/design.md): each folder answers one question and imports run only downwards.

`cli` > `tune` > `triage` > `advise | perf | oncall` > `memory | servers` > `collect` > `catalog` > base. A module
may import its own folder and any lower layer; folders that share a rank (`advise` and `perf`, `memory`
and `servers`) are siblings and import neither each other. Deferred (function-level) imports count the
same as top-level ones: a deferred import that reaches upwards is a cycle hidden, not opened. The few
deferred imports left defer a heavy library and say so; the engine is reached only through the pure
scheduling parts the performance model replays.
"""

import ast
from pathlib import Path

import pytest

import advisor

ADVISOR_DIR = Path(advisor.__file__).parent
SOURCES = sorted(ADVISOR_DIR.rglob("*.py"))

# Rank of each top folder of advisor/ (the package's root modules are the base, rank 0).
LAYER_RANK = {
    "cli": 8,
    "tune": 7,
    "triage": 6,
    "advise": 5,
    "perf": 5,
    "oncall": 5,
    "memory": 4,
    "servers": 4,
    "collect": 3,
    "catalog": 2,
}
BASE_MODULES = {"advisor", "advisor.errors", "advisor.redact", "advisor.__main__"}
# The one place advisor may reach into the engine: the pure scheduling parts the replay drives in
# virtual time (DESIGN.md), the default model's builder that the server launcher needs, and the
# histogram bounds of vLLM's metrics that the engine reproduces (the metric catalog reads them).
ENGINE_ALLOWED = {
    "engine.core.scheduler",
    "engine.core.kv_cache_manager",
    "engine.core.request",
    "engine.model.default_model",
    "engine.observability.metrics",  # vLLM's histogram bounds, which the engine reproduces (vllm_metrics)
}
# Deferred imports that remain, and why each defers (a heavy library, or one only a rare path needs).
DEFERRED_ALLOWED = {
    ("advisor.collect.host", "torch"): "the host probe measures FLOPS with torch; importing it costs seconds",
    ("advisor.servers.vllm", "engine.model.default_model"): "builds the embedded model (torch, gguf) on demand",
    ("advisor.cli.commands.ramp", "loadtest.runner"): "Locust and gevent monkey-patch on import: only a ramp may",
    ("advisor.cli.commands.ramp", "loadtest.errors"): "imported with the runner, in the worker process",
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ADVISOR_DIR.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> tuple[str, int]:
    """(folder, rank) of an advisor module; the root modules are the base."""
    if module == "advisor.__main__":
        return "entry", max(LAYER_RANK.values()) + 1  # `python -m advisor` starts the CLI
    parts = module.split(".")
    if len(parts) >= 2 and parts[1] in LAYER_RANK:
        return parts[1], LAYER_RANK[parts[1]]
    return "base", 0


def _statements(path: Path) -> list[tuple[str, list[str], bool]]:
    """(module, names imported from it, deferred?) for every absolute import statement in the file."""
    found: list[tuple[str, list[str], bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                found.extend((alias.name, [], in_function) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                found.append((child.module, [alias.name for alias in child.names], in_function))
            visit(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef))

    visit(ast.parse(path.read_text()), False)
    return found


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported module, deferred?): each statement's module, and `module.name` for `from module import name`
    (which is a module itself when `name` is a submodule)."""
    return [
        (target, deferred)
        for module, names, deferred in _statements(path)
        for target in [module, *(f"{module}.{name}" for name in names)]
    ]


def _advisor_modules() -> set[str]:
    return {_module_name(path) for path in SOURCES}


def test_advisor_has_its_layers():
    folders = {path.parent.name for path in SOURCES if path.parent != ADVISOR_DIR}
    assert set(LAYER_RANK) <= folders
    root_modules = {path.stem for path in ADVISOR_DIR.glob("*.py")}
    assert root_modules == {"__init__", "__main__", "errors", "redact", "units"}, "only the base lives at the root"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ADVISOR_DIR)))
def test_imports_run_only_downwards(path):
    module = _module_name(path)
    folder, rank = _layer(module)
    known = _advisor_modules()
    upward = []
    for imported, _ in _imports(path):
        if not imported.startswith("advisor.") or imported not in known:
            continue  # names imported from a module are checked through the module itself
        other_folder, other_rank = _layer(imported)
        if other_folder == folder:
            continue
        if other_rank >= rank:
            upward.append(f"{imported} ({other_folder}, rank {other_rank} >= {folder}'s {rank})")
    assert not upward, f"{module} imports a layer that is not below it: {upward}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ADVISOR_DIR)))
def test_engine_is_reached_only_through_the_replayed_scheduler(path):
    engine = {
        imported
        for imported, _ in _imports(path)
        if imported.split(".")[0] == "engine" and imported.count(".") <= 2  # module, not a name in it
    }
    assert engine <= ENGINE_ALLOWED, f"{_module_name(path)} imports {sorted(engine - ENGINE_ALLOWED)}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ADVISOR_DIR)))
def test_deferred_imports_only_defer_heavy_libraries(path):
    module = _module_name(path)
    deferred = {imported for imported, _, is_deferred in _statements(path) if is_deferred}
    unexplained = {name for name in deferred if (module, name) not in DEFERRED_ALLOWED}
    assert not unexplained, f"{module} defers imports of {sorted(unexplained)} without a reason in DEFERRED_ALLOWED"


def test_no_import_cycles_between_advisor_modules():
    known = _advisor_modules()
    graph = {
        _module_name(path): {name for name, _ in _imports(path) if name in known and name != _module_name(path)}
        for path in SOURCES
    }
    for module in graph:  # packages import their submodules only by name: a package's __init__ imports nothing
        graph[module] = {other for other in graph[module] if not module.startswith(other + ".")}
    state: dict[str, int] = {}
    cycle: list[str] = []

    def visit(module: str, trail: list[str]) -> bool:
        state[module] = 1
        for other in sorted(graph.get(module, ())):
            if state.get(other) == 1:
                cycle.extend([*trail[trail.index(other) :], other] if other in trail else [module, other])
                return True
            if state.get(other) is None and visit(other, [*trail, other]):
                return True
        state[module] = 2
        return False

    for module in sorted(graph):
        if state.get(module) is None and visit(module, [module]):
            break
    assert not cycle, " -> ".join(cycle)
