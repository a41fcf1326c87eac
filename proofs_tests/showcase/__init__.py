"""Tests of :mod:`lrnnkit.showcase` (the layout: proofs_tests/test_layout.py)."""
