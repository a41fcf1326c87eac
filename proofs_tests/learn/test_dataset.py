"""A fixed training set run for epochs (lrnnkit.learn.dataset, ``TrainConfig.train_words``): the set is a fixed
function of the seed (and differs across seeds), each epoch visits every word exactly once, the words have the
task's labels, the size is capped, bad values are refused in one line. CPU."""
import collections

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from lrnnkit import limits
from lrnnkit.errors import InputError, SizeLimitError
from lrnnkit.learn.dataset import CHUNK, FixedSet, draw_words, epoch_order, set_bytes
from lrnnkit.learn.tasks import IGNORE, make_task
from lrnnkit.learn.train import TrainConfig


def _visits(fs: FixedSet, steps: int) -> list:
    """Per step, per run: the word indices the batch reads."""
    out = []
    for s in range(steps):
        fs.prepare(s)
        out.append(fs.indices(torch.tensor(s)).tolist())
    return out


@settings(max_examples=40, deadline=None)
@given(words=st.integers(1, 40), batch=st.integers(1, 40), seed=st.integers(0, 3), steps=st.integers(1, 12))
def test_every_epoch_visits_every_word_once(words, batch, seed, steps):
    """Position p = s B + b reads word perm_e[p mod N] of epoch e = p div N: counted over the positions of the first
    ``steps`` batches, every complete epoch holds each word once, the epoch in progress each at most once, and
    its order is :func:`epoch_order` of (seed, e)."""
    batch = min(batch, words)
    fs = FixedSet(make_task("parity"), words, batch, (2, 5), [seed], "cpu")
    flat = [i for step in _visits(fs, steps) for i in step[0]]
    for e in range(len(flat) // words + 1):
        part = flat[e * words:(e + 1) * words]
        assert collections.Counter(part).most_common(1)[0][1] == 1 if part else True
        if len(part) == words:
            assert sorted(part) == list(range(words))
        assert part == epoch_order(seed, e, words)[:len(part)].tolist()


def test_epoch_orders_differ_and_batches_cross_epochs():
    fs = FixedSet(make_task("parity"), 10, 4, (2, 5), [0], "cpu")
    assert fs.epochs_of(2) == (0, 1)                      # positions 8..11: the end of epoch 0, the start of 1
    orders = [epoch_order(0, e, 10).tolist() for e in range(4)]
    assert len({tuple(o) for o in orders}) == 4           # each epoch its own order
    got = _visits(fs, 10)                                 # 40 positions: 4 whole epochs
    flat = [i for step in got for i in step[0]]
    assert flat == [i for o in orders for i in o]


def test_the_set_is_a_function_of_the_seed():
    """The same seed draws the same words (a second sampler, a second call); another seed other words; N words are
    the first N of a larger set (words do not depend on N or the batch); lengths are uniform on the range (each
    length present), tokens padded after each word, labels the task's: parity of the prefix."""
    task = make_task("parity")
    a = draw_words(task, 3 * CHUNK + 5, (3, 9), 7, "cpu")
    b = draw_words(task, 3 * CHUNK + 5, (3, 9), 7, "cpu")
    c = draw_words(task, 3 * CHUNK + 5, (3, 9), 8, "cpu")
    small = draw_words(task, 100, (3, 9), 7, "cpu")
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert not torch.equal(a[0], c[0])
    assert torch.equal(small[0], a[0][:100]) and torch.equal(small[1], a[1][:100])
    long = draw_words(task, 2000, (30, 30), 7, "cpu")[0]
    assert len({tuple(r) for r in long.tolist()}) == 2000          # 2000 of 2^30 words: no row repeated
    x, y = a[0].long(), a[1].long()
    lens = (y != IGNORE).sum(1)
    assert set(lens.tolist()) == set(range(3, 10))
    for row_x, row_y, n in zip(x[:200], y[:200], lens[:200].tolist()):
        assert (row_x[n:] == task.pad_id).all()
        assert row_y[:n].tolist() == (np.cumsum(row_x[:n].numpy()) % 2).tolist()
    fs0 = FixedSet(task, 64, 8, (3, 9), [7], "cpu")
    fs1 = FixedSet(task, 64, 16, (3, 9), [7], "cpu")
    assert torch.equal(fs0.x, fs1.x) and torch.equal(fs0.x, a[0][:64])


def test_dtype_and_size():
    """int8 tokens and labels (IGNORE = -100 fits): 2 bytes a token; 001's set: 2,000,000 x 128 x 2 = 512 MB."""
    task = make_task("parity")
    fs = FixedSet(task, 50, 5, (2, 6), [0, 1], "cpu")
    assert fs.x.dtype == fs.y.dtype == torch.int8
    assert fs.nbytes == 2 * 50 * 6 * 2 == set_bytes(task, 50, 6, 2)
    assert set_bytes(make_task("group:S5"), 2_000_000, 128) == 512_000_000
    x, y = fs.sample_seeds(torch.tensor(3))
    assert x.shape == y.shape == (2, 5, 6) and x.dtype == y.dtype == torch.int64


def test_the_size_cap_is_enforced(monkeypatch):
    monkeypatch.setattr(limits, "TRAIN_MAX_SET_BYTES", 1000)
    with pytest.raises(SizeLimitError, match=r"TRAIN_MAX_SET_BYTES") as e:
        TrainConfig(train_words=100, batch=10, train_len=(2, 8))
    assert "1600 bytes" in str(e.value) and "\n" not in str(e.value)
    TrainConfig(train_words=50, batch=10, train_len=(2, 8))             # 800 bytes: fits
    with pytest.raises(SizeLimitError, match="2 run"):                   # two runs' sets do not
        FixedSet(make_task("parity"), 50, 10, (2, 8), [0, 1], "cpu")


@pytest.mark.parametrize("bad", [0, -3, True, 2.5, "100", [100]])
def test_bad_train_words_are_refused_in_one_line(bad):
    with pytest.raises(InputError, match="train_words") as e:
        TrainConfig(train_words=bad, batch=4)
    assert "\n" not in str(e.value)


def test_train_words_below_the_batch_is_refused():
    with pytest.raises(InputError, match=r"train_words \(--train-words\) must be at least the batch \(8.*got 7$"):
        TrainConfig(train_words=7, batch=8)


def test_config_field_epochs_and_stored_configs():
    cfg = TrainConfig(steps=312_500, batch=512, train_words=1_600_000, train_len=(32, 32))
    assert cfg.epochs == 100.0
    assert TrainConfig(steps=10).epochs is None
    assert TrainConfig.from_json({"task": "parity"}).train_words is None          # stored before the field
    assert TrainConfig.from_json(cfg.to_json()).train_words == 1_600_000
