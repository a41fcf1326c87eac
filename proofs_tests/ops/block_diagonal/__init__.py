"""Tests of :mod:`lrnnkit.ops.block_diagonal` (the layout: proofs_tests/test_layout.py)."""
