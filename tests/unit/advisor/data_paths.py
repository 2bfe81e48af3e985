"""Where the advisor tests' sample files live (see data/README.md for their sources)."""

from pathlib import Path

DATA_DIR = Path(__file__).parent / "data"
