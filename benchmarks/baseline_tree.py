"""Run a benchmark's reading at another commit of this repository, for a baseline in the same run.

Why shared: a figure for triage's reader means something only beside the same figure for the reader before a
change, on the same machine and input. Each script (release_lines.py, catalog_alone.py) computes its result with a
function of its own; this runs that function in a temporary `git worktree` of the commit, with the worktree's own
packages first on PYTHONPATH, and returns what it printed as JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def at_revision(revision: str, statement: str) -> Any:
    """The JSON that `statement` (Python, run with this folder importable) prints, with the code at `revision`."""
    with tempfile.TemporaryDirectory(prefix="servops-baseline-") as tmp:
        tree = Path(tmp) / "tree"
        added = subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), revision],
            capture_output=True,
            text=True,
        )
        if added.returncode != 0:
            reason = added.stderr.strip() or "git refused it"
            print(
                f"--baseline {revision}: not a commit of this repository ({reason}); pass a commit id or tag that "
                "`git log` shows",
                file=sys.stderr,
            )
            raise SystemExit(2)
        try:
            env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
            script = f"import json, sys; sys.path.insert(0, sys.argv[1]); {statement}"
            done = subprocess.run(
                [sys.executable, "-c", script, str(ROOT / "benchmarks")],
                env=env,
                cwd=tree,
                capture_output=True,
                text=True,
                check=True,
            )
            return json.loads(done.stdout)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)
