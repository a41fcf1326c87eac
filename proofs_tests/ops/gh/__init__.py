"""Tests of :mod:`lrnnkit.ops.gh` (the layout: proofs_tests/test_layout.py)."""
