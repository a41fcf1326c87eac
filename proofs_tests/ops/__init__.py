"""Tests of :mod:`lrnnkit.ops` (the layout: proofs_tests/test_layout.py)."""
