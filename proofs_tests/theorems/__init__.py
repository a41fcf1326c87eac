"""Tests of :mod:`lrnnkit.theorems` (the layout: proofs_tests/test_layout.py)."""
