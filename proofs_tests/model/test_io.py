"""The model file format (lrnnkit.model.io; docs/model_format.rst): a model saved as JSON, inline or with its float
arrays in safetensors, loads back to the same document and still certifies; a malformed or tampered document is
refused with one clear line (InputError), never half-loaded."""
import json

import pytest

from lrnnkit.certify import certify
from lrnnkit.errors import InputError
from lrnnkit.model.io import SCHEMA, VERSION, read_document, save_model
from lrnnkit.model.ir import Model
from proofs_tests.test_certify import rotation_model


def test_saved_document_names_its_format_and_nothing_else_is_left(tmp_path):
    """save_model writes {"format": SCHEMA, "version": VERSION, ...} atomically: no temporary file stays beside it,
    and read_document returns that document (no arrays when inline)."""
    _, M = rotation_model(4)
    p = tmp_path / "m.json"
    save_model(M, p, safetensors=False)
    assert sorted(x.name for x in tmp_path.iterdir()) == ["m.json"]
    doc, arrays = read_document(p)
    assert (doc["format"], doc["version"], arrays) == (SCHEMA, VERSION, None)
    assert doc == json.loads(json.dumps(M.to_json()))


def test_model_json_and_safetensors_round_trip(tmp_path):
    fsa, M = rotation_model(5)
    for st_flag in (False, True):
        p = tmp_path / f"m{st_flag}.json"
        M.save(p, safetensors=st_flag)
        M2 = Model.load(p)
        assert (tmp_path / f"m{st_flag}.safetensors").exists() == st_flag
        assert json.dumps(M2.to_json()) == json.dumps(M.to_json())
        assert certify(M2, fsa).certified


@pytest.mark.parametrize("mutate, msg", [
    (lambda d: d.update(format="other"), "not an lrnnkit model"),
    (lambda d: d.update(version=99), "unsupported model version"),
    (lambda d: d["layers"][0].update(kind="weird"), "unknown kind"),
    (lambda d: d["layers"][0].update(width=3), "shape"),
    (lambda d: d["layers"][0]["transitions"][0].update(A=[[1, 0], [0, float("nan")]]), "NaN"),
    (lambda d: d["layers"][0]["input_map"].update(table=[0]), "table has 1 entries"),
    (lambda d: d["readout"].update(reads=[[5, 0]]), "not the input or a layer below"),
    (lambda d: d.pop("layers"), "missing field"),
    (lambda d: d["layers"][0]["transitions"][1]["factors"][0].update(beta_exact={"cyc": 5, "c": ["1"]}), "phi"),
    # found by the CLI fuzz test: `lrnnkit export --to fla` then failed on len() of a number
    (lambda d: d["layers"][0].update(symbol_names=1), "symbol_names must be a list of strings"),
    (lambda d: d["layers"][0].update(coords=["x", 2]), "coords must be a list of strings"),
    # found by the CLI fuzz test: `lrnnkit verify` then failed on provenance.get() of a bool
    (lambda d: d.update(provenance=True), "provenance must be a JSON object"),
    (lambda d: d.update(notes=[1]), "notes must be a JSON object"),
])
def test_malformed_models_are_rejected_with_a_clear_message(tmp_path, mutate, msg):
    _, M = rotation_model(3)
    d = M.to_json()
    mutate(d)
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(d))
    with pytest.raises(InputError, match=msg):
        Model.load(p)


def test_not_json(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("{nope")
    with pytest.raises(InputError, match="not valid JSON"):
        Model.load(p)
