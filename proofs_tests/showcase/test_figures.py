"""The documentation's static pictures are drawn from lrnnkit's own objects (lrnnkit.showcase.figures): the number
lines show each format's value set, and ``write_all`` writes the three files the docs include."""
import os

from lrnnkit.precision.formats import get_format
from lrnnkit.showcase.figures import NUMBER_LINE_FORMATS, number_lines_figure, write_all
from proofs_tests._paths import REPO


def test_number_lines_count_the_values_in_one_binade():
    fig = number_lines_figure()
    left, right = fig.axes
    counts = [t.get_text() for t in right.texts]
    assert counts == [str(2 ** get_format(n).man_bits) for n in NUMBER_LINE_FORMATS]   # 2^m values in [1, 2)
    for n, t in zip(NUMBER_LINE_FORMATS, left.texts):
        v = get_format(n).all_values()
        assert t.get_text().startswith(f"{int((v > 0).sum())} values")


def test_write_all_writes_what_the_docs_include(tmp_path):
    paths = write_all(str(tmp_path))
    names = sorted(os.path.basename(p) for p in paths)
    assert names == ["formats_number_lines.png", "krohn_rhodes_wiring.png", "theorem1_trajectories.png"]
    docs = "".join(open(os.path.join(REPO, "docs", f), encoding="utf-8").read()
                   for f in ("formats.rst", "algorithms.rst", "concepts.rst"))
    for n in names:
        assert (tmp_path / n).stat().st_size > 5000 and f"_static/{n}" in docs
        assert os.path.isfile(os.path.join(REPO, "docs", "_static", n))
