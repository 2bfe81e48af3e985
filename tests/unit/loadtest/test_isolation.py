"""Locust (and its gevent monkey-patching) stays inside the load-generator process.

servops and the test session import the controller, the CLI command and the statistics;
none of them may pull in locust or gevent, or every other part would run monkey-patched.
"""

import subprocess
import sys

CONTROLLER_MODULES = [
    "advisor.cli.commands.ramp",
    "loadtest.runner",
    "loadtest.stats",
    "loadtest.knee",
    "loadtest.results",
    "loadtest.records",
    "loadtest.workload",
    "loadtest.server_signals",
]


def test_controller_side_imports_neither_locust_nor_gevent():
    code = (
        "import importlib, sys\n"
        f"for name in {CONTROLLER_MODULES!r}: importlib.import_module(name)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('locust', 'gevent')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_loadtest_imports_nothing_else_of_the_project():
    code = (
        "import importlib, pkgutil, sys, loadtest\n"
        "for m in pkgutil.iter_modules(loadtest.__path__):\n"
        "    if m.name not in ('locust_main', 'user', 'generator'): importlib.import_module('loadtest.' + m.name)\n"
        "ours = {'advisor', 'engine', 'rules', 'reports', 'servops_kernels'}\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & ours))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
