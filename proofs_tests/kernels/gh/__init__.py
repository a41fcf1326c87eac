"""Tests of :mod:`lrnnkit.kernels.gh` (the layout: proofs_tests/test_layout.py)."""
