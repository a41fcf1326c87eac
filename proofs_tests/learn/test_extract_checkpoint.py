"""``lrnnkit extract``: the automaton a trained checkpoint or a compiled model implements, and the exhaustive
model-vs-target check (lrnnkit.learn.compare): its shortest disagreement is checked by brute force against the
model itself, its "agrees up to N" by running every word up to N again."""
from __future__ import annotations

import copy
import itertools
import json
import os

import numpy as np
import pytest
from hypothesis import given

pytest.importorskip("aalpy")

import lrnnkit as L  # noqa: E402
from lrnnkit.automata import minimize  # noqa: E402
from lrnnkit.cli import main  # noqa: E402
from lrnnkit.learn.compare import model_outputs, shortest_disagreement  # noqa: E402
from lrnnkit.learn.extract import extract_checkpoint, model_oracle  # noqa: E402
from lrnnkit.testing.strategies import fsas  # noqa: E402


def _fsa_outputs(f):
    outs = np.array(f.outputs, dtype=object)
    return lambda w: outs[f.trace_batch(w)]


def _brute_force(oracle_last, target, comparison):
    """The comparison's claim, checked word by word: the word disagrees and nothing shorter or lexicographically
    smaller of its length does; or every word up to agrees_up_to agrees."""
    k = target.n_letters
    top = comparison.agrees_up_to if comparison.word is None else len(comparison.word)
    for n in range(1, top + 1):
        for u in itertools.product(range(k), repeat=n):
            u = list(u)
            if comparison.word is not None and u == comparison.word:
                assert oracle_last(u) == comparison.model_output != comparison.target_output \
                    == target.outputs[target.run(u)]
                return
            assert oracle_last(u) == target.outputs[target.run(u)], u
    assert comparison.word is None


@given(fsas(max_states=4, max_letters=2, n_labels=2), fsas(max_states=4, max_letters=2, n_labels=2))
def test_shortest_disagreement_between_automata_is_exact(a, b):
    if a.n_letters != b.n_letters:
        return
    c = shortest_disagreement(_fsa_outputs(a), b, max_words=200)
    _brute_force(lambda u: a.outputs[a.run(u)], b, c)
    if c.word is None:
        assert c.agrees_up_to == (6 if a.n_letters == 2 else 64)   # 2+4+...+64 = 126 <= 200 < 254
        assert c.words_checked == sum(a.n_letters ** n for n in range(1, c.agrees_up_to + 1))


def test_counting_mod_3_against_parity():
    parity = L.load_source("parity")
    c = shortest_disagreement(lambda w: np.cumsum(w, axis=1) % 3, parity, max_words=1000)
    assert c.word == [1, 1] and (c.model_output, c.target_output) == ("2", "0")
    assert "length 2" in c.statement() and c.to_json()["word"] == ["1", "1"]


def test_extract_compiled_model_cli(tmp_path, capsys):
    m = str(tmp_path / "s3.json")
    assert main(["compile", "group:S3", "-o", m]) == 0
    capsys.readouterr()
    out = str(tmp_path / "ext.json")
    dot = str(tmp_path / "ext.dot")
    assert main(["extract", m, "--json", "--max-words", "300", "-o", out, "--dot", dot]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["isomorphic"] is True and r["extracted_states"] == 6
    assert r["comparison"]["word"] is None and r["comparison"]["agrees_up_to"] == 3     # 6+36+216 = 258 <= 300
    assert r["comparison"]["words_checked"] == 258
    s3 = L.load_source("group:S3")
    assert minimize(L.load_source(out)) == minimize(s3) == minimize(L.load_source(dot))


def test_extract_tampered_model_finds_the_shortest_disagreement(tmp_path):
    fsa = L.load_source("group:S3")
    model = copy.deepcopy(L.compile(fsa))
    model.layers[0].transitions[1] = copy.deepcopy(model.layers[0].transitions[2])   # letter 1 acts as letter 2
    path = str(tmp_path / "bad.json")
    model.save(path)
    ext = extract_checkpoint(path, max_words=300, random_steps=200)
    oracle = model_oracle(L.load_model(path))
    assert ext.isomorphic is False and ext.comparison.word is not None
    _brute_force(oracle, minimize(fsa), ext.comparison)
    assert ext.comparison.word == [1]                 # one letter already differs
    # the batch oracle and the one-word oracle agree
    w = np.array([[0, 1, 2], [1, 1, 5]])
    assert model_outputs(L.load_model(path))(w)[:, -1].tolist() == [oracle([0, 1, 2]), oracle([1, 1, 5])]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    pytest.importorskip("torch")
    out = str(tmp_path_factory.mktemp("run"))
    # an eigenvalue range of [0, 1] cannot represent parity (000, Theorem 1): a disagreement must exist
    assert main(["train", "parity", "--layer", "diagonal", "--eig-range", "0,1", "--width", "8", "--heads", "1",
                 "--steps", "10", "--batch", "8", "--train-len", "3:8", "--test-len", "8", "--no-short-conv",
                 "--out", out, "--json"]) == 0
    return out


def test_extract_trained_checkpoint_cli(checkpoint, tmp_path, capsys):
    capsys.readouterr()
    out, dot = str(tmp_path / "e.json"), str(tmp_path / "e.dot")
    assert main(["extract", checkpoint, "--max-words", "500", "--random-steps", "100", "-o", out, "--dot", dot,
                 "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert set(r) >= {"isomorphic", "extracted_states", "distinguishing_word", "comparison", "rounds", "written"}
    assert r["written"] == {out: "json", dot: "dot"}
    assert L.load_source(out) == L.load_source(dot)
    # the model's own answers: the stated shortest disagreement is real and nothing shorter disagrees
    from lrnnkit.learn.extract import torch_oracle
    from lrnnkit.learn.tasks import make_task
    from lrnnkit.learn.train import load_checkpoint
    _, net = load_checkpoint(checkpoint)
    task = make_task("parity")
    oracle = torch_oracle(net.eval(), task.labels, alphabet=task.fsa.alphabet)
    ext = extract_checkpoint(checkpoint, max_words=500, random_steps=100)
    assert ext.to_json()["comparison"] == r["comparison"]
    _brute_force(oracle, task.fsa, ext.comparison)
    assert ext.comparison.word is not None            # [0, 1] eigenvalues do not compute parity
    # the extracted automaton is what the model answers on the words L* asked, and comes out as AALpy too
    a = ext.to_aalpy()
    assert type(a).__name__ in ("Dfa", "MooreMachine") and len(a.states) == ext.automaton.n_states
    capsys.readouterr()
    assert main(["extract", checkpoint, "--max-words", "100", "--random-steps", "50"]) == 0
    text = capsys.readouterr().out
    assert "shortest disagreement" in text and "model vs target" in text


def test_extract_errors_exit_2(checkpoint, tmp_path, capsys):
    assert main(["extract", checkpoint, "--target", "counter:2"]) == 2
    assert "alphabet" in capsys.readouterr().err
    assert main(["extract", str(tmp_path / "missing")]) == 2
    assert main(["extract", checkpoint, "--max-words", "0"]) == 2
    bad = tmp_path / "ck.json"
    bad.write_text("{not json")
    assert main(["extract", str(bad)]) == 2
    assert capsys.readouterr().err.count("\n") == 3


def test_extract_target_in_another_letter_order(checkpoint):
    parity = L.load_source("parity")
    swapped = L.load_source({**parity.to_dict(), "alphabet": ["1", "0"],
                             "delta": [[1, 0], [0, 1]]})       # the same automaton, letters listed the other way
    a = extract_checkpoint(checkpoint, swapped, max_words=100, random_steps=50)
    b = extract_checkpoint(checkpoint, max_words=100, random_steps=50)
    assert a.comparison.to_json() == b.comparison.to_json() and a.isomorphic == b.isomorphic


@pytest.mark.slow
def test_issue_command_train_then_extract(tmp_path, capsys):
    """The walk-through of docs/interop.rst: a [-1, 1] diagonal model trained on parity, then extracted."""
    out = str(tmp_path / "x")
    assert main(["train", "parity", "--layer", "diagonal", "--eig-range", "-1,1", "--width", "16", "--steps", "150",
                 "--batch", "32", "--lr", "1e-2", "--no-short-conv", "--device", "cpu", "--out", out]) == 0
    capsys.readouterr()
    assert main(["extract", out, "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["extracted_states"] >= 1 and r["comparison"]["statement"]
    assert os.path.exists(os.path.join(out, "checkpoint.json"))


def test_known_answers_and_batched_search_save_model_calls():
    """Answers recorded by the exhaustive check are L*'s membership queries for free; a batch oracle's random
    search still finds the counterexample that makes L* learn counting mod 3 (not parity)."""
    from lrnnkit.learn.extract import extract_automaton
    parity = L.load_source("parity")
    calls = []

    class Mod3:
        alphabet = ["0", "1"]

        def __call__(self, w):
            calls.append(len(w))
            return str(sum(w) % 3)

        def batch(self, words):
            calls.append(words.shape)
            return (np.cumsum(words, axis=1) % 3).astype(str)

    known: dict = {}
    c = shortest_disagreement(Mod3().batch, parity, max_words=200, record=known)
    assert c.word == [1, 1] and known[(1, 1)] == "2" and len(known) == 6    # lengths 1 and 2
    singles = []
    for k in (None, known):
        calls.clear()
        r = extract_automaton(Mod3(), target=parity, random_steps=300, known=k)
        assert r.automaton.n_states == 3 and r.distinguishing_word == [1, 1]
        assert any(isinstance(x, tuple) for x in calls)          # the random search ran as batches
        singles.append(sum(isinstance(x, int) for x in calls))
    assert singles[1] < singles[0]                               # the recorded answers were not asked again
