"""FSA files: round trips, the friendlier dict form, and every kind of bad input (InputError naming it)."""
import json
import os

import numpy as np
import pytest
from hypothesis import given

from lrnnkit.automata.fsa import FSA
from lrnnkit.automata.io import fsa_from_json, load_fsa, save_fsa
from lrnnkit.errors import InputError
from lrnnkit.testing.strategies import fsas
from proofs_tests._paths import REPO


@given(fsas(max_states=7, max_letters=4))
def test_json_round_trip(tmp_path_factory, f):
    path = tmp_path_factory.mktemp("io") / "a.json"
    save_fsa(f, path)
    g = load_fsa(path)
    assert g == f
    assert g.to_dict() == f.to_dict()
    assert g.content_hash() == f.content_hash()


@given(fsas(max_states=5, max_letters=3, n_labels=None))
def test_round_trip_keeps_accepting_and_names(tmp_path_factory, f):
    acc = frozenset(q for q in range(f.n_states) if q % 2 == 0)
    names = tuple(f"s{q}" for q in range(f.n_states))
    f2 = FSA(f.alphabet, f.delta, f.start, acc, None, names, "named")
    path = tmp_path_factory.mktemp("io") / "b.json"
    save_fsa(f2, path)
    g = load_fsa(path)
    assert g.accepting == acc and g.state_names == names and g.name == "named"
    assert g.outputs == f2.outputs


def test_save_is_atomic_and_leaves_no_temp(tmp_path):
    f = FSA(("a",), [[0]], name="one")
    save_fsa(f, tmp_path / "x.json")
    assert sorted(os.listdir(tmp_path)) == ["x.json"]
    # a failing write leaves the old file intact and no temporary file behind
    class Boom:
        def to_dict(self):
            raise RuntimeError("boom")
    with pytest.raises(RuntimeError):
        save_fsa(Boom(), tmp_path / "x.json")
    assert sorted(os.listdir(tmp_path)) == ["x.json"]
    assert load_fsa(tmp_path / "x.json") == f


def test_dict_form_equals_table_form():
    table = {"alphabet": ["a", "b"], "delta": [[1, 0], [0, 1]], "labels": ["x", "y"]}
    mapping = {"alphabet": ["a", "b"], "delta": {"0": {"a": 1, "b": 0}, "1": {"b": 1, "a": 0}},
               "labels": ["x", "y"]}
    named = {"alphabet": ["a", "b"], "state_names": ["even", "odd"], "start": "even",
             "delta": {"even": {"a": "odd", "b": "even"}, "odd": {"a": "even", "b": "odd"}}, "labels": ["x", "y"]}
    f1, f2, f3 = (fsa_from_json(json.dumps(d)) for d in (table, mapping, named))
    assert f1 == f2 == f3
    assert f1.delta.tolist() == [[1, 0], [0, 1]]


BAD = [
    ("{not json", "malformed JSON"),
    ("[1, 2]", "expected a JSON object"),
    ('{"alphabet": [], "delta": [[0]]}', "empty alphabet"),
    ('{"alphabet": "ab", "delta": [[0]]}', "alphabet must be a list"),
    ('{"alphabet": [1], "delta": [[0]]}', "must be strings"),
    ('{"alphabet": ["a", "a"], "delta": [[0, 0]]}', "duplicate"),
    ('{"alphabet": ["a b"], "delta": [[0]]}', "white space"),
    ('{"alphabet": ["a"]}', "missing key 'delta'"),
    ('{"alphabet": ["a"], "delta": []}', "delta is empty"),
    ('{"alphabet": ["a", "b"], "delta": [[0]]}', "missing transitions"),
    ('{"alphabet": ["a"], "delta": [[1]]}', "out of range"),
    ('{"alphabet": ["a"], "delta": [[-1]]}', "out of range"),
    ('{"alphabet": ["a"], "delta": [["0"]]}', "not a state index"),
    ('{"alphabet": ["a"], "delta": [[true]]}', "not a state index"),
    ('{"alphabet": ["a"], "delta": [[0.0]]}', "not a state index"),
    ('{"alphabet": ["a"], "delta": [[[0, 0]]]}', "nondeterministic"),
    ('{"alphabet": ["a"], "delta": [[0]], "start": 3}', "start state 3 out of range"),
    ('{"alphabet": ["a"], "delta": [[0]], "states": 2}', "states = 2"),
    ('{"alphabet": ["a"], "delta": [[0]], "accepting": [5]}', "accepting state 5"),
    ('{"alphabet": ["a"], "delta": [[0]], "labels": ["x", "y"]}', "2 labels for 1 states"),
    ('{"alphabet": ["a"], "delta": [[0]], "version": 2}', "unsupported version"),
    ('{"alphabet": ["a"], "delta": [[0]], "format": "other"}', "format is 'other'"),
    ('{"alphabet": ["a"], "delta": [[0]], "colour": 1}', "unknown keys ['colour']"),
    ('{"alphabet": ["a"], "delta": {"0": {"b": 0}}}', "unknown symbol 'b'"),
    ('{"alphabet": ["a", "b"], "delta": {"0": {"a": 0}}}', "missing transition from state 0 on symbol 'b'"),
    ('{"alphabet": ["a"], "delta": {"0": {"a": 0, "a": 0}}}', "appears twice"),
    ('{"alphabet": ["a"], "delta": {"0": {"a": [0, 1]}, "1": {"a": 0}}}', "nondeterministic"),
    ('{"alphabet": ["a"], "delta": {"0": {"a": 7}}}', "out of range"),
    ('{"alphabet": ["a"], "delta": {"zz": {"a": 0}}}', "not a state index"),
    ('{"alphabet": ["a"], "delta": 5}', "delta must be"),
]


@pytest.mark.parametrize("text,msg", BAD)
def test_bad_files_are_input_errors_naming_problem_and_file(tmp_path, text, msg):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        load_fsa(path)
    assert msg in str(info.value)
    assert str(path) in str(info.value)


def test_save_to_missing_directory_is_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot write"):
        save_fsa(FSA(("a",), [[0]]), tmp_path / "no" / "such" / "dir.json")


def test_model_file_is_named_as_wrong_format(tmp_path):
    p = tmp_path / "model.json"
    p.write_text('{"format": "lrnnkit.model", "version": 1, "layers": []}')
    with pytest.raises(InputError, match="format is 'lrnnkit.model'"):
        load_fsa(p)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        load_fsa(tmp_path / "nope.json")
    with pytest.raises(InputError, match="directory"):
        load_fsa(tmp_path)


def test_load_names_automaton_after_file(tmp_path):
    p = tmp_path / "mine.json"
    p.write_text('{"alphabet": ["a"], "delta": [[0]]}')
    assert load_fsa(p).name == "mine"


def test_example_files_load():
    here = os.path.join(REPO, "examples")
    files = [f for f in os.listdir(here) if f.endswith(".json")] if os.path.isdir(here) else []
    fsa_files = [f for f in files if json.load(open(os.path.join(here, f))).get("format", "lrnnkit.fsa")
                 == "lrnnkit.fsa"]
    assert fsa_files, "examples/ should contain FSA files for new users"
    for f in fsa_files:
        a = load_fsa(os.path.join(here, f))
        assert a.n_states >= 1 and isinstance(a.delta, np.ndarray)
