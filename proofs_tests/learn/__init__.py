"""Tests of :mod:`lrnnkit.learn` (the layout: proofs_tests/test_layout.py)."""
