"""Tests of :mod:`lrnnkit.constructions` (the layout: proofs_tests/test_layout.py)."""
