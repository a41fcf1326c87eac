"""``lrnnkit extract`` as its module runs it (lrnnkit.cli.extract on the command line parsed by
lrnnkit.cli), on a compiled model (no training needed): the report, the files written, and the range checks of
its numbers before any work."""
import pytest

pytest.importorskip("torch")

import lrnnkit as L  # noqa: E402
from lrnnkit.automata import minimize  # noqa: E402
from lrnnkit.errors import InputError  # noqa: E402
from lrnnkit.cli.extract import run  # noqa: E402
from lrnnkit.cli import build_parser  # noqa: E402


@pytest.fixture(scope="module")
def parity_model(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("m") / "parity.json")
    L.compile(L.load_source("parity")).save(path)
    return path


def test_extract_reports_and_writes(parity_model, tmp_path, capsys):
    out, dot = str(tmp_path / "e.json"), str(tmp_path / "e.dot")
    args = build_parser().parse_args(["extract", parity_model, "--max-words", "100", "-o", out, "--dot", dot])
    assert run(args) == 0
    text = capsys.readouterr().out
    assert "isomorphic: yes" in text and f"wrote {out}" in text and f"wrote {dot}" in text
    parity = minimize(L.load_source("parity"))
    assert minimize(L.load_source(out)) == parity == minimize(L.load_source(dot))


@pytest.mark.parametrize("flag,value", [("--max-words", "0"), ("--max-length", "20000"), ("--seed", "-1"),
                                        ("--max-states", "0"), ("--max-rounds", "0"), ("--random-steps", "-1")])
def test_numbers_are_range_checked(parity_model, flag, value):
    with pytest.raises(InputError, match=flag):
        run(build_parser().parse_args(["extract", parity_model, flag, value]))


def test_extract_refuses_to_report_one_file_written_twice(tmp_path):
    """`extract -o F --dot F` wrote F twice (the DOT replaced the JSON) and reported both: refused first."""
    f = tmp_path / "a.json"
    a = build_parser().parse_args(["extract", str(tmp_path / "none"), "-o", str(f), "--dot",
                                   str(tmp_path / "." / "a.json")])
    with pytest.raises(InputError, match="-o and --dot name the same file"):
        run(a)
    assert not f.exists()
