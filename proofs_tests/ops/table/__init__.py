"""Tests of :mod:`lrnnkit.ops.table` (the layout: proofs_tests/test_layout.py)."""
