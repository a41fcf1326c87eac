"""The old path of the command line's parser (lrnnkit.parser) keeps working for one release: it gives
:func:`lrnnkit.cli.build_parser` itself, with a DeprecationWarning naming the new home."""
import sys

import pytest


def test_the_old_parser_path_warns():
    from lrnnkit.cli import build_parser
    sys.modules.pop("lrnnkit.parser", None)
    with pytest.warns(DeprecationWarning, match="lrnnkit.cli.build_parser"):
        import lrnnkit.parser as old
    assert old.build_parser is build_parser
