"""Fuzzing the command line: whatever the arguments and input files, ``lrnnkit`` exits 0, 1 or 2 and never prints
an internal error or a traceback (docs/limits.rst: "What an error looks like").

The argument vectors are drawn from the real parser (:func:`lrnnkit.cli.build_parser`): a verb, its positionals
and any subset of its flags, with values from the flag's own ``choices``, integers that include the extremes
(negative, zero, 2^63, 10^30), texts with control characters, and paths to files hypothesis writes (JSON
automata and models, mutated from valid ones; TOML sweep specs). The CLI runs in process (``lrnnkit.cli.main``).
Verbs whose work is long by design are left out (``demo``, ``docs``, ``train``, ``experiment``, ``precision impossibility``,
``theorems --check``): their limits have their own tests; numbers that set the amount of work (``--steps``,
``steps`` of a spec) are drawn small, except for values past the limits, which must be refused before work.
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lrnnkit.cli import build_parser, main

SKIP_VERBS = {"demo", "docs", "train", "experiment"}


def _verbs() -> dict:
    """verb (``precision cast``: a tuple) -> its subparser, from the real parser."""
    out = {}

    def walk(parser, prefix):
        for a in parser._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sp in a.choices.items():
                    walk(sp, prefix + (name,))
                return
        out[prefix] = parser
    walk(build_parser(), ())
    return {k: v for k, v in out.items() if k[0] not in SKIP_VERBS and k != ("precision", "impossibility")}


VERBS = _verbs()

HUGE = [-1, 0, 1, 2, 2 ** 31, 2 ** 63, 10 ** 30, -(10 ** 30)]
CONTROL_TEXT = st.text(alphabet=st.sampled_from(list("ab01 :.,-_/\\{}[]()*+?|^$") + ["\x1b", "\n", "\x00", "é",
                                                                                         "\u202e"]), max_size=12)
SOURCES = st.one_of(
    st.sampled_from(["parity", "flipflop", "even-pairs", "counter:3", "counter:0", "counter:-2", "counter:x",
                     "counter:100000000", "cycle-nav:4", "mod-arith:3", "group:Z3", "group:S3", "group:A4xZ2",
                     "group:NOPE", "group:S9", "regex:(ab)*", "regex:a{999}", "regex:(a{300}){300}", "regex:",
                     "regex:(", "transformations:[[1,0],[0,0]]", "transformations:[[5]]", "transformations:x",
                     "even-pairs:3", "parity:3", "nope", "./nope", "nope.json", "", " ", "/dev/zero", "/dev/null",
                     "FSA", "FIFO", "LINK"]),
    st.builds(lambda s: "regex:" + s, st.text(alphabet=st.sampled_from(list("ab|*+?(){}123,.[]^")), max_size=10)),
    CONTROL_TEXT,
)
SMALL_STEPS = st.one_of(st.integers(1, 300), st.sampled_from(HUGE))
SPEC_STEPS = st.one_of(st.integers(1, 300), st.sampled_from(HUGE[:6]))     # TOML integers are 64-bit


def _json_value(depth: int = 2):
    base = st.one_of(st.none(), st.booleans(), st.integers(-3, 5), st.sampled_from([2 ** 70, -(2 ** 70)]),
                     st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=6))
    if depth == 0:
        return base
    return st.one_of(base, st.lists(_json_value(depth - 1), max_size=3),
                     st.dictionaries(st.text(max_size=5), _json_value(depth - 1), max_size=3))


def _paths(doc):
    """Every (container, key) of a JSON document: the places a mutation may replace."""
    out = []
    stack = [doc]
    while stack:
        x = stack.pop()
        items = x.items() if isinstance(x, dict) else enumerate(x) if isinstance(x, list) else ()
        for k, v in items:
            out.append((x, k))
            stack.append(v)
    return out


@st.composite
def mutated(draw, doc):
    """``doc`` with up to three of its values replaced by arbitrary JSON (or a key deleted)."""
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(0, 3))):
        places = _paths(doc)
        if not places:
            break
        cont, key = places[draw(st.integers(0, len(places) - 1))]
        if isinstance(cont, dict) and draw(st.booleans()):
            del cont[key]
        else:
            cont[key] = draw(_json_value())
    return doc


PARITY_FSA = {"alphabet": ["0", "1"], "delta": [[0, 1], [1, 0]], "start": 0, "accepting": [1], "name": "p"}


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return json.dumps(v)                         # a TOML basic string is a JSON string


SPEC_KEYS = {"source": SOURCES, "format": st.sampled_from(["bf16", "fp32", "fp8-e4m3", "e5m7", "nope", ""]),
             "steps": SPEC_STEPS, "policy": st.sampled_from(["matvec", "op", "proof", "x"]),
             "max_pairs": SPEC_STEPS, "float_steps": SPEC_STEPS, "period_cap": SPEC_STEPS,
             "replicate": st.sampled_from(HUGE[:6]), "id": st.sampled_from(["nope", "all", 3]),
             "construction": st.sampled_from(["parity-sign", "cyclic-rotation", "nope"]),
             "profile": st.sampled_from(["quick", "deep", "x"]), "rounding": st.sampled_from(["nearest-even", "x"]),
             "seed": st.sampled_from(HUGE)}


@st.composite
def spec_text(draw) -> str:
    kind = draw(st.sampled_from(["collapse", "certify", "theorems", "nope", ""]))
    lines = [f"kind = {json.dumps(kind)}"]
    if draw(st.booleans()):
        lines.append(f"seed = {draw(st.sampled_from(HUGE[:6]))}")
    lines.append("[grid]")
    needed = {"collapse": ["source", "format"], "certify": ["source"]}.get(kind, []) if draw(st.booleans()) else []
    keys = needed + draw(st.lists(st.sampled_from(sorted(set(SPEC_KEYS) - set(needed))), max_size=3, unique=True))
    for key in keys:
        if key == "id":     # theorem checks run for real: keep them to ids that are refused
            vals = [draw(st.sampled_from(["nope", 3]))]
        else:
            vals = draw(st.lists(SPEC_KEYS[key], min_size=int(draw(st.integers(0, 9)) > 0), max_size=2,
                                 unique_by=repr))
        if key == "source":
            vals = [v.replace('"', "") for v in vals]
        lines.append(f"{key} = {_toml_value(vals)}")
    if draw(st.integers(0, 4)) == 0:
        lines.append(draw(st.sampled_from(["[grid", "x = ", "steps = 1e999", "\x00", "[params]\nsteps = -1"])))
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("fuzz")
    model = d / "model.json"
    assert main(["compile", "parity", "-o", str(model)]) == 0
    fifo = d / "fifo"
    os.mkfifo(fifo)
    link = d / "link"
    link.symlink_to(d / "victim")
    (d / "victim").write_text("precious")
    return {"dir": d, "model": model, "model_doc": json.loads(model.read_text()), "FIFO": str(fifo),
            "LINK": str(link)}


def _value(draw, action, files, where):
    dest = action.dest
    if dest in ("output", "out"):
        return draw(st.sampled_from([str(where / "o.json"), str(where / "o"), files["LINK"], str(where),
                                     "/dev/null", str(where / "no" / "such")]))
    if dest in ("source",):
        return draw(SOURCES)
    if dest in ("model", "spec"):
        return draw(st.sampled_from(["MODEL", "MODEL", "MUTATED", "SPEC", "SPEC", "FSA", "FIFO", "LINK", "/dev/zero",
                                     "nope"]))
    if action.choices:                     # mostly a valid choice: the work behind it gets exercised too
        v = draw(st.sampled_from(list(action.choices) * 4 + [None]))
        return draw(CONTROL_TEXT) if v is None else v
    if dest in ("steps", "random", "max_pairs"):
        return str(draw(SMALL_STEPS))
    if action.type is int:
        return str(draw(st.one_of(st.integers(-3, 50), st.sampled_from(HUGE))))
    if dest == "values":
        return draw(st.sampled_from(["1/3", "0.1", "cos(2*pi/5)", "1e999999999", "x", "1/0", "sin(2*pi/1000000)"]))
    if dest == "fmt":
        return draw(st.sampled_from(["bf16", "fp32", "e5m7", "e0m0", "e99m99", "nope"]))
    if dest == "option":
        return draw(st.sampled_from(["split=class", "refine=true", "x", "=1", "depth_rule=nope"]))
    if dest == "word":
        return draw(st.one_of(st.sampled_from(["0 1 1", "", "a", "0 " * 50]), CONTROL_TEXT))
    if dest == "address":
        return "auto"
    return draw(CONTROL_TEXT)


@st.composite
def argv_and_files(draw, files, where):
    verb = draw(st.sampled_from(sorted(VERBS)))
    parser = VERBS[verb]
    argv = list(verb)
    if verb == ("theorems",):
        skip = {"check"}
    elif verb == ("sweep",):
        skip = {"executor", "address", "num_cpus", "progress"}
    else:
        skip = set()
    acts = [a for a in parser._actions if a.dest not in {"help"} | skip and not isinstance(a, argparse._HelpAction)]
    positionals = [a for a in acts if not a.option_strings]
    optionals = [a for a in acts if a.option_strings]
    chosen = draw(st.lists(st.sampled_from(optionals), max_size=4, unique_by=lambda a: a.dest)) if optionals else []
    chosen += [a for a in optionals if a.required and a not in chosen and draw(st.integers(0, 9)) > 0]
    if verb == ("run",) and not {"word", "random"} & {a.dest for a in chosen} and draw(st.integers(0, 9)) > 0:
        chosen.append(draw(st.sampled_from([a for a in optionals if a.dest in ("word", "random")])))
    for a in chosen:
        argv.append(draw(st.sampled_from(a.option_strings)))
        if a.nargs != 0:
            argv.append(_value(draw, a, files, where))
    if positionals:
        argv.append("--")
    for a in positionals:
        n = draw(st.integers(1, 2)) if a.nargs in ("+", "*") else 1
        argv += [_value(draw, a, files, where) for _ in range(n)]
    # the placeholders become files hypothesis writes
    out = []
    for x in argv:
        if x == "MODEL":
            x = str(files["model"])
        elif x == "MUTATED":
            p = where / "m.json"
            p.write_text(json.dumps(draw(mutated(files["model_doc"]))))
            x = str(p)
        elif x == "FSA":
            p = where / "f.json"
            p.write_text(json.dumps(draw(mutated(PARITY_FSA))))
            x = str(p)
        elif x == "SPEC":
            p = where / "s.toml"
            p.write_text(draw(spec_text()), encoding="utf-8", errors="surrogatepass")
            x = str(p)
        elif x in ("FIFO", "LINK"):
            x = files[x]
        out.append(x)
    if verb == ("sweep",):
        out[1:1] = ["--out", str(where / "sweep"), "--no-plots"]
    return out


def _check_one(capsys, argv, files):
    rc = main(argv)
    out, err = capsys.readouterr()
    assert rc in (0, 1, 2), (argv, rc, err)
    assert "internal error" not in err and "Traceback" not in err, (argv, err)
    if rc == 2:     # one error line, last; before it at most warnings, each one line
        lines = err.splitlines()
        assert lines and lines[-1].startswith("lrnnkit: error: "), (argv, err)
        assert all(x.startswith("lrnnkit: warning: ") for x in lines[:-1]), (argv, err)
    assert (files["dir"] / "victim").read_text() == "precious", argv      # a planted link is never written through


def _run(data, capsys, files, tmp_path_factory):
    where = tmp_path_factory.mktemp("ex")
    argv = data.draw(argv_and_files(files, where))
    with contextlib.chdir(where):      # a drawn text taken as a relative output path lands here, not in the checkout
        _check_one(capsys, argv, files)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_cli_fuzz(data, capsys, files, tmp_path_factory):
    _run(data, capsys, files, tmp_path_factory)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_cli_fuzz_deep(data, capsys, files, tmp_path_factory):
    _run(data, capsys, files, tmp_path_factory)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_json_and_toml_inputs(data, capsys, files, tmp_path_factory):
    """The file inputs alone: mutated models to verify / run / export, mutated automata to info / compile, specs."""
    where = tmp_path_factory.mktemp("in")
    m, f, s = where / "m.json", where / "f.json", where / "s.toml"
    m.write_text(json.dumps(data.draw(mutated(files["model_doc"]))))
    f.write_text(json.dumps(data.draw(mutated(PARITY_FSA))))
    s.write_text(data.draw(spec_text()), encoding="utf-8", errors="surrogatepass")
    argv = data.draw(st.sampled_from([["verify", m], ["run", m, "--word", "0 1"], ["run", m, "--random", "5"],
                                      ["export", m, "--to", "fla", "-o", where / "e"], ["info", f],
                                      ["compile", f, "-o", where / "c.json"], ["verify", files["model"], "--source", f],
                                      ["sweep", s, "--out", where / "o", "--no-plots"]]))
    _check_one(capsys, [str(x) for x in argv], files)
