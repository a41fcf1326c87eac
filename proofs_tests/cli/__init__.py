"""Tests of :mod:`lrnnkit.cli` (the layout: proofs_tests/test_layout.py)."""
