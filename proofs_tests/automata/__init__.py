"""Tests of :mod:`lrnnkit.automata` (the layout: proofs_tests/test_layout.py)."""
