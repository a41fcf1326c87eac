"""Tests of :mod:`lrnnkit.kernels.table` (the layout: proofs_tests/test_layout.py)."""
