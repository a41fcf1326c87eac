"""The parts of benchmarks/tune_gh_configs.py that need no GPU: the candidate settings (clamped to the widths the
kernels run at, duplicates dropped, the setting a compiled test marks miscompiled left out, pipeline stages only in
the second pass), the output comparison a candidate must pass, and the table text it writes (one the package's
reader accepts, entries unchanged)."""
from __future__ import annotations

import math

import pytest
import torch

from benchmarks import tune_gh_configs as tune
from lrnnkit.ops.gh import wy_tuned
from lrnnkit.ops.gh.wy_config import CONFIG, CONFIG_F32, _settings


def test_candidates_wide_heads():
    got = tune.candidates(CONFIG, "state_fwd", True, 128, 128, "bf16")
    assert got[0] == CONFIG["state_fwd"] and set(got) == {(64, 4), (32, 4), (128, 4), (64, 8)}
    assert (32, 4) not in tune.candidates(CONFIG, "state_bwd", True, 128, 128, "bf16")   # the known miscompile
    assert (32, 4) in tune.candidates(CONFIG_F32, "state_bwd", False, 128, 128, "tf32x3")
    assert tune.candidates(CONFIG, "dqkwy_bk", True, 128, 128, "bf16") == [128, 32, 64]
    assert tune.candidates(CONFIG, "t_warps", True, 128, 128, "bf16") == [2, 4, 8]
    assert tune.candidates(CONFIG, "t_sub", True, 128, 128, "bf16") == [16, 8, 4]


def test_candidates_narrow_heads_are_distinct_as_run():
    for key in ("state_fwd", "dqkwy"):
        got = tune.candidates(CONFIG, key, True, 32, 32, "bf16")
        run = [_settings({key: o}, key, True, 32) for o in got]
        assert len(set(run)) == len(run) and all(r[0] == 32 for r in run)
    assert tune.candidates(CONFIG, "dqkwy_bk", True, 32, 32, "bf16") == [128]   # every key block runs as 32


def test_candidates_second_round_changes_only_stages():
    assert tune.candidates(CONFIG, "state_fwd", True, 128, 128, "bf16", winner=(64, 4)) == [(64, 4, 3)]
    assert tune.candidates(CONFIG, "dqkwy", True, 128, 128, "bf16", winner=(64, 8, 3)) == [(64, 8, 2)]
    assert tune.candidates(CONFIG_F32, "dqkwg", False, 128, 128, "tf32x3", winner=(32, 4, 2)) == [(32, 4, 1)]


def test_err_is_relative_to_the_largest_entry_and_refuses_non_finite():
    ref = {"o": torch.tensor([4.0, -2.0])}
    assert tune.err({"o": torch.tensor([4.0, -1.0])}, ref) == 0.25
    assert tune.err({"o": torch.tensor([4.0, float("nan")])}, ref) == math.inf
    assert tune.err(ref, ref) == 0.0


def test_table_text_round_trips():
    doc = {"source": "x", "entries": {"sm90/bf16/128x128": {"state_fwd": [64, 4, 3], "wy_bk": 32},
                                      "sm90/tf32/32x32": {"t_warps": 8}}}
    assert wy_tuned.parse(tune.table_text(doc)) == {
        "sm90/bf16/128x128": {"state_fwd": (64, 4, 3), "wy_bk": 32}, "sm90/tf32/32x32": {"t_warps": 8}}
    assert wy_tuned.parse(tune.table_text(dict(doc, entries={}))) == {}


def _fake_bench(times):
    """A bench that runs the call once and reports the next of ``times`` (the chunks are timed in order)."""
    it = iter(times)

    def bench(fn):
        fn()
        return next(it)
    return bench


BUILT_IN_TILES = {64: {}, 32: {}, 16: {}}   # every chunk size with the built-in tiles


def test_choose_chunk_takes_the_fastest_as_accurate_as_the_built_in_one(monkeypatch):
    import time
    shape, far = (1, 24, 2, 8, 8), time.time() + 600
    # bf16: the built-in chunk 64 first, then 32 and 16; 32 fastest and within the slack: chosen
    chunk, recs = tune.choose_chunk("bf16", "t", shape, _fake_bench([10.0, 5.0, 7.0]), "cpu", far, lambda r: None, BUILT_IN_TILES)
    assert chunk == 32 and [r["setting"] for r in recs] == [64, 32, 16]
    assert [r["adopted"] for r in recs] == [False, True, False]
    assert all(0 < r["err"] < 0.1 for r in recs)          # bf16 rounding against float64, no miscompile
    # errors allowed no larger than the built-in chunk's half: only the built-in chunk itself, whatever the times
    monkeypatch.setattr(tune, "CHUNK_SLACK", 0.5)
    chunk, recs = tune.choose_chunk("bf16", "t", shape, _fake_bench([10.0, 5.0, 7.0]), "cpu", far, lambda r: None, BUILT_IN_TILES)
    assert chunk == 64 and recs[0]["adopted"]
    # faster by less than GAIN: the built-in chunk stays
    monkeypatch.setattr(tune, "CHUNK_SLACK", 1.5)
    chunk, _ = tune.choose_chunk("bf16", "t", shape, _fake_bench([10.0, 9.9, 9.95]), "cpu", far, lambda r: None, BUILT_IN_TILES)
    assert chunk == 64
    # 3xTF32's built-in chunk is 16: it is timed first and judges the others
    _, recs = tune.choose_chunk("tf32x3", "t", shape, _fake_bench([1.0, 2.0, 3.0]), "cpu", far, lambda r: None, BUILT_IN_TILES)
    assert [r["setting"] for r in recs] == [16, 64, 32] and recs[0]["adopted"]


def test_run_job_writes_the_chosen_chunk_and_its_own_tiles(monkeypatch):
    import time
    seen = {}

    def tune_job(mode, label, shape, bench, dev, deadline, log, chunk):   # t_warps 8 wins at chunk 32, 4 elsewhere
        return [dict(key="t_warps", setting=8 if chunk == 32 else 4, adopted=True)], "done"

    def choose(mode, label, shape, bench, dev, deadline, log, tiles):
        seen.update(tiles)
        return 32, [dict(key="chunk", setting=32, adopted=True)]
    monkeypatch.setattr(tune, "tune_job", tune_job)
    monkeypatch.setattr(tune, "choose_chunk", choose)
    recs, diff, why = tune.run_job("bf16", "t", (1, 24, 2, 8, 8), None, "cpu", time.time() + 60)
    assert seen == {64: {"t_warps": 4}, 32: {"t_warps": 8}, 16: {"t_warps": 4}}   # each chunk with its own tiles
    assert diff == {"chunk": 32, "t_warps": 8} and why == "done"
    assert {r["chunk"] for r in recs if r["key"] == "t_warps"} == {16, 32, 64}
    assert wy_tuned.parse(tune.table_text({"source": "x", "entries": {"sm90/bf16/8x8": diff}})) == \
        {"sm90/bf16/8x8": {"chunk": 32, "t_warps": 8}}
    # the built-in chunk chosen: no chunk in the entry, its own tiles
    monkeypatch.setattr(tune, "choose_chunk", lambda *a, **k: (64, []))
    assert tune.run_job("bf16", "t", (1, 24, 2, 8, 8), None, "cpu", time.time() + 60)[1] == {"t_warps": 4}
    # --no-chunks: the built-in chunk alone, no comparison
    monkeypatch.setattr(tune, "choose_chunk", lambda *a, **k: pytest.fail("no chunk comparison without chunks"))
    assert tune.run_job("bf16", "t", (1, 24, 2, 8, 8), None, "cpu", time.time() + 60, chunks=False)[1] == \
        {"t_warps": 4}
    # a descent cut by the budget at a later chunk: the built-in chunk's settings, no chunk comparison
    monkeypatch.setattr(tune, "tune_job", lambda *a, **k: ([dict(key="t_warps", setting=4, adopted=True)],
                                                             "done" if a[-1] == 64 else "budget"))
    recs, diff, why = tune.run_job("bf16", "t", (1, 24, 2, 8, 8), None, "cpu", time.time() + 60)
    assert diff == {"t_warps": 4} and why == "budget"
