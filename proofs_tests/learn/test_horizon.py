"""The horizon of a trained model (lrnnkit.learn.horizon): a shortest wrong word that is really shortest (brute force),
verified on the model; none up to the stated length for a model that learned parity; a hand-made model wrong exactly
from length k on gets horizon k; experiments carry the horizon beside their accuracy."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from lrnnkit.errors import InputError  # noqa: E402
from lrnnkit.learn.horizon import horizon, horizon_target  # noqa: E402
from lrnnkit.learn.train import TrainConfig, train  # noqa: E402


def _parity_model(lo: float):
    r = train(TrainConfig(task="parity", layer="diagonal", eig_range=(lo, 1.0), width=16, heads=2, steps=150,
                          batch=32, lr=1e-2, train_len=(3, 40), test_len=(40,), short_conv=False))
    return r["_model"]


@pytest.fixture(scope="module")
def signed():
    return _parity_model(-1.0)


@pytest.fixture(scope="module")
def positive():
    return _parity_model(0.0)


def _labels(model, words):
    """The model's label (parity task: output classes "0", "1") after the last letter of each word."""
    with torch.no_grad():
        logits = model(torch.as_tensor(np.asarray(words), dtype=torch.long))
    return [str(int(x)) for x in logits[:, -1].argmax(-1)]


def _parity(w):
    return str(sum(w) % 2)


def test_signed_parity_model_has_no_wrong_word_up_to_the_stated_length(signed):
    h = horizon(signed, "parity", max_len=128, max_words=2 ** 12)
    assert h["horizon"] is None and h["shortest_wrong_word"] is None and h["wrong_at_length"] is None
    assert h["exhaustive_up_to"] == 11 and h["words_checked"] == 2 ** 12 - 2    # 2 + 4 + ... + 2^11 <= 4096
    assert h["isomorphic_to_target"] is True and h["extracted_states"] == h["target_states"] == 2
    assert set(h["accuracy_by_length"]) == {"1", "2", "4", "8", "16", "32", "64", "128"}
    assert all(v == 1.0 for v in h["accuracy_by_length"].values())
    assert "right on every word of length <= 11" in h["statement"]
    # independent check of the exhaustive claim on the longest length (all 2048 words of length 11)
    words = list(itertools.product((0, 1), repeat=11))
    assert _labels(signed, words) == [_parity(w) for w in words]


def test_positive_parity_model_shortest_wrong_word_is_shortest_and_verified(positive):
    h = horizon(positive, "parity", max_len=64)
    k = h["horizon"]
    assert k is not None and h["wrong_at_length"] == k and h["exhaustive_up_to"] == k - 1
    w = [int(s) for s in h["shortest_wrong_word"]]
    assert len(w) == k
    (got,) = _labels(positive, [w])                     # the model, run again on the word
    assert got == h["model_output"] != _parity(w) == h["target_output"]
    for L in range(1, k):                               # brute force: every shorter word is right
        words = list(itertools.product((0, 1), repeat=L))
        assert _labels(positive, words) == [_parity(x) for x in words]
    # the lexicographically first wrong word of its length (the search's order)
    same = [list(x) for x in itertools.product((0, 1), repeat=k)]
    first_wrong = next(x for x, y in zip(same, _labels(positive, same)) if y != _parity(x))
    assert w == first_wrong
    assert h["isomorphic_to_target"] is False and min(h["accuracy_by_length"].values()) < 0.9
    stopped = horizon(positive, "parity", max_len=64, max_extract_queries=2)   # L* over budget: no extraction
    assert stopped["extracted_states"] is None and "stopped after 2 model runs" in stopped["extraction"]["stopped"]
    assert stopped["horizon"] == k and "extraction stopped after 2 model runs" in stopped["statement"]


def test_without_aalpy_the_horizon_is_still_found_and_only_the_extraction_is_skipped(positive, monkeypatch):
    """On a machine without AALpy (the GPU machine of the benchmarks) the shortest wrong word and the curve are
    AALpy-free: they come out the same as with it, and only the extraction says it was skipped."""
    import lrnnkit.learn.horizon as hz
    full = horizon(positive, "parity", max_len=64)
    monkeypatch.setattr(hz, "have_aalpy", lambda: False)
    h = horizon(positive, "parity", max_len=64)
    assert h["horizon"] == full["horizon"] is not None
    assert h["shortest_wrong_word"] == full["shortest_wrong_word"]
    assert h["accuracy_by_length"] == full["accuracy_by_length"]
    assert h["extracted_states"] is None and h["extraction"]["missing"] == "aalpy"
    assert "AALpy is not installed" in h["extraction"]["skipped"] and full["extraction"].get("missing") is None
    assert h["statement"].startswith(f"horizon {full['horizon']}: ") and "AALpy not installed" in h["statement"]


class _FlipFrom(torch.nn.Module):
    """Exact parity (logits from the running sum mod 2), answers flipped from length ``k`` on."""

    def __init__(self, k: int):
        super().__init__()
        self.k = k

    def forward(self, x):
        par = torch.cumsum(x, dim=1) % 2
        pos = torch.arange(1, x.shape[1] + 1)
        par = torch.where(pos[None, :] >= self.k, 1 - par, par)
        return torch.nn.functional.one_hot(par, 2).float()


@pytest.mark.parametrize("k", [1, 5, 9])
def test_a_model_wrong_from_length_k_on_has_horizon_k(k):
    h = horizon(_FlipFrom(k), "parity", max_len=32, max_words=2 ** 12)
    assert h["horizon"] == k and h["exhaustive_up_to"] == k - 1
    assert h["shortest_wrong_word"] == ["0"] * k          # the lexicographically first word of length k
    assert h["accuracy_by_length"]["1"] == (0.0 if k == 1 else 1.0) and h["accuracy_by_length"]["32"] == 0.0
    assert h["first_length_below_1"] == k
    # the errors are systematic: every wrong answer is the parity flipped, each target's one wrong pair, and the
    # pairs at a length count all its samples (every word is wrong from k on); none where all are right
    pairs = h["wrong_pairs_by_length"]
    assert set(pairs) == {L for L, a in h["accuracy_by_length"].items() if a < 1.0}
    assert all(set(p) <= {"0->1", "1->0"} and sum(p.values()) == h["samples"] for p in pairs.values())


@settings(max_examples=25, deadline=None)
@given(k=st.integers(1, 14), budget=st.integers(1, 2 ** 13))
def test_the_exhaustive_search_reaches_exactly_what_its_budget_allows(k, budget):
    """Over 2 letters the words of lengths 1..L number 2^(L+1) - 2: the search reaches the largest such L within the
    budget; the horizon is k when L >= k, else unknown, with k still found by the samples (all wrong from k on)."""
    reach = max(L for L in range(0, 14) if 2 ** (L + 1) - 2 <= budget)
    h = horizon(_FlipFrom(k), "parity", max_len=16, max_words=budget, samples=4, extract=False)
    if reach >= k:
        assert h["horizon"] == k and h["exhaustive_up_to"] == k - 1
    else:
        assert h["horizon"] is None and h["exhaustive_up_to"] == reach and h["words_checked"] == 2 ** (reach + 1) - 2
    assert h["wrong_at_length"] == k and h["first_length_below_1"] == k


def test_beyond_the_exhaustive_budget_a_sampled_wrong_length_is_an_upper_bound():
    h = horizon(_FlipFrom(20), "parity", max_len=32, max_words=2 ** 8, extract=False)
    assert h["horizon"] is None and h["exhaustive_up_to"] == 7 and h["wrong_at_length"] == 20
    assert len(h["wrong_word"]) == 20 and "wrong at length 20" in h["statement"]


def test_targets_follow_the_task_letters_and_labels():
    from lrnnkit.learn.tasks import make_task
    task = make_task("S5-swaps")                        # the identity and the 10 transpositions of S5
    fsa, letters, labels = horizon_target(task)
    assert fsa.n_letters == len(letters) == 11 < task.fsa.n_letters
    assert list(fsa.alphabet) == [task.fsa.alphabet[a] for a in letters] and list(labels) == list(task.labels)
    w = np.random.default_rng(0).integers(0, 11, size=(4, 9))   # same states as the full group on those letters
    assert (fsa.trace_batch(w) == task.fsa.trace_batch(letters[w])).all()
    for bad in ("mod-arith:5", "S5-4tok", "mod-arith-br:5"):
        with pytest.raises(InputError, match="no horizon"):
            horizon_target(bad)


def test_experiment_records_carry_the_horizon_beside_the_accuracy(tmp_path, capsys):
    from lrnnkit.cli import main
    from lrnnkit.learn.experiments import EXPERIMENTS, run_experiment
    exp = EXPERIMENTS["000-parity"]
    orig = exp.runs
    exp.runs = lambda scale: [(lab, cfg) for lab, cfg in orig(scale) if "diagonal" in lab]
    try:
        rec = run_experiment("000-parity", "tiny", out=str(tmp_path / "e"))
        assert (tmp_path / "e" / "horizons.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        for lab, r in rec["runs"].items():
            h = r["horizon"]
            assert rec["horizons"][lab] == h["statement"] and "seconds" not in h
            assert set(h["accuracy_by_length"]) >= {"1", "2", "256"}
            assert h["exhaustive_up_to"] >= 10 or h["horizon"] is not None
        pos = rec["runs"]["Mamba-like diagonal [0,1]"]["horizon"]
        assert pos["horizon"] is not None and pos["isomorphic_to_target"] is False
        exp.runs = lambda scale: [(lab, cfg) for lab, cfg in orig(scale) if lab == "Mamba-like diagonal [0,1]"]
        assert main(["experiment", "000-parity", "--no-horizon"]) == 0
        text = capsys.readouterr().out
        assert "horizon, Mamba-like diagonal [0,1]: not computed" in text
    finally:
        exp.runs = orig
    unsupported = _FlipFrom(3)
    from lrnnkit.learn.experiments import run_horizon
    cfg = TrainConfig(task="mod-arith-br:5", test_len=(9,))      # not an automaton task (brackets)
    assert "no horizon" in run_horizon(unsupported, cfg, "tiny")["statement"]


def test_a_checkpoints_horizon_is_its_models(tmp_path):
    from lrnnkit.learn.horizon import horizon_checkpoint
    cfg = TrainConfig(task="parity", layer="diagonal", eig_range=(0.0, 1.0), width=16, heads=2, steps=30, batch=8,
                      lr=1e-2, train_len=(3, 12), test_len=(24,), short_conv=False)
    r = train(cfg, str(tmp_path / "run"))
    a = horizon(r["_model"], "parity", max_len=24)
    b = horizon_checkpoint(str(tmp_path / "run"))
    a.pop("seconds"), b.pop("seconds")
    a["extraction"].pop("seconds"), b["extraction"].pop("seconds")
    assert a == b and set(b["accuracy_by_length"]) == {"1", "2", "4", "8", "16", "24"}


class _Rounding(torch.nn.Module):
    """Says "1" in float32 and "0" under bf16 autocast: its logits are ``[1, 1 + 2^-12]`` from one linear layer,
    and bf16 (8 significant bits) rounds ``1 + 2^-12`` to 1, a tie that argmax gives to the first class."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(1, 2, bias=False)
        with torch.no_grad():
            self.lin.weight.copy_(torch.tensor([[1.0], [1.0 + 2.0 ** -12]]))
        self.seen = set()

    def forward(self, tokens):
        y = self.lin(torch.ones(*tokens.shape, 1))
        self.seen.add(y.dtype)
        return y


def test_autocast_cpu_runs_the_model_in_bf16_and_says_so():
    m = _Rounding()
    a = horizon(m, "parity", max_len=8, max_words=6, samples=4, extract=False)
    assert m.seen == {torch.float32} and a["bf16_autocast"] is False
    assert a["horizon"] == 1 and a["shortest_wrong_word"] == ["0"] and a["model_output"] == "1"
    c = horizon(m, "parity", max_len=8, max_words=6, samples=4, extract=False, autocast=True)   # CUDA only
    assert m.seen == {torch.float32} and c["bf16_autocast"] is False and c["shortest_wrong_word"] == ["0"]
    b = horizon(m, "parity", max_len=8, max_words=6, samples=4, extract=False, autocast_cpu=True)
    assert torch.bfloat16 in m.seen and b["bf16_autocast"] is True
    assert b["horizon"] == 1 and b["shortest_wrong_word"] == ["1"] and b["model_output"] == "0"


class _ExactWellFormed(torch.nn.Module):
    """The task's own answers (the FSA's label after every prefix), rotated to the next label from prefix length
    ``k`` on: a model of the well-formed-words task wrong exactly from length k (read after each digit)."""

    def __init__(self, task, k: int | None = None):
        super().__init__()
        self.task, self.k = task, k

    def forward(self, x):
        lab = self.task._lab[self.task.fsa.trace_batch(x.numpy())]
        lab = np.where(lab < 0, 0, lab)
        n = len(self.task.labels)
        if self.k is not None:
            pos = np.arange(1, x.shape[1] + 1)
            lab = np.where(pos[None, :] >= self.k, (lab + 1) % n, lab)
        return torch.nn.functional.one_hot(torch.as_tensor(lab), n).float()


def test_a_well_formed_task_is_measured_over_its_own_words():
    """002's ModArith(5) draws only digit-operator-digit words: the search runs over those alone (5 + 75 + 1125 =
    1205 words of lengths 1, 3, 5 within 2^14; the 16875 of length 7 would pass it), the exact model is right on
    all of them and on the sampled curve at every odd length, and no automaton is extracted."""
    from lrnnkit.learn.tasks import make_task
    task = make_task("mod-arith:5")
    h = horizon(_ExactWellFormed(task), task, max_len=64, max_words=2 ** 14, samples=32)
    assert h["words"] == "well-formed" and h["horizon"] is None and h["wrong_at_length"] is None
    assert h["exhaustive_up_to"] == 5 and h["words_checked"] == 5 + 75 + 1125
    assert set(h["accuracy_by_length"]) == {"1", "3", "7", "15", "31", "63"}
    assert all(v == 1.0 for v in h["accuracy_by_length"].values())
    assert h["extracted_states"] is None and "well formed only" in h["extraction"]["skipped"]
    assert h["statement"].startswith("right on every well-formed word of length <= 5 (1205 words); no wrong word")


@pytest.mark.parametrize("k, first", [(1, 1), (3, 3), (4, 5), (5, 5)])
def test_a_well_formed_model_wrong_from_length_k_has_the_shortest_wrong_well_formed_word(k, first):
    """Wrong from prefix length k on: the first wrong answer read after a digit is at the first odd length >= k,
    on the lexicographically first word of that length (digits before operators: 0 + 0 + 0 ...), checked against
    the task's own labels; the shorter well-formed words are all right."""
    from lrnnkit.learn.tasks import make_task
    task = make_task("mod-arith:5")
    h = horizon(_ExactWellFormed(task, k), task, max_len=16, max_words=2 ** 14, samples=16)
    assert h["horizon"] == first and h["exhaustive_up_to"] == max(0, first - 2)
    assert h["shortest_wrong_word"] == ["0", "+"] * (first // 2) + ["0"]
    assert h["target_output"] == "0" and h["model_output"] == "1"
    assert h["first_length_below_1"] == first and h["wrong_at_length"] == first
    assert "right on every shorter well-formed word" in h["statement"]


def test_horizon_target_still_refuses_a_well_formed_task():
    """The all-words target (for L* and the all-words search) is still refused for such tasks: only horizon()
    measures them, over their own words."""
    with pytest.raises(InputError, match="well-formed"):
        horizon_target("mod-arith:5")
