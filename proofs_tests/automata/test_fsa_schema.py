"""The published JSON Schema of the automaton format (lrnnkit/data/fsa.schema.json) agrees with lrnnkit's own
reader: every document the reader accepts is valid under the schema, and each structural defect the schema can
express is refused by both (the reader's one-line messages say more: which field, which state)."""
import copy
import json
import os

import pytest
from hypothesis import given, settings

from lrnnkit.automata.io import fsa_from_dict
from lrnnkit.automata.sources import load_source
from lrnnkit.errors import InputError
from lrnnkit.testing.strategies import fsas
from proofs_tests._paths import REPO

jsonschema = pytest.importorskip("jsonschema")
SCHEMA = json.load(open(os.path.join(REPO, "lrnnkit", "data", "fsa.schema.json"), encoding="utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def test_the_schema_is_a_valid_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@settings(max_examples=40, deadline=None)
@given(fsas(max_states=6, max_letters=4, n_labels=3))
def test_what_lrnnkit_writes_is_valid(f):
    doc = json.loads(json.dumps(f.to_dict()))
    VALIDATOR.validate(doc)
    assert fsa_from_dict(doc) == f


def test_examples_and_presets_are_valid():
    docs = [json.load(open(os.path.join(REPO, "examples", x), encoding="utf-8"))
            for x in sorted(os.listdir(os.path.join(REPO, "examples"))) if x.endswith(".json")]
    docs += [load_source(s).to_dict() for s in ("even-pairs", "mod-arith:3", "group:S3", "regex:a(b|c)*")]
    assert len(docs) >= 8
    for d in docs:
        VALIDATOR.validate(json.loads(json.dumps(d)))
        fsa_from_dict(d)


BASE = {"format": "lrnnkit.fsa", "version": 1, "alphabet": ["0", "1"], "delta": [[0, 1], [1, 0]],
        "labels": ["even", "odd"]}


@pytest.mark.parametrize("change", [
    lambda d: d.pop("alphabet"), lambda d: d.pop("delta"), lambda d: d.update(alphabet=[]),
    lambda d: d.update(alphabet=["0", "0"]), lambda d: d.update(alphabet=["0", "a b"]),
    lambda d: d.update(alphabet=["0", 1]), lambda d: d.update(format="lrnnkit.model"),
    lambda d: d.update(version=2), lambda d: d.update(extra=1), lambda d: d.update(delta=[]),
    lambda d: d.update(delta="01"), lambda d: d.update(delta=[[0, -1], [1, 0]]), lambda d: d.update(start=-1),
    lambda d: d.update(states=0), lambda d: d.update(name=3), lambda d: d.update(state_names=["a", "a"]),
    lambda d: d.update(delta=[[0, [0, 1]], [1, 0]]), lambda d: d.update(labels="ab"),
])
def test_structural_defects_refused_by_both(change):
    d = copy.deepcopy(BASE)
    VALIDATOR.validate(d)
    change(d)
    assert not VALIDATOR.is_valid(d)
    with pytest.raises(InputError):
        fsa_from_dict(d)
