"""Where the tests find the repository's files, wherever the test file sits in proofs_tests/."""
import os

TESTS = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(TESTS)
DATA = os.path.join(TESTS, "data")
