"""Tests of :mod:`lrnnkit.kernels` (the layout: proofs_tests/test_layout.py)."""
