"""The protocol grid of benchmarks/bench_learning.py (benchmarks/protocol_grid.py): an experiment's protocol runs
(lrnnkit.learn.protocols.follow) become one batched job per shape group, a batched job writes one result file per
run that summarise judges, a job resumes from its run directories' checkpoints (continues, not restarts), and the
dry run's minutes are runs x steps x ms/step / speed-up. CPU, tiny configs."""
import dataclasses
import json
import os
import sys

import pytest

from lrnnkit.learn import batched
from lrnnkit.learn.protocols import follow
from lrnnkit.learn.train import TrainConfig

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)
from benchmarks import bench_learning as bl  # noqa: E402
from benchmarks import protocol_grid as pg  # noqa: E402

sys.path.remove(ROOT)


def test_the_protocol_expands_into_one_job_per_shape_group():
    want = follow("000-parity")
    jobs = pg.protocol_jobs(["000-parity"], "cpu")
    got = [(r["config_label"], TrainConfig.from_json(dict(r["config"]))) for j in jobs for r in j["runs"]]
    assert sorted((lab, json.dumps(dataclasses.replace(c, device="cpu").to_json(), sort_keys=True, default=str))
                  for lab, c in want) == \
        sorted((lab, json.dumps(c.to_json(), sort_keys=True, default=str)) for lab, c in got)
    assert len({j["label"] for j in jobs}) == len(jobs)
    for j in jobs:
        cfgs = [TrainConfig.from_json(dict(r["config"])) for r in j["runs"]]
        assert j["batched"] == (cfgs[0].layer in batched.LAYERS)
        batched.check_runs(cfgs)                          # one shape: raises otherwise
        assert len({(c.seed, c.lr) for c in cfgs}) == len(cfgs) > 1
        assert len({r["label"] for r in j["runs"]}) == len(cfgs)
    # 004's bilinear layer is not batched: its runs go one by one
    assert any(not j["batched"] for j in pg.protocol_jobs(["004-bilinear"], "cpu"))


def _tiny_job(R=2):
    job = pg.protocol_jobs(["000-parity"], "cpu")[0]
    job["runs"] = job["runs"][:R]
    for r in job["runs"]:
        r["config"].update(width=8, heads=2, head_dim=None, layers=1, steps=4, batch=4, train_len=[2, 4],
                           test_len=[6], eval_n=8, log_every=1, checkpoint_every=2)
    return job


def test_a_batched_job_writes_run_files_summarise_judges(tmp_path):
    out = str(tmp_path)
    recs = pg.run_protocol_job(_tiny_job(), out)
    assert [r["status"] for r in recs] == ["ok", "ok"]
    assert all(r["result"]["steps"] == 4 and r["result"]["batched"]["runs"] == 2 for r in recs)
    files = os.listdir(os.path.join(out, "runs", "000-parity"))
    assert len(files) == 2
    bl.summarise(out, "paper")
    doc = json.load(open(os.path.join(out, "000-parity.json")))
    assert set(doc["runs"]) == {r["label"] for r in recs}
    assert {r["config_label"] for r in doc["runs"].values()} == {recs[0]["result"]["config_label"]}
    assert "protocol" in doc
    assert pg.run_protocol_job(_tiny_job(), out) == []        # finished: not run again


def test_a_job_continues_from_its_checkpoints(tmp_path, monkeypatch):
    out = str(tmp_path)
    job = _tiny_job()
    dirs = [os.path.join(out, "rundirs", "000-parity", pg._slug(r["label"])) for r in job["runs"]]
    cfgs = [TrainConfig.from_json(dict(r["config"])) for r in job["runs"]]
    batched.train_batched(cfgs, dirs, stop_at=2, evaluate_at_end=False)     # a call that ran out of time
    elapsed, pg_elapsed_1 = pg._elapsed(dirs[0]), pg._elapsed(dirs[1])
    assert elapsed > 0
    seen = {}
    real_resume, real_train = batched._resume, batched.train_batched

    def spy_resume(*a):
        st = real_resume(*a)
        seen["step"] = None if st is None else st["step"]
        return st

    def spy_train(cs, outs, **kw):
        seen["max_seconds"] = [c.max_seconds for c in cs]
        return real_train(cs, outs, **kw)
    monkeypatch.setattr(batched, "_resume", spy_resume)
    monkeypatch.setattr(batched, "train_batched", spy_train)
    recs = pg.run_protocol_job(job, out, safety_cap=1000.0)
    assert seen["step"] == 2                                 # resumed at step 2, not from 0
    # the call's cap is added to the seconds already trained (max_seconds counts them): the same float sum
    assert seen["max_seconds"] == [max(elapsed, pg_elapsed_1) + 1000.0] * 2
    assert all(r["result"]["steps"] == 4 for r in recs)
    steps = [json.loads(x).get("step") for x in open(os.path.join(dirs[0], "metrics.jsonl"))]
    assert steps == sorted(set(steps))                       # no step logged twice


def _job(label, R, steps, layer="deltanet", exp="000-parity", b=True):
    return {"experiment": exp, "label": label, "batched": b,
            "runs": [{"label": f"{label} {r}", "config": {"steps": steps, "layer": layer}} for r in range(R)]}


_COSTS = {"experiments": {"000-parity": {"rows": [{"label": "A", "ms_per_step": 6.0},
                                                  {"label": "B", "ms_per_step": 3.0}]}}}
_SPEED = {"rows": [{"shape": "parity-deltanet", "mode": "alone", "runs": 1, "speedup_vs_alone": 1.0},
                   {"shape": "parity-deltanet", "mode": "batched 4", "runs": 4, "speedup_vs_alone": 1.25},
                   {"shape": "parity-deltanet", "mode": "packed 8", "runs": 8, "speedup_vs_alone": 0.5},
                   {"shape": "parity-deltanet", "mode": "batched 8", "runs": 8, "speedup_vs_alone": 1.5}]}
_JOBS = [_job("A", 12, 10000), _job("B", 5, 10000), _job("A", 2, 10000, layer="diagonal"), _job("C", 1, 5)]


def test_the_dry_run_arithmetic():
    job, costs, speed = _job, _COSTS, _SPEED
    # minutes are float products and quotients (rounding ~1e-16 relative): rel 1e-12
    # 12 runs x 10000 steps x 6 ms = 12 min, / 1.5 (the largest batched R measured, not above 12) = 8 min
    assert pg.estimate_minutes(job("A", 12, 10000), costs, speed) == pytest.approx(8.0, rel=1e-12)
    # 5 runs: batched 4's 1.25; 5 x 10000 x 3 ms = 2.5 min / 1.25 = 2
    assert pg.estimate_minutes(job("B", 5, 10000), costs, speed) == pytest.approx(2.0, rel=1e-12)
    # one by one, or a shape not measured: no speed-up; no cost row: None
    assert pg.estimate_minutes(job("A", 2, 10000, b=False), costs, speed) == pytest.approx(2.0, rel=1e-12)
    assert pg.estimate_minutes(job("A", 2, 10000, layer="diagonal"), costs, speed) == pytest.approx(2.0, rel=1e-12)
    assert pg.estimate_minutes(job("C", 2, 10000), costs, speed) is None
    jobs = _JOBS
    plan = pg.plan(jobs, 2, costs, speed)
    assert [(g, m) for g, m, _ in plan] == [(0, pytest.approx(8.0)), (1, pytest.approx(2.0)),
                                            (1, pytest.approx(2.0)), (1, None)]
    text = pg.dry_run(jobs, 2, costs, speed)
    assert "gpu 0 total 8.0 min" in text and "gpu 1 total 4.0 min" in text and "no cost recorded" in text


def test_the_dry_run_counts_what_carried_checkpoints_left(tmp_path):
    """With the grid's folder, a job whose run directories hold checkpoints is priced at what is left: the job
    resumes at the fewest steps any of its runs reached (a batched job checkpoints its runs together)."""
    jobs, costs, speed = _JOBS, _COSTS, _SPEED
    from lrnnkit.learn import checkpoint as ck
    out = str(tmp_path)
    for i, d in enumerate(pg._run_dirs(out, jobs[0])):       # job A: 12 runs, 10000 steps, 8.0 min
        os.makedirs(d)
        with open(os.path.join(d, ck.CKPT_JSON), "w") as fh:
            json.dump({"step": 7500 if i else 7600}, fh)
    assert pg._steps_done(out, jobs[0]) == 7500 and pg._steps_done(out, jobs[1]) == 0
    text = pg.dry_run(jobs, 2, costs, speed, out=out)
    assert "at step 7500: 2.0 min left" in text and "gpu 0 total 2.0 min" in text
    # gpu 1: job B (2.0 min, no checkpoint) and the diagonal job, whose two runs are named as job A's first two
    # (same directories here, so also at step 7500: 2.0 x 2500 / 10000 = 0.5 min)
    assert "gpu 1 total 2.5 min" in text


def test_the_protocol_record_counts_every_seed_and_rate_of_a_grid():
    """Run files of the whole grid (one configuration label per group) leave no seeds or lr-sweep difference; one
    seed per configuration keeps it (the record reads the sweep, not the best run of each configuration)."""
    from lrnnkit.learn.protocols import protocol_record
    runs = {r["label"]: {"config": r["config"], "config_label": r["config_label"], "steps": r["config"]["steps"]}
            for j in pg.protocol_jobs(["000-parity"], "cpu") for r in j["runs"]}
    texts = lambda rec: " ".join(d["text"] for d in rec["differences"])     # noqa: E731
    whole = texts(protocol_record("000-parity", runs))
    assert "seeds:" not in whole and "learning-rate sweep" not in whole
    one = {k: r for k, r in runs.items() if r["config"]["seed"] == 0 and r["config"]["lr"] == 0.01}
    part = texts(protocol_record("000-parity", one))
    assert "seeds: 1" in part and "learning-rate sweep" in part


def test_pack_for_return_brings_the_run_files_back_in_one_file(tmp_path):
    """A device call returns files at most two folders below $OUT: the run records (three folders down) and the
    curves travel in ``runs.tgz``, the checkpoints apart in ``rundirs.tgz``; unpacked, they are the same bytes."""
    import tarfile
    rec = tmp_path / "runs" / "000-z60" / "a.json"
    rec.parent.mkdir(parents=True)
    rec.write_text('{"label": "a"}')
    met = tmp_path / "rundirs" / "000-z60" / "a" / "metrics.jsonl"
    met.parent.mkdir(parents=True)
    met.write_text('{"step": 1}\n')
    (met.parent / "checkpoint.json").write_text("{}")
    made = pg.pack_for_return(str(tmp_path))
    assert made[0].startswith("runs.tgz") and made[1].startswith("rundirs.tgz")
    with tarfile.open(tmp_path / "runs.tgz") as tf:
        names = sorted(tf.getnames())
        assert names == ["rundirs/000-z60/a/metrics.jsonl", "runs/000-z60/a.json"]
        assert tf.extractfile("runs/000-z60/a.json").read() == b'{"label": "a"}'
    with tarfile.open(tmp_path / "rundirs.tgz") as tf:
        assert "rundirs/000-z60/a/checkpoint.json" in tf.getnames()


def test_the_run_directories_travel_in_parts_with_what_resumes_them(tmp_path):
    """``rundirs*.tgz``: each run directory whole in one part, each part at most the limit before compression
    (largest first, first fit), only what resumes a run (the checkpoint's JSON and the tensors it names, the
    metrics), never the fallback checkpoint kept beside them nor the lock; a second pack leaves no stale part."""
    import tarfile

    import numpy as np
    rng = np.random.default_rng(0)
    want = {}
    for run, kib in (("a", 300), ("b", 200), ("c", 150), ("d", 100)):
        d = tmp_path / "rundirs" / "003-copy" / run
        d.mkdir(parents=True)
        (d / f"checkpoint-2-{run}.safetensors").write_bytes(rng.bytes(kib * 1024))
        (d / f"checkpoint-1-{run}.safetensors").write_bytes(rng.bytes(kib * 1024))     # the fallback's tensors
        (d / "checkpoint.json").write_text(json.dumps({"tensors": f"checkpoint-2-{run}.safetensors"}))
        (d / "checkpoint.prev.json").write_text(json.dumps({"tensors": f"checkpoint-1-{run}.safetensors"}))
        (d / "metrics.jsonl").write_text('{"step": 2}\n')
        (d / ".lock").write_text("1")
        want[run] = {"checkpoint.json", f"checkpoint-2-{run}.safetensors", "metrics.jsonl"}
    limit = 400 * 1024
    made = pg.pack_for_return(str(tmp_path), limit=limit)
    parts = sorted(p for p in os.listdir(tmp_path) if p.startswith("rundirs") and p.endswith(".tgz"))
    assert len(made) == 1 + len(parts) and parts == ["rundirs-1.tgz", "rundirs-2.tgz", "rundirs.tgz"]
    got, where = {}, {}
    for p in parts:
        with tarfile.open(tmp_path / p) as tf:
            members = tf.getmembers()
            assert sum(m.size for m in members) <= limit
            for m in members:
                run = m.name.split("/")[2]
                got.setdefault(run, set()).add(m.name.split("/")[3])
                assert where.setdefault(run, p) == p           # a run directory is never split between parts
    assert got == want                       # every run, whole, in exactly what resumes it
    # first fit, largest first: a (300 KiB) opens a part; b (200) does not fit beside it and opens a second, c (150)
    # joins b; d (100) fits neither (a's part would pass 400 KiB by the metadata) and opens a third
    assert where["b"] == where["c"] and len({where["a"], where["b"], where["d"]}) == 3
    pg.pack_for_return(str(tmp_path))        # one part now: the earlier parts are gone
    assert sorted(p for p in os.listdir(tmp_path) if p.startswith("rundirs") and p.endswith(".tgz")) == \
        ["rundirs.tgz"]


def test_a_run_directory_over_the_return_limit_travels_in_pieces_that_join(tmp_path, monkeypatch):
    """A part over the returned file size (one large run directory: 004's bilinear at width 256, 46 MiB) is cut into
    pieces ``NAME.000``, ``NAME.001``, ... that join (``cat``) into the archive, byte for byte; with fewer returned
    files left than pieces it is left out, and said. Sizes scaled down (a 64 KiB return limit) so the test is fast."""
    import tarfile

    import numpy as np
    monkeypatch.setattr(pg, "RETURN_BYTES", 64 * 1024)
    monkeypatch.setattr(pg, "PIECE_BYTES", 60 * 1024)
    d = tmp_path / "rundirs" / "004-bilinear" / "big"
    d.mkdir(parents=True)
    blob = np.random.default_rng(1).bytes(150 * 1024)          # random bytes: gzip cannot shrink them
    (d / "checkpoint-9.safetensors").write_bytes(blob)
    (d / "checkpoint.json").write_text(json.dumps({"tensors": "checkpoint-9.safetensors"}))
    made = pg.pack_for_return(str(tmp_path), limit=10 * 2**20)
    pieces = sorted(p for p in os.listdir(tmp_path) if p.startswith("rundirs.tgz."))
    assert pieces == ["rundirs.tgz.000", "rundirs.tgz.001", "rundirs.tgz.002"] and "3 pieces" in made[1]
    assert all(os.path.getsize(tmp_path / p) <= 60 * 1024 for p in pieces)
    joined = tmp_path / "joined.tgz"
    joined.write_bytes(b"".join((tmp_path / p).read_bytes() for p in pieces))
    with tarfile.open(joined) as tf:
        member = tf.extractfile("rundirs/004-bilinear/big/checkpoint-9.safetensors")
        assert member.read() == blob
    monkeypatch.setattr(pg, "RETURNED_FILES", 4)                # 2 slots left: 3 pieces do not fit
    made = pg.pack_for_return(str(tmp_path), limit=10 * 2**20)
    assert "left out" in made[1] and not [p for p in os.listdir(tmp_path) if p.startswith("rundirs.tgz")]


def test_parts_past_the_returned_files_are_not_even_compressed(tmp_path, monkeypatch):
    """With every returned file taken, the remaining parts are said to be left out without being compressed (a
    call's last seconds once went to compressing 377 MiB that could not come back)."""
    import tarfile
    monkeypatch.setattr(pg, "RETURNED_FILES", 3)                # runs.tgz, the log and one part
    for i in range(3):
        d = tmp_path / "rundirs" / "e" / f"r{i}"
        d.mkdir(parents=True)
        (d / "checkpoint-1.safetensors").write_bytes(bytes([i]) * 2048)
        (d / "checkpoint.json").write_text(json.dumps({"tensors": "checkpoint-1.safetensors"}))
    opened = []
    real = tarfile.open
    monkeypatch.setattr(tarfile, "open", lambda name, *a, **k: opened.append(os.path.basename(name)) or
                        real(name, *a, **k))
    made = pg.pack_for_return(str(tmp_path), limit=3000)       # one run directory a part: three parts
    assert [m.split()[0] for m in made] == ["runs.tgz", "rundirs.tgz", "rundirs-1.tgz", "rundirs-2.tgz"]
    assert "left out" in made[2] and "left out" in made[3] and "left out" not in made[1]
    assert opened == ["runs.tgz.tmp", "rundirs.tgz.tmp"]


def test_a_call_with_files_of_its_own_leaves_room_for_them(tmp_path, monkeypatch):
    """``LRNNKIT_RETURNED_FILES``: a call that writes files beside the grid's gives the pack fewer returned files, so
    ``runs.tgz`` is not pushed out of the device's first eight (found: a call's two own files and six run-directory
    pieces left ``runs.tgz`` behind); a value outside 2..8 is refused with the variable's name."""
    from lrnnkit.errors import InputError
    for i in range(3):
        d = tmp_path / "rundirs" / "e" / f"r{i}"
        d.mkdir(parents=True)
        (d / "checkpoint-1.safetensors").write_bytes(bytes([i]) * 2048)
        (d / "checkpoint.json").write_text(json.dumps({"tensors": "checkpoint-1.safetensors"}))
    monkeypatch.setenv("LRNNKIT_RETURNED_FILES", "3")
    made = pg.pack_for_return(str(tmp_path), limit=3000)
    assert ["left out" in m for m in made] == [False, False, True, True]
    monkeypatch.delenv("LRNNKIT_RETURNED_FILES")
    assert pg.returned_files() == pg.RETURNED_FILES
    for bad in ("1", "9", "x", "-3"):
        monkeypatch.setenv("LRNNKIT_RETURNED_FILES", bad)
        with pytest.raises(InputError, match="LRNNKIT_RETURNED_FILES"):
            pg.returned_files()
    # refused before any job runs, not at the pack after a call's training
    with pytest.raises(InputError, match="LRNNKIT_RETURNED_FILES"):
        pg.run_protocol([], str(tmp_path / "grid"), gpus=1)
    assert not (tmp_path / "grid").exists()


def test_a_deadline_caps_each_job_to_what_is_left():
    """``--deadline``: the next job trains for what is left before the deadline less the evaluation margin, never
    more than ``--safety-cap``, and is not started when under the least training time would be left."""
    m, least = pg.EVAL_MARGIN_S, pg.MIN_TRAIN_S
    assert pg.job_cap(0.0, None, None) is None and pg.job_cap(0.0, None, 300.0) == 300.0
    assert pg.job_cap(100.0, 100.0 + 500.0, None) == 500.0 - m
    assert pg.job_cap(100.0, 100.0 + 500.0, 200.0) == 200.0
    assert pg.job_cap(0.0, m + least, 200.0) == least             # exactly the least: started
    assert pg.job_cap(0.0, m + least - 1.0, 200.0) == 0.0         # under it: skipped
    assert pg.job_cap(50.0, 10.0, None) == 0.0                    # past the deadline


def test_a_fixed_point_job_keeps_more_back_for_its_evaluation():
    """The fixed-point layer's final evaluation iterates to convergence on every test word: its jobs keep
    EVAL_MARGIN_FIXED_POINT_S back, the others EVAL_MARGIN_S, in the cap and in the choice of the next job."""
    fp = {"label": "fp", "minutes": 4.0, "runs": [{"config": {"layer": "fixed-point"}}]}
    dg = {"label": "dg", "minutes": 4.0, "runs": [{"config": {"layer": "diagonal"}}]}
    m, mf = pg.EVAL_MARGIN_S, pg.EVAL_MARGIN_FIXED_POINT_S
    assert mf > m and pg.eval_margin(fp) == mf and pg.eval_margin(dg) == m and pg.eval_margin(None) == m
    assert pg.job_cap(0.0, 500.0, None, pg.eval_margin(fp)) == 500.0 - mf
    none_done = lambda j: 0.0  # noqa: E731
    assert pg.next_job([fp, dg], 0.0, 240.0 + m, none_done) == 1               # the diagonal one fits, fp not
    assert pg.next_job([fp, dg], 0.0, 240.0 + mf, none_done) == 0


def test_the_plan_orders_jobs_long_or_short_first():
    jobs = [{"experiment": "e", "label": x, "runs": []} for x in "abc"]
    minutes = {"a": 5.0, "b": 1.0, "c": None}
    real = pg.estimate_minutes
    pg.estimate_minutes = lambda j, c, s: minutes[j["label"]]
    try:
        assert [j["label"] for _, _, j in pg.plan(jobs, 1, {}, {})] == ["a", "b", "c"]
        assert [j["label"] for _, _, j in pg.plan(jobs, 1, {}, {}, "short")] == ["b", "a", "c"]
        with pytest.raises(ValueError):
            pg.plan(jobs, 1, {}, {}, "middle")
    finally:
        pg.estimate_minutes = real


def test_a_cost_row_prices_only_jobs_of_its_shape_and_protocol_rows_come_first(tmp_path):
    """A cost row prices a job only at the shape it was timed at (layer, batch, width, layers, training lengths):
    004's diagonal parity rows were timed at 004's own batch 64 and lengths 2-10, its protocol runs at 000's batch
    1024 and lengths 3-40, and the dry run priced those at the smaller shape (5.4 minutes against 35 measured).
    The protocol table's rows go first; a fixed-point row is scaled from the cap it was timed at (its
    ``fp_train_iters``, else the default 16) to the job's."""
    cfg = {"steps": 1000, "layer": "diagonal", "batch": 1024, "width": 128, "layers": 1, "train_len": [3, 40]}
    job = {"experiment": "e", "label": "A", "batched": False, "runs": [{"label": "A 0", "config": cfg}]}
    small = {"label": "A", "ms_per_step": 0.27, "layer": "diagonal", "batch": 64, "width": 64, "layers": 1,
             "train_len": [2, 10]}
    assert pg.same_shape(small, cfg) is False
    assert pg.same_shape({**small, "batch": 1024, "width": 128, "train_len": [3, 40]}, cfg) is True
    assert pg.same_shape({"label": "A", "ms_per_step": 1.0}, cfg) is True        # a row without shape fields
    assert pg.estimate_minutes(job, {"experiments": {"e": {"rows": [small]}}}, {}) is None
    loops, proto = tmp_path / "loops.json", tmp_path / "proto.json"
    fp = {"steps": 600, "layer": "fixed-point", "batch": 8, "width": 4, "layers": 1, "train_len": [5, 50],
          "fp_train_iters": 100}
    fp_row = {"label": "F", "layer": "fixed-point", "batch": 8, "width": 4, "layers": 1, "train_len": [5, 50]}
    loops.write_text(json.dumps({"experiments": {"e": {"rows": [small, {**fp_row, "ms_per_step": 10.0}]}}}))
    proto.write_text(json.dumps({"experiments": {"e": {"rows": [{**small, "ms_per_step": 6.0, "batch": 1024,
                                                                 "width": 128, "train_len": [3, 40]},
                                                                {**fp_row, "ms_per_step": 50.0,
                                                                 "fp_train_iters": 100},
                                                                {"label": "A", "error": "out of memory"}]}}}))
    costs = pg.load_costs(str(loops), str(proto))
    rows = costs["experiments"]["e"]["rows"]
    # the protocol rows first, the failed row left out
    assert [(r["label"], r["ms_per_step"]) for r in rows] == [("A", 6.0), ("F", 50.0), ("A", 0.27), ("F", 10.0)]
    # 1000 steps x 6 ms = 0.1 min; the fixed-point row timed at the job's cap unscaled: 600 x 50 ms = 0.5 min,
    # where the loops row (timed at 16) is scaled to the cap: 600 x 10 ms x 99 / 15 = 0.66 min; a job at 16 priced
    # from a row timed at 100: 600 x 50 ms x 15 / 99 (float products and quotients: rel 1e-12)
    assert pg.estimate_minutes(job, costs, {}) == pytest.approx(0.1, rel=1e-12)
    fjob = {"experiment": "e", "label": "F", "batched": False, "runs": [{"label": "F 0", "config": fp}]}
    assert pg.estimate_minutes(fjob, costs, {}) == pytest.approx(0.5, rel=1e-12)
    only_loops = pg.load_costs(str(loops), str(tmp_path / "absent.json"))
    assert pg.estimate_minutes(fjob, only_loops, {}) == pytest.approx(0.66, rel=1e-12)
    at16 = {**fjob, "runs": [{"label": "F 0", "config": {**fp, "fp_train_iters": 16}}]}
    assert pg.estimate_minutes(at16, costs, {}) == pytest.approx(0.5 * 15 / 99, rel=1e-12)
    # a row that timed the job's own R runs as one batched model prices the batched job by that step alone:
    # 1000 steps x 24 ms = 0.4 min (not 12 x 6 ms / a speed-up); another R falls back to the per-run rule
    timed = {**small, "ms_per_step": 6.0, "batch": 1024, "width": 128, "train_len": [3, 40],
             "batched": {"runs": 12, "ms_per_step": 24.0}}
    bjob = {**job, "batched": True, "runs": [{"label": f"A {r}", "config": cfg} for r in range(12)]}
    costs = {"experiments": {"e": {"rows": [timed]}}}
    assert pg.estimate_minutes(bjob, costs, {}) == pytest.approx(0.4, rel=1e-12)
    assert pg.estimate_minutes({**bjob, "runs": bjob["runs"][:6]}, costs, {}) == pytest.approx(0.6, rel=1e-12)


def test_measured_costs_take_a_whole_runs_rate_where_one_is_committed(tmp_path):
    """A committed paper-scale file's runs that trained every configured step replace the cost table's ms/step of
    their configuration (their mean); a capped run, another scale, or an unknown experiment change nothing."""
    costs = {"experiments": {"e": {"rows": [{"label": "A", "ms_per_step": 15.5}, {"label": "B", "ms_per_step": 3.0}]}}}
    runs = {"A (lr 0.1, seed 0)": {"config_label": "A", "steps": 10, "ms_per_step": 1.5, "config": {"steps": 10}},
            "A (lr 0.1, seed 1)": {"config_label": "A", "steps": 10, "ms_per_step": 2.5, "config": {"steps": 10}},
            "B (lr 0.1, seed 0)": {"config_label": "B", "steps": 4, "ms_per_step": 9.0, "config": {"steps": 10}}}
    (tmp_path / "e-paper.json").write_text(json.dumps({"name": "e", "scale": "paper", "runs": runs}))
    (tmp_path / "f-paper.json").write_text(json.dumps({"name": "f", "scale": "paper", "runs": runs}))
    got = pg.measured_costs(costs, str(tmp_path))
    a, b = got["experiments"]["e"]["rows"]
    assert (a["ms_per_step"], a["measured_in_runs"]) == (2.0, 2)
    assert b == {"label": "B", "ms_per_step": 3.0}
    assert costs["experiments"]["e"]["rows"][0]["ms_per_step"] == 15.5      # the table itself is left as it was


def test_given_seeds_reseed_every_configuration_at_every_rate():
    """``--seeds 1,2`` (``follow(..., seeds=)``): each configuration's runs at each learning rate become one run per
    given seed, labelled with it, the configuration otherwise the protocol's; bad seed lists are refused."""
    from lrnnkit.errors import InputError
    jobs = pg.protocol_jobs(["000-parity"], "cpu")
    got = pg.protocol_jobs(["000-parity"], "cpu", seeds=[1, 2])
    assert [j["label"] for j in got] == [j["label"] for j in jobs]
    for j, g in zip(jobs, got):
        rates = sorted({r["config"]["lr"] for r in j["runs"]})
        assert sorted((r["config"]["lr"], r["config"]["seed"]) for r in g["runs"]) == \
            sorted((lr, s) for lr in rates for s in (1, 2))
        for r in g["runs"]:
            base = next(x for x in j["runs"] if x["config"]["lr"] == r["config"]["lr"])
            assert {k: v for k, v in r["config"].items() if k != "seed"} == \
                {k: v for k, v in base["config"].items() if k != "seed"}
            assert r["label"].endswith(f"seed {r['config']['seed']})") and r["config_label"] == j["label"]
    for bad in ([], [1, 1], [-1], [True]):
        with pytest.raises(InputError):
            pg.protocol_jobs(["000-parity"], "cpu", seeds=bad)


def test_given_rates_replace_the_protocols_and_are_reported_as_a_difference():
    """``--lrs`` (``follow(..., lrs=)``): each configuration's runs at the given rates x its seeds, the configuration
    otherwise the protocol's; such runs never pass for the protocol (``differences`` names the rate), while the
    protocol's own runs differ in no ``config`` field; bad rate lists are refused."""
    from lrnnkit.errors import InputError
    from lrnnkit.learn.protocols import _groups, differences, follow
    jobs = pg.protocol_jobs(["000-z60"], "cpu")
    got = pg.protocol_jobs(["000-z60"], "cpu", seeds=[0], lrs=[1e-2, 1e-3])
    assert [j["label"] for j in got] == [j["label"] for j in jobs]
    for j, g in zip(jobs, got):
        assert sorted((r["config"]["lr"], r["config"]["seed"]) for r in g["runs"]) == [(1e-3, 0), (1e-2, 0)]
        for r in g["runs"]:
            assert {k: v for k, v in r["config"].items() if k != "lr"} == \
                {k: v for k, v in j["runs"][0]["config"].items() if k != "lr"}
            assert r["label"] == f"{j['label']} (lr {r['config']['lr']:g}, seed 0)"
    swept = {d.field for d in differences("000-z60", follow("000-z60", lrs=[1e-2]))}
    assert "lr" in swept
    assert "lr" not in {d.field for d in differences("000-z60", follow("000-z60"))}
    assert len(_groups(follow("000-z60", lrs=[1e-2]))) == len(_groups(follow("000-z60")))
    for bad in ([], [1e-3, 1e-3], [0.0], [-1e-3], [float("nan")], [True]):
        with pytest.raises(InputError):
            pg.protocol_jobs(["000-z60"], "cpu", lrs=bad)


def test_label_filters_keep_a_comma_inside_brackets():
    """``--labels "[-1,1]"`` once matched every job (split at its comma into "[-1" and "1]"); a comma inside
    brackets now belongs to the label."""
    assert bl.label_filters("Mamba-like diagonal [0,1],DeltaNet") == ["Mamba-like diagonal [0,1]", "DeltaNet"]
    assert bl.label_filters("[-1,1]") == ["[-1,1]"]
    assert bl.label_filters("swaps only,standard, ") == ["swaps only", "standard"]
    labels = ["Mamba-like diagonal [-1,1]", "Mamba-like diagonal [0,1]", "DeltaNet [-1,1]", "DeltaNet [0,1]"]
    assert [x for x in labels if any(f in x for f in bl.label_filters("[-1,1]"))] == [labels[0], labels[2]]


def test_the_next_job_is_one_that_finishes_before_the_deadline():
    """With a deadline, a GPU starts the first remaining job whose remaining minutes (less what its checkpoints
    already trained) and the evaluation margin fit; a job that would be cut waits while a later one fits; a job of
    unknown cost fits; when none fits, the first (it trains what is left and resumes later). No deadline: in order."""
    m = pg.EVAL_MARGIN_S
    jobs = [{"label": "long", "minutes": 4.5}, {"label": "short", "minutes": 2.9}, {"label": "?", "minutes": None}]
    none_done = lambda j: 0.0  # noqa: E731
    assert pg.next_job(jobs, 0.0, None, none_done) == 0
    assert pg.next_job(jobs, 0.0, 4.5 * 60 + m, none_done) == 0                 # exactly fits
    assert pg.next_job(jobs, 0.0, 4.5 * 60 + m - 1, none_done) == 1             # the long one would be cut
    assert pg.next_job(jobs[:1] + jobs[2:], 0.0, 60.0, none_done) == 1         # unknown cost counts as fitting
    assert pg.next_job(jobs[:2], 0.0, 60.0, none_done) == 0                    # none fits: the first
    resumed = lambda j: 200.0 if j["label"] == "long" else 0.0  # noqa: E731
    assert pg.next_job(jobs, 0.0, 4.5 * 60 - 200 + m, resumed) == 0            # its checkpoints hold 200 s


def test_runs_one_by_one_share_the_jobs_cap(tmp_path, monkeypatch):
    """A job trained one run after another gets its ``safety_cap`` once, shared: each run may train only until the
    job's end (its ``max_seconds`` = its checkpoints' seconds + what is left), a run left less than ``MIN_TRAIN_S``
    is not started, and a run whose record says finished is not trained again. Before, each run got the whole cap,
    and three runs overran a device call by three caps."""
    import time

    import lrnnkit.learn.train as train_mod
    from lrnnkit.learn.train import TrainConfig
    clock = [1000.0]
    monkeypatch.setattr(time, "time", lambda: clock[0])
    seen = []

    def fake_train(cfg, run_dir):      # uses every second it is given
        seen.append((run_dir, cfg.max_seconds))
        clock[0] += cfg.max_seconds
        return {"steps": cfg.steps}
    monkeypatch.setattr(train_mod, "train", fake_train)
    # 004's bilinear models (no batched form) at three seeds: a job of three runs one after another
    job = next(j for j in pg.protocol_jobs(["004-bilinear"], "cpu", seeds=[0, 1, 2]) if not j["batched"])
    assert len(job["runs"]) == 3
    cfgs = [TrainConfig.from_json(r["config"]) for r in job["runs"]]
    dirs = pg._run_dirs(str(tmp_path), job)
    # the first run finished in an earlier call: its record stands
    rp = pg._record_path(str(tmp_path), job["experiment"], job["runs"][0]["label"])
    os.makedirs(os.path.dirname(rp))
    with open(rp, "w") as fh:
        json.dump({"status": "ok", "result": {"steps": job["runs"][0]["config"]["steps"]}}, fh)
    got = pg._one_by_one(job, str(tmp_path), cfgs, dirs, until=clock[0] + 300.0)
    assert got[0] is None and got[2] is None and got[1] == {"steps": cfgs[1].steps}
    assert seen == [(dirs[1], 300.0)]              # the whole cap to the one run that trained, not to each
    seen.clear()
    clock[0] = 0.0
    got = pg._one_by_one(job, str(tmp_path), cfgs, dirs, until=pg.MIN_TRAIN_S - 1)
    assert got == [None, None, None] and seen == []     # too little left: nothing starts


def test_an_interrupted_call_stops_its_gpu_processes_with_sigint():
    """The call driver's outer timeout (SIGINT to the driver) is passed on as SIGINT to each GPU process, so that
    its runs write their checkpoints before the results are packed; a process that ignores it is killed."""
    import subprocess
    import sys
    code = ("import signal, sys, time\n"
            "signal.signal(signal.SIGINT, lambda *a: sys.exit(7))\n"
            "print('ready', flush=True)\n"
            "time.sleep(60)\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    deaf = subprocess.Popen([sys.executable, "-c", "import signal, time\nsignal.signal(signal.SIGINT, "
                             "signal.SIG_IGN)\nprint('ready', flush=True)\ntime.sleep(60)\n"],
                            stdout=subprocess.PIPE, text=True)
    assert deaf.stdout.readline().strip() == "ready"
    pg._stop([p, deaf], grace_s=2.0)
    assert p.returncode == 7                 # stopped by SIGINT, through its handler
    assert deaf.returncode == -9             # killed after the grace


def test_a_rate_sweep_is_recorded_apart_and_only_when_it_leaves_the_protocol(tmp_path):
    """``--record-sweep``: a summarised paper-scale record whose runs leave the protocol becomes
    ``<experiment>-lr-sweep.json`` with ``kind: lr-sweep`` (the registry's experiment entries skip it:
    test_rate_sweeps); a record that follows the protocol, or none, is refused with one line."""
    from lrnnkit.errors import InputError
    merged, res = tmp_path / "m", tmp_path / "res"
    merged.mkdir()
    res.mkdir()
    with pytest.raises(InputError, match="no .*000-z60.json"):
        bl.record_sweep(str(merged), "000-z60", str(res), str(res))
    doc = {"name": "000-z60", "paper": "000", "claim": "c", "scale": "paper", "runs": {},
           "protocol": {"follows": True, "statement": "", "differences": []}}
    (merged / "000-z60.json").write_text(json.dumps(doc))
    with pytest.raises(InputError, match="leave the protocol"):
        bl.record_sweep(str(merged), "000-z60", str(res), str(res))
    doc["protocol"]["follows"] = False
    (merged / "000-z60.json").write_text(json.dumps(doc))
    written = bl.record_sweep(str(merged), "000-z60", str(res), str(res))
    assert written == [str(res / "000-z60-lr-sweep.json")]
    got = json.loads((res / "000-z60-lr-sweep.json").read_text())
    assert got["kind"] == "lr-sweep" and got["sweep_of"] == "000-z60" and got["runs"] == {}


def test_packed_workers_split_the_one_by_one_runs_and_share_the_gpus(tmp_path, monkeypatch):
    """``per_gpu`` > 1: every run of a job that is not batched becomes a job of its own (the seeds of 004's bilinear
    configurations train side by side), batched jobs stay whole, no run is lost or doubled, and worker ``w`` is
    started on GPU ``w % gpus``."""
    jobs = pg.protocol_jobs(["004-bilinear"], "cpu", seeds=[0, 1, 2])
    split = pg.split_one_by_one(jobs)
    assert sorted(r["label"] for j in split for r in j["runs"]) == sorted(r["label"] for j in jobs for r in j["runs"])
    assert all(len(j["runs"]) == 1 for j in split if not j["batched"])
    assert [j for j in split if j["batched"]] == [j for j in jobs if j["batched"]]
    assert sum(not j["batched"] for j in split) == sum(len(j["runs"]) for j in jobs if not j["batched"]) > 3
    started = []

    class FakeProc:
        def __init__(self, argv, env):
            with open(argv[-2]) as fh:      # read at start: the spec files are removed when the workers are done
                started.append((argv[-2], env["CUDA_VISIBLE_DEVICES"], json.load(fh)))
            self.returncode = 0

        def wait(self, timeout=None):
            return 0

        def poll(self):
            return 0
    monkeypatch.setattr(pg.subprocess, "Popen", FakeProc)
    pg.run_protocol(jobs, str(tmp_path), gpus=2, per_gpu=3)
    assert len(started) == 6
    seen = []
    for path, dev, spec in started:
        w = int(os.path.basename(path)[len("protocol_jobs_worker"):-len(".json")])
        assert dev == str(w % 2)
        seen += [r["label"] for j in spec["jobs"] for r in j["runs"]]
        assert not os.path.exists(os.path.dirname(path))     # the specs' folder is gone, and was not under out
        assert not os.path.dirname(path).startswith(str(tmp_path))
    assert sorted(seen) == sorted(r["label"] for j in jobs for r in j["runs"])
    table = pg.dry_run(jobs, 2, per_gpu=3)
    assert "worker 5 gpu 1" in table and pg.PER_GPU_CAVEAT in table
    workers = {int(x.split()[1]): float(x.split(" total ")[1].split()[0]) for x in table.splitlines()
               if x.startswith("worker ") and " total " in x}
    cards = {int(x.split()[1]): float(x.split(" total ")[1].split()[0]) for x in table.splitlines()
             if x.startswith("gpu ") and " total " in x}
    assert set(cards) == {0, 1} and all(cards[c] > 0 and abs(cards[c] - sum(workers[w] for w in workers
                                                                             if w % 2 == c)) < 0.2 for c in cards)
    assert pg.PER_GPU_CAVEAT not in pg.dry_run(jobs, 2)
    with pytest.raises(ValueError):
        pg.run_protocol(jobs, str(tmp_path), gpus=1, per_gpu=0)


@pytest.mark.parametrize("argv, env_out, needle", [
    (["300", "CARRY", "--", "--only", "003-copy"], True, "holds no rundirs/ folder"),
    (["299", "--", "--only", "003-copy"], True, "at least 300"),
    (["30x", "--", "--only", "003-copy"], True, "whole number"),
    (["300", "--", "--only", "003-copy"], False, "set OUT"),
])
def test_the_call_wrapper_refuses_what_would_waste_a_call(argv, env_out, needle, tmp_path):
    """benchmarks/protocol_call.sh stops at once (exit 2, one line naming the problem, no grid started, nothing
    under OUT) on a carry folder without run directories -- a cold machine where a kept folder was expected, which
    would otherwise start every job again -- and on a bad budget or a missing OUT."""
    import subprocess
    argv = [str(tmp_path / "empty") if a == "CARRY" else a for a in argv]
    (tmp_path / "empty").mkdir()
    env = {k: v for k, v in os.environ.items() if k != "OUT"}
    if env_out:
        env["OUT"] = str(tmp_path / "out")
    p = subprocess.run(["bash", os.path.join(ROOT, "benchmarks", "protocol_call.sh"), *argv], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and needle in p.stderr and p.stderr.count("\n") == 1, p.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("visible, gpus, want", [
    (None, 2, ["0", "1"]),                     # no list: the first cards
    ("1,2,3", 3, ["1", "2", "3"]),             # the caller kept card 0 for other work in the call
    ("3, 1", 1, ["3"]),
    ("2", 2, ["0", "1"]),                      # the list names fewer cards than asked: the first cards
])
def test_workers_go_to_the_callers_visible_cards(visible, gpus, want, monkeypatch):
    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    assert pg.cards(gpus) == want


def test_split_batched_spreads_a_jobs_runs_over_parts_in_order():
    """--split N: a batched job of R runs becomes min(N, R) jobs whose runs, in order, are the job's; parts differ
    by at most one run; every part stays batched (a one-run part too: the loop and code of the whole batch); jobs
    that are not batched, and N = 1, are kept."""
    runs = [{"label": f"r{i}"} for i in range(12)]
    job = {"experiment": "e", "label": "x", "runs": runs, "batched": True}
    alone = {"experiment": "e", "label": "y", "runs": runs[:3], "batched": False}
    assert pg.split_batched([job, alone], 1) == [job, alone]
    for n in (2, 4, 5, 12, 20):
        parts = pg.split_batched([job, alone], n)
        mine = [p for p in parts if p["label"] == "x"]
        assert len(mine) == min(n, 12) and [r for p in mine for r in p["runs"]] == runs
        sizes = [len(p["runs"]) for p in mine]
        assert max(sizes) - min(sizes) <= 1 and all(p["batched"] for p in mine)
        assert parts[-1] is alone
    with pytest.raises(ValueError):
        pg.split_batched([job], 0)


@pytest.mark.parametrize("first, deadline_left, starts", [
    (-11, None, 2),      # killed by a signal: started once more
    (-11, 5.0, 1),       # ... unless the deadline leaves too little
    (1, None, 1),        # an error status (an exception, which would repeat): not again
    (0, None, 1),
])
def test_a_worker_killed_by_a_signal_is_started_once_more(first, deadline_left, starts, capsys):
    """run_protocol's wait (_wait_workers): a worker whose process a signal killed is started again once while the
    deadline allows (its finished jobs skip, the job it died in resumes from its checkpoints); a second death is
    not retried; an error status is not; the new processes join the list an interrupt stops."""
    import time

    class Proc:
        def __init__(self, rc):
            self.rc = rc

        def poll(self):
            return self.rc
    made = []

    def start(w):
        made.append(w)
        return Proc(-11)            # dies again: no third start
    procs = [Proc(first)]
    deadline = None if deadline_left is None else time.time() + deadline_left
    pg._wait_workers({3: procs[0]}, start, procs, 2, deadline)
    assert 1 + len(made) == starts and len(procs) == starts and all(w == 3 for w in made)
    out = capsys.readouterr().out
    assert ("started once more" in out) == (starts == 2)
    assert ("exited with status" in out) == (first != 0)


def test_a_job_killed_after_its_last_step_only_evaluates_again(tmp_path, monkeypatch):
    """What a restarted worker does with the job it died in after training (no record written): the runs resume
    from their final checkpoints, train no step, and write their records with the evaluation."""
    out = str(tmp_path)
    job = _tiny_job()
    dirs = [os.path.join(out, "rundirs", "000-parity", pg._slug(r["label"])) for r in job["runs"]]
    cfgs = [TrainConfig.from_json(dict(r["config"])) for r in job["runs"]]
    batched.train_batched(cfgs, dirs, evaluate_at_end=False)               # trained to the end, then killed
    assert not any(pg._finished(out, "000-parity", r) for r in job["runs"])
    seen = []
    real = batched._resume
    monkeypatch.setattr(batched, "_resume", lambda *a: seen.append(real(*a)) or seen[-1])
    recs = pg.run_protocol_job(job, out, safety_cap=1000.0)
    assert [st["step"] for st in seen] == [cfgs[0].steps]               # resumed at the last step: nothing trained
    assert [r["status"] for r in recs] == ["ok"] * len(cfgs)
    assert all(r["result"]["steps"] == c.steps and r["result"]["test_accuracy"] for r, c in zip(recs, cfgs))
    assert all(pg._finished(out, "000-parity", r) for r in job["runs"])


def test_the_dry_run_says_which_jobs_checkpoints_a_call_cannot_carry():
    """A job's checkpoint size is its runs x one run's checkpoint bound (the model built on the meta device equals the
    one built for real); 003's width-512 fixed-point jobs exceed the 64 MiB a call carries, and the dry run says
    so, 000-s5's small DeltaNet jobs do not (their lines carry the size alone)."""
    from lrnnkit.learn.checkpoint import state_bytes
    from lrnnkit.learn.train import build
    jobs = {j["label"]: j for j in pg.protocol_jobs(["003-state-tracking", "000-s5"], device="cpu")}
    big, small = jobs["A5 fixed-point r=2 1L"], jobs["S5 standard, DeltaNet [-1,1] 1L"]
    _, model, _ = build(TrainConfig.from_json(big["runs"][0]["config"]))
    assert pg.checkpoint_bytes(big) == len(big["runs"]) * state_bytes(model) > pg.CARRY_BYTES
    assert pg.checkpoint_bytes(small) < pg.CARRY_BYTES
    text = pg.dry_run([big, small], 1)
    lines = text.splitlines()
    assert "over the 64 MiB a call carries" in next(ln for ln in lines if "fixed-point r=2" in ln)
    assert "over the 64 MiB" not in next(ln for ln in lines if "S5 standard" in ln)
    assert "checkpoints" in next(ln for ln in lines if "S5 standard" in ln)
