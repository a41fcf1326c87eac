"""lrnnkit.sweep.packing: the share of a GPU of a train point (exact, on the grid of sixteenths, monotone in the
peak), the card's memory (the spec's or the driver's), out-of-memory errors recognised by class, and the cache of
measurements by shape."""
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lrnnkit.errors import InputError
from lrnnkit.sweep import packing
from lrnnkit.sweep.packing import CONTEXT_BYTES, GRID, SAFETY, gpu_share, is_oom, measure_in_child, point_shares
from lrnnkit.sweep.spec import parse_spec

GiB = 2**30
TINY = dict(layer="deltanet", width=8, heads=1, batch=4, train_len=[2, 6], test_len=[6], eval_n=8, steps=5)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 200 * GiB), st.integers(0, 200 * GiB), st.integers(1 * GiB, 200 * GiB))
def test_share_is_on_the_grid_within_bounds_and_monotone(p, q, card):
    lo, hi = sorted((p, q))
    a, b = gpu_share(lo, card), gpu_share(hi, card)
    for s in (a, b):
        assert (s * GRID).denominator == 1 and Fraction(1, GRID) <= s <= 1
        # the smallest sixteenth holding SAFETY x (peak + context), unless clamped
        need = SAFETY * (hi if s is b else lo) + SAFETY * CONTEXT_BYTES
        assert s * card >= need or s == 1
        assert s == Fraction(1, GRID) or (s - Fraction(1, GRID)) * card < need
    assert a <= b


def test_share_examples():
    card = 80 * GiB
    assert gpu_share(0, card) == Fraction(1, 16)
    assert gpu_share(80 * GiB, card) == 1                           # more than a card: a whole card
    # 15.5 GiB peak: 1.25 x 16 GiB = 20 GiB = a quarter of 80 GiB exactly
    assert gpu_share(int(15.5 * GiB), card) == Fraction(1, 4)
    assert gpu_share(int(15.5 * GiB) + 1, card) == Fraction(5, 16)
    with pytest.raises(ValueError):
        gpu_share(1, 0)


def test_the_card_is_the_specs_or_the_drivers(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(packing, "peak_bytes", lambda point: int(15.5 * GiB))
    spec = parse_spec({"kind": "train", "num_gpus": "auto", "gpu_memory_gb": 80, "grid": {"task": ["parity"]}})
    assert point_shares(spec, {3: spec.points()[0]}) == {3: 0.25}
    spec.gpu_memory_gb = None
    if torch.cuda.is_available():
        card = torch.cuda.get_device_properties(0).total_memory
        assert point_shares(spec, {3: spec.points()[0]}) == {3: float(gpu_share(int(15.5 * GiB), card))}
    else:
        with pytest.raises(InputError, match="needs gpu_memory_gb"):
            point_shares(spec, {3: spec.points()[0]})


def test_a_child_process_measures_what_this_one_does():
    """The driver's probe runs in a child process (its CUDA context ends there): on the CPU its figure is this
    process's, to the byte (the same operators on the same shapes); a bad config is one InputError."""
    pytest.importorskip("torch")
    from lrnnkit.learn.memory import peak_bytes
    from lrnnkit.learn.train import TrainConfig
    cfgs = [TINY, {**TINY, "batch": 8}]
    card, peaks = measure_in_child(cfgs, "cpu")
    assert card is None and peaks == [peak_bytes(TrainConfig(**c)) for c in cfgs]
    with pytest.raises(InputError, match="layer"):
        measure_in_child([{**TINY, "layer": "nope"}], "cpu")


def test_out_of_memory_errors_by_class_name():
    class OutOfMemoryError(RuntimeError):
        pass

    class Sub(OutOfMemoryError):
        pass

    assert is_oom(OutOfMemoryError("x")) and is_oom(Sub()) and is_oom(MemoryError())
    assert not is_oom(RuntimeError("CUDA out of memory")) and not is_oom(ValueError())
    torch = pytest.importorskip("torch")
    assert is_oom(torch.cuda.OutOfMemoryError("x"))


def test_shares_measure_once_per_shape(monkeypatch):
    pytest.importorskip("torch")
    import lrnnkit.learn.memory as memory
    calls = []
    real = memory.peak_bytes

    def counting(cfg):
        calls.append(cfg)
        return real(cfg)

    monkeypatch.setattr(memory, "peak_bytes", counting)
    monkeypatch.setattr(packing, "_cache", {})
    params = {k: v for k, v in TINY.items() if k != "batch"}
    spec = parse_spec({"kind": "train", "num_gpus": "auto", "gpu_memory_gb": 1, "params": params,
                       "grid": {"seed": [1, 2], "lr": [1e-3, 1e-2], "batch": [4, 8]}})
    pts = dict(enumerate(spec.points()))
    shares = point_shares(spec, pts)
    assert len(calls) == 2 and sorted({c.batch for c in calls}) == [4, 8]    # seed and lr change no shape
    # a tiny run on a 1 GiB card: the context dominates (1.25 x 512 MiB = 10/16 of the card, and a bit more)
    assert set(shares.values()) == {11 / 16}
    for i, p in pts.items():
        assert shares[i] == float(gpu_share(packing.peak_bytes(p), GiB))


def test_a_probe_out_of_memory_gets_a_whole_card(monkeypatch):
    import lrnnkit.learn.memory as memory

    class OutOfMemoryError(RuntimeError):
        pass

    def oom(cfg):
        raise OutOfMemoryError("probe")

    monkeypatch.setattr(memory, "peak_bytes", oom)
    monkeypatch.setattr(packing, "_cache", {})
    spec = parse_spec({"kind": "train", "num_gpus": "auto", "gpu_memory_gb": 80, "params": TINY,
                       "grid": {"replicate": [0]}})
    assert point_shares(spec, {0: spec.points()[0]}) == {0: 1.0}
