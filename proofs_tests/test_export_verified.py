"""``export --to fla`` exports only what ``verify`` certifies: a model whose float weights contradict its exact ones,
or one with a wrong readout (consistent weights, wrong answers), is refused in one line, exit 2, and nothing is
written; a certified model exports as before."""
from __future__ import annotations

import json
import os

import pytest

import lrnnkit as L
from lrnnkit.cli import main
from lrnnkit.errors import InputError
from lrnnkit.export import export_fla
from lrnnkit.model import Model


@pytest.fixture(scope="module")
def s3_doc():
    return L.compile(L.load_source("group:S3")).to_json()


def _swap_float_rows(doc):
    A = doc["layers"][0]["transitions"][1]["A"]
    A[0], A[1] = A[1], A[0]


def _wrong_readout(doc):
    doc["readout"]["table"] = doc["readout"]["table"][::-1]


@pytest.mark.parametrize("tamper, needle", [(_swap_float_rows, "contradicts itself"),
                                            (_wrong_readout, "is not certified")])
def test_export_refuses_what_verify_rejects(tmp_path, capsys, s3_doc, tamper, needle):
    doc = json.loads(json.dumps(s3_doc))
    tamper(doc)
    mp = tmp_path / "m.json"
    mp.write_text(json.dumps(doc))
    assert main(["verify", str(mp)]) == 1
    capsys.readouterr()
    out = tmp_path / "out"
    assert main(["export", str(mp), "--to", "fla", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert needle in err and "not exported" in err and err.count("\n") == 1
    assert not out.exists()
    with pytest.raises(InputError, match=needle):
        export_fla(Model.from_json(doc, "m.json"))
    assert export_fla(Model.from_json(doc, "m.json"), verify=False).layers    # asked for explicitly
    assert main(["export", str(mp), "--to", "fla", "-o", str(out), "--unverified"]) == 0
    assert "without certification" in capsys.readouterr().err and (out / "fla_export.json").is_file()


def test_certified_model_still_exports(tmp_path, capsys, s3_doc):
    mp = tmp_path / "m.json"
    mp.write_text(json.dumps(s3_doc))
    assert main(["export", str(mp), "--to", "fla", "-o", str(tmp_path / "out")]) == 0
    assert os.path.isfile(tmp_path / "out" / "fla_export.json")
    assert main(["export", str(mp), "--to", "fla", "--max-pairs", "0"]) == 2
    assert "--max-pairs must be >= 1, got 0" in capsys.readouterr().err
