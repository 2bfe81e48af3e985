"""Shared helpers for the advisor tests."""

from pathlib import Path

DATA_DIR = Path(__file__).parent / "data"
