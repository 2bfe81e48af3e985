"""The `servops` entry point: version, help, and the one error style."""

import subprocess
import sys

from advisor import __version__
from advisor.cli.main import main


def test_version_prints_the_package_version(capsys):
    try:
        main(["--version"])
    except SystemExit as exit_:
        assert exit_.code == 0
    assert __version__ in capsys.readouterr().out


def test_unknown_subcommand_is_one_line_and_exit_2():
    proc = subprocess.run([sys.executable, "-m", "advisor", "no-such-command"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "no-such-command" in proc.stderr
