"""Tests of :mod:`lrnnkit.precision` (the layout: proofs_tests/test_layout.py)."""
