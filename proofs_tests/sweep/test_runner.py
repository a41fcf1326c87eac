"""lrnnkit sweep without Ray (lrnnkit.sweep.runner): records equal to direct calls, failed points recorded while the
others go on, resumption without recomputing, the summary and heat map, the CLI contract (docs/cli.rst). Specs,
the store and the job kinds have their own files (test_spec.py, test_store.py, test_jobs.py)."""
from __future__ import annotations

import json
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lrnnkit.cli import main
from lrnnkit.sweep import RecordStore, parse_spec, run_sweep, strip_meta
from lrnnkit.sweep.jobs import run_collapse

SMALL = {"kind": "collapse", "params": {"steps": 300},
         "grid": {"source": ["parity", "group:S3", "counter:3"], "format": ["fp8-e4m3-ieee", "bf16"]}}


def _write(tmp_path, text, name="spec.toml"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_missing_spec_and_bad_options(tmp_path, capsys):
    assert main(["sweep", str(tmp_path / "none.toml")]) == 2
    assert "none.toml" in capsys.readouterr().err
    path = _write(tmp_path, 'kind = "collapse"\n[grid]\nsource = ["parity"]\nformat = ["bf16"]\n')
    assert main(["sweep", path, "--address", "auto", "--out", str(tmp_path / "o")]) == 2
    assert "--address 'auto' needs --executor ray" in capsys.readouterr().err
    (tmp_path / "file").write_text("x")
    assert main(["sweep", path, "--out", str(tmp_path / "file")]) == 2
    assert "not a directory" in capsys.readouterr().err


# --------------------------------------------------------------------------- running
def test_serial_sweep_records_match_direct_calls(tmp_path):
    res = run_sweep(dict(SMALL), str(tmp_path), progress=False, plots=False)
    spec = parse_spec(dict(SMALL))
    assert res["done"] == 6 and res["failed"] == 0 and res["computed"] == 6 and res["spec_hash"] == spec.spec_hash
    for p, r in zip(spec.points(), res["records"]):
        direct = run_collapse(dict(p), spec.point_seed(p))
        assert {k: r[k] for k in direct} == json.loads(json.dumps(direct))
        assert {k: r[k] for k in p} == p and r["seed"] == spec.point_seed(p)
    again = run_sweep(dict(SMALL), str(tmp_path), progress=False, plots=False)
    assert again["computed"] == 0 and strip_meta(again["records"]) == strip_meta(res["records"])


def test_a_failing_point_is_recorded_and_the_others_go_on(tmp_path, capsys):
    path = _write(tmp_path, 'kind = "collapse"\n[params]\nsteps = 100\n[grid]\n'
                            'source = ["parity", "group:NOPE", "counter:3"]\nformat = ["bf16"]\n')
    out = tmp_path / "o"
    assert main(["sweep", path, "--out", str(out), "--json"]) == 1          # 1: some point failed
    res = json.loads(capsys.readouterr().out)
    assert (res["done"], res["failed"], res["computed"]) == (2, 1, 3)
    bad = [r for r in res["records"] if r["status"] == "failed"]
    assert len(bad) == 1 and bad[0]["source"] == "group:NOPE" and "NOPE" in bad[0]["error"]
    assert bad[0]["error"].startswith("InputError:")
    # a rerun tries the failed point again (and only it)
    assert main(["sweep", path, "--out", str(out), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["computed"] == 1


def test_interrupted_sweep_resumes_without_recomputing(tmp_path):
    """Ctrl-C after 3 points: those 3 are in the store; the rerun computes exactly the other points, and the
    records equal an uninterrupted run's."""
    calls = []

    def job(point, seed):
        if len(calls) == 3 and not job.interrupted:
            job.interrupted = True
            raise KeyboardInterrupt
        calls.append(json.dumps(point, sort_keys=True))
        return run_collapse(point, seed)
    job.interrupted = False
    with pytest.raises(KeyboardInterrupt):
        run_sweep(dict(SMALL), str(tmp_path / "a"), job_fn=job, progress=False, plots=False)
    first = list(calls)
    assert len(RecordStore(str(tmp_path / "a")).load()) == 3
    res = run_sweep(dict(SMALL), str(tmp_path / "a"), job_fn=job, progress=False, plots=False)
    assert res["computed"] == 3 and res["done"] == 6 and res["missing"] == 0
    assert not set(calls[3:]) & set(first) and len(calls) == 6
    ref = run_sweep(dict(SMALL), str(tmp_path / "b"), progress=False, plots=False)
    assert strip_meta(res["records"]) == strip_meta(ref["records"])


def test_cli_summary_table_and_heat_map(tmp_path, capsys):
    path = _write(tmp_path, 'kind = "collapse"\n[params]\nsteps = 200\n[grid]\n'
                            'source = ["counter:5", "group:S3"]\nformat = ["fp8-e4m3-ieee", "fp32"]\npolicy = ["matvec"]\n')
    assert main(["sweep", path, "--out", str(tmp_path / "o")]) == 0
    text = capsys.readouterr().out
    assert "source=counter:5" in text and "fp8-e4m3-ieee" in text and "computed 4 point(s)" in text
    png = (tmp_path / "o" / "collapse_heatmap.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["done"] == 4 and "records" not in summary


def test_records_file_is_json_lines_with_the_spec_hash(tmp_path):
    res = run_sweep(dict(SMALL), str(tmp_path), progress=False, plots=False)
    lines = (tmp_path / "records.jsonl").read_text().splitlines()
    assert len(lines) == 6 and all(json.loads(x)["spec_hash"] == res["spec_hash"] for x in lines)
    assert json.loads((tmp_path / "spec.json").read_text())["spec_hash"] == res["spec_hash"]
    assert os.path.exists(tmp_path / "summary.txt")


@pytest.mark.parametrize("address, needle", [("127.0.0.1:1", "cannot reach the Ray cluster at '127.0.0.1:1'"),
                                             ("nonsense", "bad Ray address 'nonsense'")])
def test_an_unreachable_cluster_is_one_line_exit_2(tmp_path, capsys, address, needle):
    """(Ray installed; not initialised in this process, else the running Ray is used as is.)"""
    pytest.importorskip("ray")
    spec = tmp_path / "s.toml"
    spec.write_text('kind = "collapse"\n[grid]\nsource = ["parity"]\nformat = ["bf16"]\n')
    assert main(["sweep", str(spec), "--executor", "ray", "--address", address, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err


def _seeded_job(point, seed):
    import numpy as np
    return {"draw": int(np.random.default_rng(seed).integers(0, 2**31))}


@given(xs=st.lists(st.integers(0, 9), min_size=1, max_size=3, unique=True),
       ys=st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3, unique=True))
def test_records_do_not_depend_on_axis_order_or_run_order(tmp_path_factory, xs, ys):
    """The same point gets the same record (seed, draw) whatever the axis order or the order of the values."""
    d1, d2 = tmp_path_factory.mktemp("a"), tmp_path_factory.mktemp("b")
    r1 = run_sweep({"kind": "custom", "grid": {"x": xs, "y": ys}}, str(d1), job_fn=_seeded_job, progress=False)
    r2 = run_sweep({"kind": "custom", "grid": {"y": ys[::-1], "x": xs[::-1]}}, str(d2), job_fn=_seeded_job,
                   progress=False)
    def strip(rs):
        return sorted(({k: v for k, v in r.items() if k not in ("meta", "spec_hash")} for r in rs),
                      key=lambda r: r["point_key"])
    assert strip(r1["records"]) == strip(r2["records"])


def test_ray_executor_without_ray_installed_is_one_line_exit_2(tmp_path, capsys, monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "ray", None)           # `import ray` fails, as without the extra
    path = _write(tmp_path, 'kind = "collapse"\n[grid]\nsource = ["parity"]\nformat = ["bf16"]\n')
    assert main(["sweep", path, "--executor", "ray", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert "pip install -e '.[ray]' in the lrnnkit checkout" in err and "\n" not in err


def test_one_letter_collapse_is_bounded_by_steps():
    """A one-letter automaton: the period search is bounded by ``steps`` inside lrnnkit.precision.collapse, so a
    run with no period within ``steps`` checks exactly ``steps`` outputs (no verdict for all lengths), and one
    whose period shows gets a verdict for every length."""
    from lrnnkit.sweep.jobs import run_collapse
    r = run_collapse({"source": "counter:7", "format": "fp32", "steps": 50}, 0)
    assert r["steps_run"] == 50 and r["exact_for_all_lengths"] is False and r["period"] is None
    r = run_collapse({"source": "counter:3", "format": "fp8-e4m3-ieee", "steps": 50}, 0)
    assert r["exact_for_all_lengths"] is True and r["period"] == 3 and r["first_wrong_step"] is None
