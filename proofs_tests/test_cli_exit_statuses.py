"""One exit-status convention across the verbs (docs/cli.rst, "Exit statuses and errors"): 0 success, 1 a negative
answer, 2 bad input, 3 an internal error; and the flag names that mean one thing everywhere."""
import json
import os
import re

import pytest

from lrnnkit.cli import main
from lrnnkit.errors import EXIT_STATUSES
from ._paths import REPO
from .test_limits import parity_model  # noqa: F401  (a fixture: the compiled parity model)


def cli(capsys, *argv):
    rc = main([str(x) for x in argv])
    out, err = capsys.readouterr()
    return rc, out, err



def test_the_four_statuses(capsys, parity_model, tmp_path, monkeypatch):
    rc, out, _ = cli(capsys, "verify", parity_model)
    assert rc == 0 and out.startswith("CERTIFIED")
    # the parity automaton with its two labels swapped: the model is right for parity, so wrong for this one
    swapped = tmp_path / "swapped.json"
    swapped.write_text(json.dumps({"format": "lrnnkit.fsa", "version": 1, "alphabet": ["0", "1"], "states": 2,
                                   "start": 0, "delta": [[0, 1], [1, 0]], "labels": ["1", "0"]}))
    rc, out, err = cli(capsys, "verify", parity_model, "--source", swapped)
    assert rc == 1 and out.startswith("NOT certified") and not err
    rc, _, err = cli(capsys, "verify", tmp_path / "missing.json")
    assert rc == 2 and err.startswith("lrnnkit: error:") and "missing.json" in err and len(err.splitlines()) == 1
    import lrnnkit.cli as C
    monkeypatch.setitem(C.VERBS, "verify", lambda a: 1 // 0)
    rc, _, err = cli(capsys, "verify", parity_model)
    assert rc == 3 and err.startswith("lrnnkit: internal error: ZeroDivisionError") and "Traceback" not in err


def test_an_unknown_symbol_is_bad_input_not_a_negative_answer(capsys, parity_model):
    rc, out, err = cli(capsys, "run", parity_model, "--word", "0 2")
    assert rc == 2 and "'2'" in err and not out


def test_the_statuses_are_documented():
    doc = open(os.path.join(REPO, "docs", "cli.rst"), encoding="utf-8").read()
    sec = doc[doc.index("Exit statuses and errors"):]
    for code in EXIT_STATUSES:
        assert re.search(rf"(^|\D){code}(\D|$)", sec), code
    readme = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()
    assert "3 an internal error" in readme and "1 a negative answer" in readme
    assert len(set(EXIT_STATUSES)) == len(EXIT_STATUSES) == 8


def test_collapse_length_flag_and_its_old_name(capsys, parity_model):
    rc, out, err = cli(capsys, "precision", "collapse", parity_model, "--format", "bf16", "--length", "50", "--json")
    assert rc == 0 and json.loads(out)["steps"] == 50 and not err
    rc, out2, err = cli(capsys, "precision", "collapse", parity_model, "--format", "bf16", "--steps", "50", "--json")
    assert rc == 0 and out2 == out and "now --length" in err


@pytest.mark.parametrize("short,long", [("bf16", "bfloat16"), ("fp16", "float16"), ("fp32", "float32")])
def test_format_names_are_the_same_in_every_verb(capsys, parity_model, short, long):
    """``run --dtype`` and ``precision --format`` accept both spellings, with the same result."""
    outs = []
    for name in (short, long):
        rc, out, _ = cli(capsys, "run", parity_model, "--word", "1101", "--backend", "torch", "--dtype", name, "--json")
        assert rc == 0
        outs.append(json.loads(out)["outputs"])
        rc, out, _ = cli(capsys, "precision", "cast", "0.1", "--format", name, "--json")
        assert rc == 0
        outs.append(json.loads(out)["outputs"])
    assert outs[0] == outs[2] and outs[1] == outs[3]


def test_compile_prints_a_summary_and_dash_writes_the_model(capsys, tmp_path, monkeypatch):
    """Without -o, ``compile`` prints one summary line (the S5 model's JSON is tens of thousands of lines);
    ``-o -`` puts the model JSON on stdout (the summary on stderr), and it loads and certifies like a file."""
    rc, out, err = cli(capsys, "compile", "group:S5")
    assert rc == 0 and len(out.splitlines()) == 1 and "not written" in out and "widths [5]" in out
    rc, out, err = cli(capsys, "compile", "group:S3", "-o", "-")
    assert rc == 0 and "compiled group:S3" in err
    path = tmp_path / "s3.json"
    path.write_text(out)
    assert cli(capsys, "verify", path)[0] == 0
    monkeypatch.chdir(tmp_path)
    rc, _, err = cli(capsys, "compile", "parity", "--explain", "-o", "-")
    assert rc == 2 and "give -o a file name" in err and not (tmp_path / "-").exists()
