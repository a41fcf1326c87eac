"""Tests of :mod:`lrnnkit.layers` (the layout: proofs_tests/test_layout.py)."""
