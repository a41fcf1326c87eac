"""The end-to-end showcase (lrnnkit.showcase.demo) and its HTML report (lrnnkit.showcase.report).

Quick tests run a subset of the demo (three automata) end to end into a temp dir; the full default demo is in the
deep profile (``-m slow``). The demo's automata are presets (lrnnkit.automata.sources), checked here against
independent oracles: sympy's permutation groups for the group word problems, and direct evaluation of the language
for the others.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lrnnkit.automata.sources import load_source
from lrnnkit.showcase import demo as D
from lrnnkit.showcase.steps import StepTimeout, time_limit
from lrnnkit.errors import InputError
from proofs_tests._paths import REPO

QUICK_KEYS = ("parity", "flipflop", "reset-kr")


def _cases(keys):
    return [c for c in D.DEFAULT_CASES if c.key in keys]


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo_quick")
    summary = D.run_demo(out, progress=False, cases=_cases(QUICK_KEYS))
    return out, summary


# --------------------------------------------------------------------------- the demo's automata vs oracles
@pytest.mark.parametrize("spec,order,gens", [
    ("group:S5", 120, [[1, 0, 2, 3, 4], [1, 2, 3, 4, 0]]),
    ("group:A5", 60, [[1, 2, 0, 3, 4], [0, 1, 3, 4, 2], [0, 2, 3, 1, 4]]),
    ("group:D4", 8, [[1, 2, 3, 0], [0, 3, 2, 1]]),
    ("group:Z5", 5, [[1, 2, 3, 4, 0]]),
])
def test_demo_group_word_problem_matches_sympy(spec, order, gens):
    """delta[g, h] must be the product 'first g, then h' (docs/conventions.rst); sympy's p*q also applies p first."""
    from sympy.combinatorics import Permutation, PermutationGroup
    fsa = load_source(spec)
    G = PermutationGroup([Permutation(g) for g in gens])
    assert G.order() == order == fsa.n_states == fsa.n_letters
    # recover each state's permutation from its name (docs/conventions.rst, "Groups"): cycle notation, a rotation
    # count k for Z_m, r<k> / s<k> for D_m (rotation i -> i + k, reflection i -> k - i)
    n = len(gens[0])

    def perm_of(name):
        if re.fullmatch(r"\d+", name):           # Z_m: rotation by k
            k = int(name)
            return Permutation([(p + k) % n for p in range(n)])
        dihedral = re.fullmatch(r"([rs])(\d+)", name)
        if dihedral:
            k = int(dihedral[2])
            return Permutation([(p + k) % n if dihedral[1] == "r" else (k - p) % n for p in range(n)])
        img = list(range(n))
        for cyc in re.findall(r"\(([\d,]*)\)", name):
            pts = [int(x) for x in cyc.split(",") if x]
            for a, b in zip(pts, pts[1:] + pts[:1]):
                img[a] = b
        return Permutation(img)

    perms = [perm_of(s) for s in fsa.state_names]
    assert set(perms) == set(G.elements)
    assert perms[fsa.start] == Permutation(list(range(n)))
    index = {p: i for i, p in enumerate(perms)}
    for g in range(fsa.n_states):
        for h in range(fsa.n_letters):
            assert fsa.delta[g, h] == index[perms[g] * perms[h]]


def _pairs_parity(word):
    return sum(1 for a, b in zip(word, word[1:]) if a != b) % 2


@given(st.lists(st.sampled_from(["0", "1"]), max_size=12))
def test_demo_even_pairs_language(word):
    fsa = load_source("even-pairs")
    out = fsa.output_trace(fsa.encode(word))
    for t in range(len(word)):
        assert out[t] == ("1" if _pairs_parity(word[: t + 1]) == 0 else "0")


def _eval_mod(tokens, m):
    """Independent evaluator of a well-formed digit/operator sequence with * before + and - (no eval)."""
    terms, sign, prod = [], 1, None
    for i, tok in enumerate(tokens):
        if i % 2 == 0:
            prod = int(tok) if prod is None else prod * int(tok)
        elif tok == "*":
            continue
        else:
            terms.append(sign * prod)
            sign, prod = (1 if tok == "+" else -1), None
    terms.append(sign * prod)
    return sum(terms) % m


@given(st.lists(st.tuples(st.integers(0, 4), st.sampled_from(["+", "-", "*"])), min_size=1, max_size=7))
def test_demo_mod_arith_precedence(pairs):
    fsa = load_source("mod-arith:5")
    toks = []
    for d, op in pairs:
        toks += [str(d), op]
    toks = toks[:-1]                              # end on a digit
    out = fsa.output_trace(fsa.encode(toks))
    for t in range(0, len(toks), 2):              # after every digit the output is the value of the prefix
        assert out[t] == str(_eval_mod(toks[: t + 1], 5)), toks[: t + 1]
    bad = fsa.output_trace(fsa.encode(["1", "2"]))
    assert bad[-1] == "error"                     # two digits in a row (builders.mod_arith)


def test_every_demo_source_is_a_preset():
    """The demo keeps no automata of its own: every case's source is a preset, and a source that is none is an
    InputError of the preset parser."""
    for case in D.DEFAULT_CASES:
        fsa = load_source(case.source)
        assert fsa.n_states >= 2 and fsa.n_letters >= 1, case.key
    with pytest.raises(InputError, match="unknown group name 'Q8'"):
        load_source("group:Q8")


# --------------------------------------------------------------------------- step machinery
def test_time_limit_nests():
    with pytest.raises(StepTimeout) as outer:
        with time_limit(0.6):
            with pytest.raises(StepTimeout) as inner:
                with time_limit(0.2):
                    time.sleep(2)
            assert inner.value.seconds == 0.2
            time.sleep(2)
    assert outer.value.seconds == 0.6
    # an inner limit longer than the outer one cannot extend it
    with pytest.raises(StepTimeout) as exc:
        with time_limit(0.2):
            with time_limit(5):
                time.sleep(2)
    assert exc.value.seconds == 0.2


# --------------------------------------------------------------------------- end to end (subset)
def test_quick_demo_summary(quick_run):
    out, s = quick_run
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk == s
    assert set(D.SUMMARY_KEYS) <= set(s)
    assert s["exit_status"] == 0 and s["status"] == "ok", s["core_failures"]
    assert list(s["automata"]) == list(QUICK_KEYS)
    for key, e in s["automata"].items():
        assert e["certified"] is True and e["method"] == "exact-bfs", key
        assert e["float_check"]["mismatches"] == 0
        assert e["trace"]["agree"] is True
        assert e["trace"]["model"] == e["trace"]["automaton"]
        # eigenvalues of GH products with beta in [0, 2] lie in the closed unit disc (000, Proposition 1);
        # tolerance 1e-9: numpy.linalg.eigvals of an exactly orthogonal / projection float64 matrix
        assert all(x * x + y * y <= 1 + 1e-9 for x, y in e["eigenvalues"]), key
    assert s["automata"]["reset-kr"]["construction"] == "krohn-rhodes"
    names = [st_["name"] for st_ in s["steps"]]
    for key in QUICK_KEYS:
        assert f"compile {key}" in names and f"certify {key}" in names
    for st_ in s["steps"]:
        assert st_["status"] in ("ok", "failed", "skipped")
        if st_["status"] != "ok":
            assert st_["reason"] and "\n" not in st_["reason"]


def test_quick_demo_report_references_existing_images(quick_run):
    out, s = quick_run
    html = (out / "report.html").read_text()
    srcs = re.findall(r'<img src="([^"]+)"', html)
    assert "eigenvalues.png" in srcs and "certification.png" in srcs
    for src in srcs:
        p = out / src
        assert p.is_file() and p.stat().st_size > 1000, src
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert set(s["plots"]) <= set(os.listdir(out))
    for key in QUICK_KEYS:
        assert s["automata"][key]["title"] in html


def test_demo_records_a_failed_core_step_and_carries_on(tmp_path, monkeypatch):
    real = D._compile

    def flaky(fsa, construction):
        if fsa.name == "flipflop":
            raise RuntimeError("simulated failure\nsecond line")
        return real(fsa, construction)

    monkeypatch.setattr(D, "_compile", flaky)
    s = D.run_demo(tmp_path, progress=False, cases=_cases(("parity", "flipflop")), kernels=False, precision=False)
    assert s["exit_status"] == 1 and s["status"] == "failed"
    assert "compile flipflop" in s["core_failures"] and "certify flipflop" in s["core_failures"]
    step = next(x for x in s["steps"] if x["name"] == "compile flipflop")
    assert step["status"] == "failed" and step["reason"] == "RuntimeError: simulated failure"
    assert s["automata"]["parity"]["certified"] is True          # the demo carried on
    assert (tmp_path / "report.html").is_file()
    assert "simulated failure" in (tmp_path / "report.html").read_text()


def test_demo_optional_failure_keeps_exit_status(tmp_path, monkeypatch):
    def broken(model, fsa, device):
        raise RuntimeError("no kernels today")

    monkeypatch.setattr(D, "_run_kernels", broken)
    s = D.run_demo(tmp_path, progress=False, cases=_cases(("parity",)), kernels=True, precision=False)
    assert s["exit_status"] == 0
    k = next(x for x in s["steps"] if x["name"] == "kernels parity")
    assert k["status"] == "failed" and k["reason"] == "RuntimeError: no kernels today" and not k["core"]


def test_demo_uncertified_model_is_a_core_failure(tmp_path, monkeypatch):
    """A model that compiles but is wrong must fail the demo: flip the readout of parity's model."""
    real = D._compile

    def wrong(fsa, construction):
        m = real(fsa, construction)
        m.readout.table = m.readout.table[::-1].copy()
        return m

    monkeypatch.setattr(D, "_compile", wrong)
    s = D.run_demo(tmp_path, progress=False, cases=_cases(("parity",)), kernels=False, precision=False)
    assert s["exit_status"] == 1
    c = next(x for x in s["steps"] if x["name"] == "certify parity")
    assert c["status"] == "failed" and c["reason"].startswith("not certified")
    assert s["automata"]["parity"]["counterexample"] is not None


def _visible(html: str) -> str:
    """The text a reader sees without opening anything: <details> bodies, tooltips and tags removed."""
    html = re.sub(r"<details>.*?</details>", "", html, flags=re.S)
    html = re.sub(r'title="[^"]*"', "", html)
    return re.sub(r"<[^>]+>", " ", html)


def test_quick_demo_report_is_readable_at_a_glance(quick_run):
    """The verdict is the second column of the automata table (visible without scrolling sideways); the
    impossibility section shows pivots with short numbers (no 39-digit integers on the page: rounded, exact in a
    tooltip or a collapsed table); the kernels line says whether they ran compiled or interpreted."""
    out, s = quick_run
    html = (out / "report.html").read_text()
    first = re.search(r"<table><thead><tr>(.*?)</tr>", html).group(1)
    assert re.findall(r"<th>(.*?)</th>", first)[:2] == ["case", "verdict"]
    vis = _visible(html)
    assert not re.findall(r"\d{10,}", vis), re.findall(r"\d{10,}", vis)[:3]
    assert html.count('class="pivot"') >= 2 and "all 60 rows" in html
    ker = s.get("kernels") or {}
    if ker:
        assert ker["mode"] in ("compiled", "interpreted")
        assert f"{ker['mode']} Triton kernels" in vis


def test_long_numbers_rounded_with_the_exact_value_in_a_tooltip():
    from lrnnkit.showcase.report import _cell, _headline
    big = 340282356779733661637539395458142568448
    assert _cell(big) == f'<span class="num" title="{big}">3.4e+38</span>'
    assert _cell({"pre_period": big, "period": 1}).endswith("+1") and "3.4e+38" in _cell({"pre_period": big,
                                                                                          "period": 1})
    assert _cell(1234567) == "1234567"
    assert _headline({"first_wrong_step": None, "exact_for_all_lengths": True}) == "never"
    assert _headline({"first_wrong_step": None}) == "none"
    assert _headline({"first_wrong_step": 12}) == "12"


def _keep_artefact(path, name: str) -> None:
    """Copy a file the tests made (a screenshot) to $LRNNKIT_ARTEFACTS (default: test_artefacts/ in the
    checkout, git-ignored), for a person to look at after the run."""
    dest = os.environ.get("LRNNKIT_ARTEFACTS") or os.path.join(REPO, "test_artefacts")
    os.makedirs(dest, exist_ok=True)
    shutil.copyfile(path, os.path.join(dest, name))


# --------------------------------------------------------------------------- headless Chromium
def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


@pytest.mark.skipif(_chromium() is None, reason="chromium not installed (apt-get install -y chromium)")
def test_report_renders_in_headless_chromium(quick_run, tmp_path):
    out, _s = quick_run
    shot = tmp_path / "report.png"
    r = subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--window-size=1200,1600", f"--screenshot={shot}", (out / "report.html").as_uri()],
                       capture_output=True, text=True, timeout=120)
    assert shot.is_file(), r.stderr[-2000:]
    _keep_artefact(shot, "demo_report.png")
    from matplotlib.image import imread
    img = imread(str(shot))
    assert img.shape[0] == 1600 and img.shape[1] == 1200
    # a rendered page is not blank: many distinct colours (text, tables, the plots)
    px = (img[..., :3] * 255).astype(np.uint8).reshape(-1, 3)
    assert len(np.unique(px[:: 7], axis=0)) > 50


# --------------------------------------------------------------------------- the full default demo
@pytest.mark.slow
def test_full_default_demo(tmp_path):
    s = D.run_demo(tmp_path, progress=False)
    assert s["exit_status"] == 0, s["core_failures"]
    assert [c.key for c in D.DEFAULT_CASES] == list(s["automata"])
    assert all(e["certified"] for e in s["automata"].values())
    html = (tmp_path / "report.html").read_text()
    for src in re.findall(r'<img src="([^"]+)"', html):
        assert (tmp_path / src).is_file(), src
