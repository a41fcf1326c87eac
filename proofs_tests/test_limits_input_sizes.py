"""Every size in an input is bounded before the work that grows with it, and refused on one line without being
echoed whole: names (symbols, state names, labels, automaton names: MAX_NAME_CHARS), JSON integer literals
(MAX_NUMBER_CHARS digits, not Python's advice on sys.set_int_max_str_digits), task-name arguments
(``S5-100000000000000000000tok``, ``sum:M`` with M x M past MAX_TRANSITIONS) and task names that would leave only
the identity letter (``Z3-swaps``); a duplicate JSON key in an automaton file's own fields is not called
nondeterminism."""
from __future__ import annotations

import json

import pytest

from lrnnkit import limits
from lrnnkit.automata.fsa import FSA
from lrnnkit.automata.io import fsa_from_json
from lrnnkit.cli import main
from lrnnkit.errors import InputError, SizeLimitError
from lrnnkit.learn.tasks import make_task


@pytest.mark.parametrize("field", ["alphabet", "state_names", "labels", "name"])
def test_a_ten_megabyte_name_is_refused_without_being_echoed(tmp_path, capsys, field):
    big = "x" * 10_000_000
    doc = {"alphabet": ["a"], "delta": [[0]], "start": 0, "labels": ["0"], "state_names": ["q"], "name": "n"}
    doc[field] = [big] if field != "name" else big
    p = tmp_path / "f.json"
    p.write_text(json.dumps(doc))
    assert main(["info", str(p)]) == 2
    err = capsys.readouterr().err
    assert "MAX_NAME_CHARS" in err and "(10000000 characters)" in err and len(err) < 400 and err.count("\n") == 1
    with pytest.raises(SizeLimitError, match="longer than"):
        FSA(("a" * (limits.MAX_NAME_CHARS + 1),), [[0]])
    assert FSA(("a" * limits.MAX_NAME_CHARS,), [[0]]).n_letters == 1


def test_a_5000_digit_integer_literal_names_the_limit():
    text = '{"alphabet": ["a"], "delta": [[0]], "start": ' + "9" * 5000 + "}"
    with pytest.raises(SizeLimitError, match="an integer literal of 5000 digits.*MAX_NUMBER_CHARS") as e:
        fsa_from_json(text, "f.json")
    assert "set_int_max_str_digits" not in str(e.value)


@pytest.mark.parametrize("text, top", [('{"alphabet": ["a"], "start": 0, "start": 0, "delta": [[0]]}', True),
                                       ('{"alphabet": ["a"], "delta": {"0": {"a": 0, "a": 0}}}', False)])
def test_duplicate_keys_say_what_they_are(text, top):
    with pytest.raises(InputError, match="appears twice") as e:
        fsa_from_json(text, "f.json")
    assert ("nondeterministic" in str(e.value)) is not top


@pytest.mark.parametrize("name, needle", [
    ("S5-100000000000000000000tok", "bad tokens per letter '100000000000000000000'.*1..64"),
    ("S5-65tok", "1..64"),
    ("Z3-swaps", "train on the identity letter alone"),
    ("Z3-3perm", None),
    ("sum:99999999999", "1..1414"),
    ("sum:" + "9" * 5000, r"\(5000 characters\)"),
])
def test_task_name_arguments_are_bounded(name, needle):
    if needle is None:
        assert make_task(name).n_in == 4          # Z3's three letters (each moves 3 points) and the padding
        return
    with pytest.raises(InputError, match=needle):
        make_task(name)


@pytest.mark.parametrize("value", ["false", "true", 0, 1, None])
def test_sweep_booleans_are_booleans(value):
    """``renorm = "false"`` in a spec was truthy: it ran with renormalisation on."""
    from lrnnkit.sweep.jobs import get_job
    point = {"source": "parity", "format": "bf16", "renorm": value}
    with pytest.raises(InputError, match="'renorm' must be true or false"):
        get_job("collapse").validate(point, "spec")
    get_job("collapse").validate({**point, "renorm": False}, "spec")
