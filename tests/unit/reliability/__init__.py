"""Issue #17: every bad input a clear error, no result lost, no secret copied (one module per class)."""
