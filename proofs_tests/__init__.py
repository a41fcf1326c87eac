"""lrnnkit's test suite; its layout mirrors the package (the rule and its exceptions: test_layout.py).

A package, so that test files of the same name in different folders (``constructions/test_fixed_point.py``,
``layers/test_fixed_point.py``) are distinct modules (``proofs_tests.constructions.test_fixed_point``, ...), and the
shared helpers are imported by their full name (``from proofs_tests._models import one_hot_model``)."""
