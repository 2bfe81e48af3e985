"""The engine server sets libgomp's wait policy before PyTorch loads it (engine/api/omp_wait.py).

The unit cases hold the rule (the user's choice wins, nothing is set once torch is loaded); the
subprocess case asks libgomp itself, through OMP_DISPLAY_ENV, what it initialised with when
`python -m engine serve`'s order of steps is followed: the policy first, then `import torch`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from engine.api import omp_wait


@pytest.fixture
def torch_not_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "torch", raising=False)


def test_unset_environment_gets_a_bounded_spin_and_the_line_says_how_to_override(torch_not_loaded):
    environ: dict[str, str] = {}
    line = omp_wait.apply_server_wait_policy(environ)
    assert environ == {"GOMP_SPINCOUNT": "10000"}
    assert "GOMP_SPINCOUNT=10000" in line and "OMP_WAIT_POLICY" in line


@pytest.mark.parametrize(
    "user", [{"OMP_WAIT_POLICY": "ACTIVE"}, {"GOMP_SPINCOUNT": "10000"}, {"OMP_WAIT_POLICY": "passive"}]
)
def test_a_wait_policy_or_spin_count_the_user_set_is_kept(torch_not_loaded, user: dict[str, str]):
    environ = dict(user)
    line = omp_wait.apply_server_wait_policy(environ)
    assert environ == user
    for name, value in user.items():
        assert f"{name}={value}" in line and "from the environment" in line


def test_a_blank_setting_counts_as_unset(torch_not_loaded):
    environ = {"OMP_WAIT_POLICY": " "}
    omp_wait.apply_server_wait_policy(environ)
    assert environ["GOMP_SPINCOUNT"] == "10000"


def test_nothing_is_set_once_torch_is_loaded_and_the_line_says_so(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "torch", sys.modules.get("torch") or object())
    environ: dict[str, str] = {}
    line = omp_wait.apply_server_wait_policy(environ)
    assert environ == {}
    assert "libgomp's default" in line and "PyTorch was loaded" in line


def _libgomp_settings(extra_env: dict[str, str]) -> str:
    """What libgomp prints at start-up (OMP_DISPLAY_ENV=VERBOSE) in a fresh interpreter that
    applies the server's policy and then loads torch and runs one parallel op."""
    script = textwrap.dedent(
        """
        import os
        from engine.api.omp_wait import apply_server_wait_policy
        apply_server_wait_policy(os.environ)
        import torch
        torch.ones(1 << 16).sum()
        """
    )
    env = {k: v for k, v in os.environ.items() if k not in (omp_wait.WAIT_POLICY_ENV, omp_wait.SPIN_COUNT_ENV)}
    env.update(OMP_DISPLAY_ENV="VERBOSE", **extra_env)
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120, check=True
    )
    return done.stderr + done.stdout


def test_libgomp_starts_with_the_bounded_spin_when_the_server_sets_it():
    settings = _libgomp_settings({})
    assert "GOMP_SPINCOUNT = '10000'" in settings, settings[-2000:]


def test_libgomp_keeps_the_users_wait_policy():
    settings = _libgomp_settings({"OMP_WAIT_POLICY": "PASSIVE"})
    assert "OMP_WAIT_POLICY = 'PASSIVE'" in settings, settings[-2000:]
    assert "GOMP_SPINCOUNT = '0'" in settings, settings[-2000:]
