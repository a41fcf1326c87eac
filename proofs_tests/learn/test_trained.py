"""A trained checkpoint is a model: one Python call loads it (lrnnkit.learn.trained.load_trained), and ``run``,
``verify`` (to a horizon), ``precision collapse`` and ``info`` accept it; ``save_pretrained`` / ``from_pretrained``
round-trip it."""
import json
import os
import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from lrnnkit.cli import main  # noqa: E402
from lrnnkit.errors import InputError  # noqa: E402
from lrnnkit.learn.compare import torch_outputs  # noqa: E402
from lrnnkit.learn.locate import is_trained_path  # noqa: E402
from lrnnkit.learn.trained import TrainedModel, load_trained  # noqa: E402


def cli(capsys, *argv):
    capsys.readouterr()
    rc = main([str(x) for x in argv])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("run"))
    # eigenvalues in [0, 1] cannot represent parity (000, Theorem 1): a wrong word must exist
    assert main(["train", "parity", "--layer", "diagonal", "--eig-range", "0,1", "--width", "8", "--heads", "1",
                 "--steps", "10", "--batch", "8", "--train-len", "3:8", "--test-len", "8", "--no-short-conv",
                 "--out", out, "--json"]) == 0
    return out


def test_one_call_loads_a_runnable_model(checkpoint):
    m = load_trained(checkpoint)
    assert m.alphabet == ["0", "1"] and m.output_labels == ["0", "1"]
    rng = np.random.default_rng(1)
    words = rng.integers(0, 2, size=(16, 12))
    want = torch_outputs(m.module, m.output_labels)(words)      # the module itself, tokens = letters for parity
    assert (m.outputs(words) == want).all()
    assert m.run("0110") == want_of(m, [0, 1, 1, 0]) == m.run([0, 1, 1, 0]) == m("0 1 1 0")
    with pytest.raises(InputError, match="'2'"):
        m.run("012")
    assert load_trained(os.path.join(checkpoint, "checkpoint.json")).run("0110") == m.run("0110")


def want_of(m, word):
    return torch_outputs(m.module, m.output_labels)(np.array([word]))[0].tolist()


def test_run_verb_prints_what_python_computes(checkpoint, capsys):
    m = load_trained(checkpoint)
    rc, out, _ = cli(capsys, "run", checkpoint, "--word", "0110111")
    assert rc == 0 and out.split() == m.run("0110111")
    rc, out, _ = cli(capsys, "run", checkpoint, "--random", "20", "--seed", "3", "--json")
    r = json.loads(out)
    assert rc == 0 and r["trained"] and r["outputs"] == m.run([m.alphabet.index(x) for x in r["word"]])
    rc, _, err = cli(capsys, "run", checkpoint, "--word", "01", "--backend", "exact")
    assert rc == 2 and "trained model runs in torch" in err


def test_verify_reports_the_horizon_and_a_real_wrong_word(checkpoint, capsys):
    rc, out, _ = cli(capsys, "verify", checkpoint, "--horizon", "16", "--json")
    h = json.loads(out)
    assert rc == 1 and h["certified"] is False and h["wrong"] is True
    m = load_trained(checkpoint)
    w = [m.alphabet.index(x) for x in h["wrong_word"]]
    parity = str(sum(w) % 2)
    assert m.run(w)[-1] != parity and len(w) <= 16           # the word is wrong, re-run here
    if h["horizon"] is not None:                             # the exhaustive search found it: a shortest one
        assert h["horizon"] == len(w) and h["exhaustive_up_to"] == len(w) - 1
    rc, text, _ = cli(capsys, "verify", checkpoint, "--horizon", "16")
    assert rc == 1 and text.startswith("NOT certified for all input lengths (a trained model")
    assert "shortest wrong word known: " + " ".join(h["wrong_word"]) in text
    rc, _, err = cli(capsys, "verify", checkpoint, "--source", "parity")
    assert rc == 2 and "own task" in err


def test_collapse_of_a_checkpoint_defaults_to_a_shorter_word(checkpoint, capsys):
    from lrnnkit.cli._trained import COLLAPSE_LENGTH
    rc, out, _ = cli(capsys, "precision", "collapse", checkpoint, "--format", "fp32", "--json")
    assert rc == 0 and json.loads(out)["steps"] == COLLAPSE_LENGTH < 100_000   # compiled models: 100000


def test_precision_collapse_of_a_checkpoint(checkpoint, capsys):
    rc, out, _ = cli(capsys, "precision", "collapse", checkpoint, "--format", "fp64", "--length", "300", "--json")
    r = json.loads(out)
    assert rc == 0 and r["steps"] == 300 and r["format"] == "fp64"
    assert r["first_drift_step"] is None and r["first_wrong_step"] == r["first_wrong_step_float64"]
    rc, out, _ = cli(capsys, "precision", "collapse", checkpoint, "--format", "bfloat16", "--length", "300", "--json")
    b = json.loads(out)
    # the stated first wrong step is the first position where bf16 outputs and the automaton differ
    m = load_trained(checkpoint)
    word = np.array([m.random_word(300, 0)])
    got = m.outputs(word, "bf16")[0]
    truth = (np.cumsum(word[0]) % 2).astype(str)
    wrong = np.nonzero(got != truth)[0]
    assert b["first_wrong_step"] == (int(wrong[0]) + 1 if wrong.size else None)
    assert b["accuracy"] == round(float(np.mean(got == truth)), 4)
    rc, _, err = cli(capsys, "precision", "collapse", checkpoint, "--format", "fp8-e4m3fn")
    assert rc == 2 and "torch's dtypes" in err


def test_info_of_a_checkpoint_and_presets_win(checkpoint, capsys, tmp_path, monkeypatch):
    rc, out, _ = cli(capsys, "info", checkpoint, "--json")
    d = json.loads(out)
    assert rc == 0 and d["kind"] == "trained" and d["task"] == "parity" and d["layer"] == "diagonal"
    assert d["parameters"] == sum(p.numel() for p in load_trained(checkpoint).module.parameters())
    assert d["step"] == d["steps"] == 10
    rc, out, _ = cli(capsys, "info", checkpoint)
    assert rc == 0 and out.startswith("trained model") and "task parity" in out
    shutil.copytree(checkpoint, tmp_path / "parity")
    monkeypatch.chdir(tmp_path)
    rc, out, _ = cli(capsys, "info", "parity")               # the preset, not the directory of that name
    assert rc == 0 and out.startswith("states 2")


def test_save_pretrained_round_trip(checkpoint, tmp_path, capsys):
    m = load_trained(checkpoint)
    d = m.save_pretrained(str(tmp_path / "pre"))
    assert sorted(os.listdir(d)) == ["config.json", "model.safetensors"] and is_trained_path(d)
    m2 = TrainedModel.from_pretrained(d)
    words = np.random.default_rng(0).integers(0, 2, size=(8, 20))
    assert (m2.outputs(words) == m.outputs(words)).all()
    for name, t in m.module.state_dict().items():
        assert torch.equal(m2.module.state_dict()[name], t), name
    assert TrainedModel.from_pretrained(checkpoint).run("0110") == m.run("0110")   # a checkpoint works too
    rc, out, _ = cli(capsys, "run", d, "--word", "0110")
    assert rc == 0 and out.split() == m.run("0110")
    # a config naming another width no longer fits the tensors: one line, bad input
    cfg = json.loads((tmp_path / "pre" / "config.json").read_text())
    cfg["model"]["width"] = 16
    (tmp_path / "pre" / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(InputError, match="shape"):
        TrainedModel.from_pretrained(d)
    (tmp_path / "pre" / "model.safetensors").write_bytes(b"not safetensors")
    cfg["model"]["width"] = 8
    (tmp_path / "pre" / "config.json").write_text(json.dumps(cfg))
    rc, _, err = cli(capsys, "run", d, "--word", "01")
    assert rc == 2 and "model.safetensors" in err and len(err.splitlines()) == 1


def test_the_published_config_schema_agrees_with_the_reader(checkpoint, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    from lrnnkit.learn.trained import TrainedConfig
    from proofs_tests._paths import REPO
    schema = json.load(open(os.path.join(REPO, "lrnnkit", "data", "trained-model.schema.json"), encoding="utf-8"))
    v = jsonschema.Draft202012Validator(schema)
    doc = load_trained(checkpoint).config.to_json()
    v.validate(doc)
    assert TrainedConfig.from_json(doc) == load_trained(checkpoint).config
    for change in (lambda d: d.pop("task"), lambda d: d.update(step=-1), lambda d: d.update(version=2),
                   lambda d: d.update(alphabet=[0, 1]), lambda d: d.update(extra=1),
                   lambda d: d.update(letters=["a", "b"]), lambda d: d.update(format="x")):
        d = json.loads(json.dumps(doc))
        change(d)
        assert not v.is_valid(d)
        with pytest.raises(InputError):
            TrainedConfig.from_json(d)


def test_is_trained_path_reads_a_large_model_file_only_at_its_head(checkpoint, tmp_path, monkeypatch):
    import lrnnkit as L
    from lrnnkit import limits
    big = tmp_path / "big.json"
    L.compile(L.load_source("group:S5")).save(str(big))
    assert big.stat().st_size > 1 << 16
    called = []
    monkeypatch.setattr(limits, "read_bounded", lambda *a, **k: called.append(a) or b"{}")
    assert not is_trained_path(str(big)) and not called          # decided from the first 64 KiB
    monkeypatch.undo()
    assert is_trained_path(os.path.join(checkpoint, "checkpoint.json")) and is_trained_path(checkpoint)
    assert not is_trained_path(str(tmp_path / "missing.json")) and not is_trained_path(str(tmp_path))
