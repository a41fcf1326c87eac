"""Tests of :mod:`lrnnkit.sweep` (the layout: proofs_tests/test_layout.py)."""
