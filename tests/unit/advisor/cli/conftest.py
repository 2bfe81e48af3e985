"""Run `servops` in-process and capture what a user sees: exit code, stdout, stderr."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from advisor.cli.main import main


@dataclass
class Outcome:
    code: int
    out: str
    err: str

    @property
    def error_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.strip()]

    def assert_one_line_error(self, command: str, *mentions: str) -> str:
        """Exit 2, exactly one stderr line `servops <command>: error: …` naming `mentions`, no traceback."""
        assert self.code == 2, (self.code, self.err)
        assert "Traceback" not in self.err + self.out
        lines = [line for line in self.error_lines if line.startswith(f"servops {command}:")]
        assert len(lines) == 1, self.err  # progress lines (ramp's steps) may come before it
        assert lines[0] == self.error_lines[-1] and lines[0].startswith(f"servops {command}: error: "), lines
        for mention in mentions:
            assert mention in lines[0], (mention, lines[0])
        return lines[0]


@pytest.fixture
def servops(capsys):
    def run(*argv: str) -> Outcome:
        try:
            code = main(list(argv))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
        captured = capsys.readouterr()
        return Outcome(int(code), captured.out, captured.err)

    return run
