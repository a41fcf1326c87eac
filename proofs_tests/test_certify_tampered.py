"""``verify`` must not certify a model whose float weights, GH factors or layer kinds contradict its
exact weights; all backends execute the same (exactly rounded) weights.

Each tampering is applied to a compiled group:S5 model (householder-permutation: one gh layer, 120
letters of up to 4 reflections), both in memory (library) and in the JSON file (CLI, subprocess)."""
from __future__ import annotations

import copy
import json
import subprocess
import sys

import numpy as np
import pytest

from lrnnkit import certify, compile, load_source
from lrnnkit.errors import InputError
from lrnnkit.executor import run_float
from lrnnkit.model import Model, consistency_problems

CLI = [sys.executable, "-m", "lrnnkit"]


@pytest.fixture(scope="module")
def s5():
    fsa = load_source("group:S5")
    return fsa, compile(fsa)


@pytest.fixture(scope="module")
def s5_doc(s5):
    return s5[1].to_json()


def _swap_rows(doc):
    A = doc["layers"][0]["transitions"][3]["A"]
    A[0], A[1] = A[1], A[0]


def _big_entry(doc):
    doc["layers"][0]["transitions"][3]["A"][0][0] = 1e308


def _decoder_W(doc):
    doc["layers"][0]["decoder"]["W"][0][0] += 5


def _beta3(doc):
    f = doc["layers"][0]["transitions"][3]["factors"][0]
    f["beta"], f["beta_exact"] = 3.0, "3"


def _beta3_float_only(doc):
    doc["layers"][0]["transitions"][3]["factors"][0]["beta"] = 3.0


def _not_unit_key(doc):
    f = doc["layers"][0]["transitions"][3]["factors"][0]
    f["v"] = [2 * x for x in f["v"]]


def _kind_diagonal(doc):
    doc["layers"][0]["kind"] = "diagonal"


def _H0(doc):
    doc["layers"][0]["H0"][0] = -7.0


TAMPERINGS = {
    "swap rows of a float A": (_swap_rows, "not the rounding of the exact"),
    "A[0][0] = 1e308": (_big_entry, "not the rounding of the exact"),
    "decoder W changed": (_decoder_W, "decoder W"),
    "beta = 3 (exact and float)": (_beta3, "outside [0, 2]"),
    "float beta = 3": (_beta3_float_only, "beta"),
    "key not a unit vector": (_not_unit_key, "key"),
    "gh layer relabelled diagonal": (_kind_diagonal, "diagonal layer"),
    "H0 changed": (_H0, "H0"),
}


def test_untampered_model_is_consistent_and_certified(s5):
    fsa, model = s5
    assert consistency_problems(model) == []
    reloaded = Model.from_json(json.loads(json.dumps(model.to_json())))
    assert consistency_problems(reloaded) == []
    assert certify(reloaded, fsa, float_steps=0).certified


@pytest.mark.parametrize("name", list(TAMPERINGS))
def test_tampered_file_is_not_certified(s5, s5_doc, name):
    fsa, _ = s5
    fn, needle = TAMPERINGS[name]
    doc = copy.deepcopy(s5_doc)
    fn(doc)
    model = Model.from_json(doc, "tampered.json")
    cert = certify(model, fsa, float_steps=0)
    assert not cert.certified
    assert cert.method == "consistency"
    assert needle in cert.reason, cert.reason
    assert cert.to_json()["problems"]


def test_in_memory_tampering_after_construction_is_caught(s5):
    fsa, model = s5
    m = Model.from_json(model.to_json())
    m.layers[0].transitions[5].A = m.layers[0].transitions[5].A[[1, 0, 2, 3, 4]]
    cert = certify(m, fsa, float_steps=0)
    assert not cert.certified and "layer 0 symbol 5 A" in cert.reason


def test_backends_execute_the_rounding_of_the_exact_weights(s5, s5_doc):
    """The float arrays of a loaded model are the exact weights rounded (what torch/triton use), whatever the file
    said; so the reference backend and the exact executor agree even on a tampered file."""
    fsa, model = s5
    doc = copy.deepcopy(s5_doc)
    _swap_rows(doc)
    m = Model.from_json(doc)
    assert m.inconsistencies
    for t, t0 in zip(m.layers[0].transitions, model.layers[0].transitions):
        assert np.array_equal(t.A, t0.A)
    words = np.random.default_rng(0).integers(0, 120, size=(2, 300))
    got = np.asarray(m.output_labels, dtype=object)[run_float(m, words).outputs]
    want = np.asarray(fsa.outputs, dtype=object)[fsa.trace_batch(words)]
    assert (got == want).all()


def test_unknown_kind_is_refused(s5_doc):
    doc = copy.deepcopy(s5_doc)
    doc["layers"][0]["kind"] = "weird"
    with pytest.raises(InputError, match="unknown kind 'weird'"):
        Model.from_json(doc, "m.json")


def test_exact_product_of_factors_must_equal_A_exact(s5, s5_doc):
    """A_exact changed consistently with A (both rounded right) but no longer the product of the GH factors."""
    fsa, _ = s5
    doc = copy.deepcopy(s5_doc)
    t = doc["layers"][0]["transitions"][3]
    t["A_exact"][0], t["A_exact"][1] = t["A_exact"][1], t["A_exact"][0]
    t["A"][0], t["A"][1] = t["A"][1], t["A"][0]
    cert = certify(Model.from_json(doc), fsa, float_steps=0)
    assert not cert.certified and "product of its exact GH factors" in cert.reason


# --------------------------------------------------------------------------- the CLI (subprocess)
@pytest.fixture(scope="module")
def tampered_files(tmp_path_factory, s5_doc):
    d = tmp_path_factory.mktemp("tampered")
    paths = {}
    for name in ("swap rows of a float A", "decoder W changed", "beta = 3 (exact and float)", "A[0][0] = 1e308",
                 "gh layer relabelled diagonal"):
        doc = copy.deepcopy(s5_doc)
        TAMPERINGS[name][0](doc)
        p = d / (name.replace(" ", "_").replace("[", "").replace("]", "").replace("=", "").replace("(", "")
                 .replace(")", "") + ".json")
        p.write_text(json.dumps(doc))
        paths[name] = p
    return paths


def test_cli_verify_refuses_each_tampering(tampered_files):
    """One subprocess runs ``lrnnkit verify --json`` on every tampered file (a fresh interpreter per file costs ~5 s
    of import time on the CI machine); each must exit 1 with the reason in the JSON."""
    code = ("import json, sys\nfrom contextlib import redirect_stdout\nimport io\nfrom lrnnkit.cli import main\n"
            "out = {}\n"
            "for p in sys.argv[1:]:\n"
            "    buf = io.StringIO()\n"
            "    with redirect_stdout(buf):\n"
            "        rc = main(['verify', p, '--json'])\n"
            "    out[p] = [rc, json.loads(buf.getvalue())]\n"
            "print(json.dumps(out))\n")
    r = subprocess.run([sys.executable, "-c", code] + [str(p) for p in tampered_files.values()],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    for name, p in tampered_files.items():
        rc, cert = res[str(p)]
        assert rc == 1, name
        assert cert["certified"] is False and cert["method"] == "consistency" and cert["reason"], name


def test_cli_verify_text_names_the_reason(tampered_files, capsys):
    from lrnnkit.cli import main
    rc = main(["verify", str(tampered_files["swap rows of a float A"])])
    out = capsys.readouterr().out
    assert rc == 1
    assert out.startswith("NOT certified (consistency)") and "layer 0 symbol 3 A" in out


def test_long_searches_report_progress_and_close_it(s5, monkeypatch):
    """The exact search feeds a progress bar (tqdm on a terminal, after 2 s) and closes it, on both searches."""
    C = sys.modules["lrnnkit.certify"]     # (lrnnkit.certify the attribute is the function)
    seen = []

    class Bar:
        n = 0

        def update(self, k):
            self.n += k
            seen.append(self.n)

        def close(self):
            seen.append("closed")

    monkeypatch.setattr(C, "_progress", lambda desc: Bar())
    fsa, model = s5
    for vec in (True, False):
        seen.clear()
        assert C.certify(model, fsa, float_steps=0, vectorized=vec).certified
        assert seen[-1] == "closed" and seen[-2] == 120    # all 120 reachable pairs counted


def test_reference_and_torch_backends_agree_on_a_tampered_file(s5_doc):
    """Same weights in every backend: on a file whose float A was tampered with, the float64 reference executor and
    the torch backend (which rounds the exact weights) give the same outputs, equal to the exact executor's."""
    from lrnnkit.executor import run_exact
    from lrnnkit.layers import run_model
    doc = copy.deepcopy(s5_doc)
    _swap_rows(doc)
    _decoder_W(doc)
    m = Model.from_json(doc)
    words = np.random.default_rng(1).integers(0, 120, size=(1, 200))
    ref = run_float(m, words).outputs
    tor = np.asarray(run_model(m, words, backend="torch", dtype="float64"))
    assert np.array_equal(ref, tor)
    assert ref[0].tolist() == run_exact(m, words[0].tolist())


def test_kind_changed_in_memory_is_refused(s5):
    fsa, model = s5
    m = Model.from_json(model.to_json())
    m.layers[0].kind = "weird"
    cert = certify(m, fsa, float_steps=0)
    assert not cert.certified and "kind 'weird'" in cert.reason


def test_run_warns_on_a_tampered_file(tampered_files, capsys):
    from lrnnkit.cli import main
    rc = main(["run", str(tampered_files["swap rows of a float A"]), "--word", "(3,4) (3,4)"])
    out, err = capsys.readouterr()
    assert rc == 0 and out.split() == ["(3,4)", "()"]
    assert "warning" in err and "layer 0 symbol 3 A" in err and "verify" in err
