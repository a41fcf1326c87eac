"""Automata in and out (lrnnkit.automata.bridges): round trips through automata-lib, AALpy and Graphviz DOT, each
checked against the real library's own semantics (automata-lib's accepts_input, AALpy's execute_sequence and its
own DOT loader), DOT files captured from automata-lib 9.2.0 (pygraphviz) and AALpy 2.0.0, partial automata, the
DOT grammar and its one-line errors, words as plain strings, and the convert verb."""
from __future__ import annotations

import itertools
import json
import os

import pytest
from hypothesis import given, settings, strategies as st

import lrnnkit as L
from lrnnkit.automata import minimize
from lrnnkit.automata.bridges import dumps, fsa_from_dot, fsa_to_dot
from lrnnkit.automata.bridges.aalpy import from_aalpy, to_aalpy
from lrnnkit.automata.bridges.automata_lib import to_automata_lib
from lrnnkit.cli.convert import complete_of, run as convert_run
from lrnnkit.automata.bridges.dot import MAX_DEPTH, parse_dot
from lrnnkit.automata.bridges.table import SINK, StateTable, determinise, to_fsa
from lrnnkit.automata.words import split_word
from lrnnkit.cli import main
from lrnnkit.errors import InputError, SizeLimitError
from lrnnkit.cli import build_parser
from lrnnkit.testing.strategies import fsas, words

automata_lib = pytest.importorskip("automata.fa.dfa")
pytest.importorskip("aalpy")
from automata.fa.dfa import DFA  # noqa: E402
from automata.fa.nfa import NFA  # noqa: E402
from proofs_tests._paths import DATA as _DATA, REPO

DATA = os.path.join(_DATA, "dot")


def _same_behaviour(a, b):
    """Same outputs after every word (canonical minimal forms equal; the alphabets must agree in order)."""
    assert list(a.alphabet) == list(b.alphabet)
    assert minimize(a) == minimize(b)


# ----------------------------------------------------------------------------------------- DOT round trips
@given(st.one_of(fsas(max_states=6, max_letters=3, n_labels=2), fsas(max_states=6, max_letters=3, n_labels=3),
                 fsas(max_states=6, max_letters=3, n_labels=None)))
def test_dot_round_trip_is_exact(f):
    g = fsa_from_dot(fsa_to_dot(f))
    assert g == f                                         # same alphabet order, table, start and outputs
    assert g.n_states == f.n_states


@settings(max_examples=10)
@given(fsas(max_states=5, max_letters=3, n_labels=3), st.data())
def test_aalpy_reads_our_dot_and_agrees_on_words(tmp_path_factory, f, data):
    from aalpy.utils import load_automaton_from_file
    path = str(tmp_path_factory.mktemp("dot") / "m.dot")
    with open(path, "w") as fh:
        fh.write(fsa_to_dot(f))
    kind = "dfa" if set(f.outputs) <= {"0", "1"} else "moore"
    a = load_automaton_from_file(path, kind)            # AALpy's own line-based loader
    _same_behaviour(from_aalpy(a, alphabet=f.alphabet), f)
    w = data.draw(words(f, 1, 12))
    got = a.execute_sequence(a.initial_state, [f.alphabet[x] for x in w])
    want = f.output_trace(w)
    assert [("1" if o else "0") if isinstance(o, bool) else str(o) for o in got] == want


# ----------------------------------------------------------------------------------------- AALpy objects
@given(fsas(max_states=6, max_letters=3, n_labels=3), st.data())
def test_aalpy_objects_round_trip_and_run_like_the_fsa(f, data):
    a = to_aalpy(f)
    assert type(a).__name__ == ("Dfa" if set(f.outputs) <= {"0", "1"} else "MooreMachine")
    _same_behaviour(from_aalpy(a, alphabet=f.alphabet), f)
    w = data.draw(words(f, 1, 15))
    outs = a.execute_sequence(a.initial_state, [f.alphabet[x] for x in w])
    assert [("1" if o else "0") if isinstance(o, bool) else str(o) for o in outs] == f.output_trace(w)


def test_aalpy_moore_kind_and_errors():
    par = L.load_source("parity")
    m = to_aalpy(par, "moore")
    assert type(m).__name__ == "MooreMachine"
    assert L.load_source(m) == par
    with pytest.raises(InputError, match="kind='moore'"):
        to_aalpy(L.load_source("group:S3"), "dfa")
    from aalpy.automata import MealyMachine, MealyState
    s = MealyState("q")
    s.transitions["a"], s.output_fun["a"] = s, "x"
    with pytest.raises(InputError, match="Dfa and MooreMachine"):
        L.load_source(MealyMachine(s, [s]))


def test_aalpy_partial_machine_needs_complete():
    from aalpy.automata import Dfa, DfaState
    q0, q1 = DfaState("q0"), DfaState("q1", True)
    q0.transitions.update({"a": q1, "b": q0})
    q1.transitions["a"] = q1                          # q1 has no 'b'
    d = Dfa(q0, [q0, q1])
    with pytest.raises(InputError, match=r"complete=True \(command line: --complete\)"):
        L.load_source(d)
    f = L.load_source(d, complete=True)
    assert f.state_names == ("q0", "q1", "sink") and f.outputs == ("0", "1", "0")
    assert f.outputs[f.run(f.encode("a b a"))] == "0"   # b from q1 falls into the sink and stays


# ----------------------------------------------------------------------------------------- automata-lib
@given(fsas(max_states=6, max_letters=3, n_labels=2), st.data())
def test_automata_lib_dfa_round_trip_and_acceptance(f, data):
    d = to_automata_lib(f)
    _same_behaviour(L.load_source(d), f)
    for _ in range(5):
        w = data.draw(words(f, 0, 12))
        assert d.accepts_input([f.alphabet[x] for x in w]) == (f.outputs[f.run(w)] == "1")


def test_automata_lib_refuses_labelled_automata():
    with pytest.raises(InputError, match="accept / reject only"):
        to_automata_lib(L.load_source("group:S3"))


@st.composite
def nfas(draw):
    n = draw(st.integers(1, 4))
    syms = ["a", "b"]
    states = [f"p{i}" for i in range(n)]
    trans = {q: {} for q in states}
    for q in states:
        for s in syms + [""]:
            targets = draw(st.sets(st.sampled_from(states), max_size=2 if s else 1))
            if targets:
                trans[q][s] = targets
    final = draw(st.sets(st.sampled_from(states)))
    return NFA(states=set(states), input_symbols=set(syms), transitions=trans, initial_state="p0",
               final_states=final)


@given(nfas(), st.lists(st.lists(st.sampled_from(["a", "b"]), max_size=8), min_size=1, max_size=6))
def test_nfa_determinisation_agrees_with_automata_lib(nfa, ws):
    f = L.load_source(nfa)                           # subset construction with epsilon closures
    assert f.n_states <= 2 ** len(nfa.states)
    for w in ws:
        assert (f.outputs[f.run(f.encode(w))] == "1") == nfa.accepts_input(w), w


def test_partial_dfa_from_automata_lib():
    d = DFA(states={0, 1}, input_symbols={"a", "b"}, transitions={0: {"a": 1}, 1: {"a": 1, "b": 0}},
            initial_state=0, final_states={1}, allow_partial=True)
    with pytest.raises(InputError) as exc:
        L.load_source(d)
    msg = str(exc.value)
    assert "partial automaton" in msg and "complete=True" in msg and "--complete" in msg and "\n" not in msg
    f = L.load_source(d, complete=True)
    assert f.n_states == 3 and f.state_names[2] == "sink" and 2 not in f.accepting
    g = L.load_source(d, complete="trap")
    assert g.state_names[2] == "trap"
    with pytest.raises(InputError, match="a state of that name exists"):
        L.load_source(d, complete="1")
    # completion is equivalent to automata-lib's own to_complete(): same language
    _same_behaviour(f, L.load_source(d.to_complete(trap_state="t")))
    # a complete automaton is never changed by complete=True
    full = L.load_source("regex:(ab)*")
    assert L.load_source(to_automata_lib(full), complete=True).n_states == full.n_states


def test_compile_and_load_source_take_foreign_objects():
    d = DFA(states={"q0", "q1", "q2"}, input_symbols={"0", "1"},
            transitions={"q0": {"0": "q0", "1": "q1"}, "q1": {"0": "q2", "1": "q0"},
                         "q2": {"0": "q1", "1": "q2"}}, initial_state="q0", final_states={"q0"})
    model = L.compile(d)
    assert L.certify(model).certified
    assert L.load_source(L.load_source("parity").to_dict()) == L.load_source("parity")
    with pytest.raises(InputError, match="cannot read an automaton"):
        L.load_source(3.5)


# ----------------------------------------------------------------------------------------- captured DOT files
def _accepts(f, w) -> bool:
    return f.outputs[f.run(f.encode(list(w)))] == "1"


def _binary_words(n):
    for m in range(n + 1):
        yield from ("".join(p) for p in itertools.product("01", repeat=m))


def test_captured_automata_lib_dot_files():
    div3 = L.load_source(os.path.join(DATA, "div3_automatalib.dot"))   # pygraphviz output, layout attributes
    assert div3.n_states == 3 and div3.state_names == ("q0", "q1", "q2")
    for w in _binary_words(8):
        assert (div3.outputs[div3.run(div3.encode(list(w)))] == "1") == (int(w or "0", 2) % 3 == 0), w
    ends0 = L.load_source(os.path.join(DATA, "nfa_det_automatalib.dot"))   # frozenset state names
    assert set(ends0.state_names) == {"{a}", "{b, a}"}
    for w in _binary_words(6):
        assert (ends0.outputs[ends0.run(ends0.encode(list(w)))] == "1") == w.endswith("0"), w


def test_captured_aalpy_dot_files():
    assert L.load_source(os.path.join(DATA, "parity_aalpy.dot")) == L.load_source("parity")
    s3 = L.load_source(os.path.join(DATA, "s3_aalpy.dot"))   # Moore records, quoted ids with commas
    assert s3 == L.load_source("group:S3")


def test_live_automata_lib_diagram(tmp_path):
    pytest.importorskip("pygraphviz")
    d = to_automata_lib(L.load_source("regex:(ab|ba)*"))
    path = str(tmp_path / "d.dot")
    d.show_diagram(path=path)
    g, f = L.load_source(path), L.load_source(d)
    assert g.n_states == f.n_states
    for w in itertools.chain.from_iterable(itertools.product("ab", repeat=m) for m in range(7)):
        assert _accepts(g, w) == _accepts(f, w) == d.accepts_input(list(w)), w


# ----------------------------------------------------------------------------------------- DOT grammar
def test_dot_grammar_features():
    text = r"""
    /* block comment */ strict digraph "g" {
      // line comment
    # a preprocessor line
      graph [rankdir=LR]; node [shape=circle];
      start [shape=point];
      start -> "q" + "0";
      subgraph cluster_a { node [shape=doublecircle]; q1; }
      q0:port:n -> q1 -> q0 [label="a"];
      q0 -> q0 [label=b]; q1 -> q1 [label="b"]
      { rank=same; q0 q1 }
    }"""
    f = fsa_from_dot(text)
    assert f.alphabet == ("a", "b") and f.state_names == ("q0", "q1") and f.accepting == frozenset({1})
    assert f.delta.tolist() == [[1, 0], [0, 1]]


def test_dot_comma_labels():
    # automata-lib merges one-character symbols: "0,1" is two symbols; (0,1) is one symbol
    f = fsa_from_dot('digraph { s [shape=point]; s -> a; a -> a [label="0,1"]; }')
    assert f.alphabet == ("0", "1")
    g = fsa_from_dot('digraph { s [shape=point]; s -> a; a -> a [label="(0,1)"]; }')
    assert g.alphabet == ("(0,1)",)
    h = L.load_source("transformations:[[1,0],[0,0]]")
    h = L.load_source({**h.to_dict(), "alphabet": ["x,y", "z"]})
    assert fsa_from_dot(fsa_to_dot(h)) == h          # lrnnkit's own files are never split


@pytest.mark.parametrize("text,msg", [
    ("digraph { s [shape=point]; s -> a; a -> a [label=x] ", "missing '}'"),
    ("digraph { a -> a [label=x]; }", "no start state"),
    ("digraph { s [shape=point]; t [shape=point]; s -> a; t -> b; a -> b [label=x]; b -> a [label=x]}",
     "one start state"),
    ("digraph { s [shape=point]; s -> a; a -> a [label=x]; a -> b [label=x]; b -> b [label=x]}",
     "nondeterministic"),
    ('digraph { s [shape=point]; s -> a; a -> a [label="ε"]}', "epsilon"),
    ("graph { s [shape=point]; s -- a; a -- a [label=x]}", "undirected"),
    ("digraph { s [shape=point]; s -> a; a -> a }", "no label"),
    ('digraph { s [shape=point]; s -> a; a -> a [label="x]}', "unterminated quoted string"),
    ("digraph { s [shape=point]; s -> a; a -> a [label=x]; } digraph {}", "one graph per file"),
    ("digraph { s [shape=point]; s -> a; a -> a [label=x]; @ }", "unexpected character"),
    ("digraph { s [shape=point]; s -> a; a [shape=record, label=\"a|1\"]; b [shape=record]; a -> b [label=x];"
     " b -> b [label=x] }", "no output"),
    ("digraph { " + "{" * (MAX_DEPTH + 1) + "}" * (MAX_DEPTH + 1) + " }", "nested more than"),
    ("digraph { s [shape=point]; s -> a; a -> b [label=x]; }", "partial automaton"),
    ('digraph { __start0 [shape=none, label=""]; __start0 -> a; a -> a [label="x/1"]; }', "Mealy machine"),
])
def test_dot_errors_are_one_line(text, msg):
    with pytest.raises(InputError, match=msg) as exc:
        fsa_from_dot(text, "t.dot")
    assert "\n" not in str(exc.value) and str(exc.value).startswith("t.dot")


@settings(max_examples=60)
@given(st.text(alphabet='digraph{}[]=;,:"-><ab01 \n/*#\\', max_size=80))
def test_dot_reader_never_crashes(text):
    try:
        fsa_from_dot(text)
    except InputError:
        pass


def test_dot_file_bounded(tmp_path, monkeypatch):
    from lrnnkit import limits
    p = tmp_path / "big.dot"
    p.write_text(fsa_to_dot(L.load_source("group:S3")))
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", 100)
    with pytest.raises(SizeLimitError, match="MAX_FILE_BYTES"):
        L.load_source(str(p))


def test_parse_dot_keeps_node_order_and_defaults():
    g = parse_dot('digraph { node [shape=box]; b; a -> b; edge [label=z]; a -> c }')
    assert list(g.nodes) == ["b", "a", "c"] and g.nodes["c"]["shape"] == "box"
    assert [e[2].get("label") for e in g.edges] == [None, "z"]


# ----------------------------------------------------------------------------------------- words
@given(st.lists(st.sampled_from(["0", "1", "x"]), max_size=12))
def test_plain_and_spaced_words_agree_on_one_character_alphabets(syms):
    alphabet = ("0", "1", "x")
    assert split_word("".join(syms), alphabet) == syms
    assert split_word(" ".join(syms), alphabet) == syms


def test_words_with_longer_symbols_stay_space_separated():
    assert split_word("ab", ("a", "b", "ab")) == ["ab"]
    assert split_word("+1 -1", ("+1", "-1", "stay")) == ["+1", "-1"]
    f = L.load_source("parity")
    assert f.encode("1101") == f.encode("1 1 0 1") == [1, 1, 0, 1]
    with pytest.raises(InputError, match="unknown symbol '2'"):
        f.encode("102")


def test_run_word_as_plain_string(tmp_path, capsys):
    m = str(tmp_path / "p.json")
    assert main(["compile", "parity", "-o", m]) == 0
    capsys.readouterr()
    assert main(["run", m, "--word", "101", "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(["run", m, "--word", "1 0 1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == plain and plain["outputs"] == ["1", "1", "0"]


# ----------------------------------------------------------------------------------------- convert
@pytest.mark.parametrize("fmt", ["json", "dot", "aalpy", "automata-lib"])
def test_convert_round_trips(tmp_path, fmt, capsys):
    src = "regex:(ab)*" if fmt == "automata-lib" else "mod-arith:3"
    out = str(tmp_path / f"m.{'dot' if fmt in ('dot', 'aalpy') else 'json'}")
    assert main(["convert", src, "--to", fmt, "-o", out]) == 0
    back, f = L.load_source(out), L.load_source(src)
    if fmt == "automata-lib":                         # alphabet sorted: compare word by word
        for w in itertools.chain.from_iterable(itertools.product(f.alphabet, repeat=m) for m in range(6)):
            assert back.outputs[back.run(back.encode(list(w)))] == f.outputs[f.run(f.encode(list(w)))]
    else:
        assert back == f
    assert main(["info", out, "--json"]) == 0


def test_convert_and_info_errors_exit_2(tmp_path, capsys):
    part = tmp_path / "p.dot"
    part.write_text('digraph { s [shape=point]; s -> a; a -> b [label=x]; }')
    assert main(["info", str(part)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--complete" in err
    assert main(["convert", str(part), "--to", "json", "--complete", "--sink", "dead"]) == 0
    assert json.loads(capsys.readouterr().out)["state_names"] == ["a", "b", "dead"]
    assert main(["convert", str(part), "--to", "json", "--sink", "dead"]) == 2
    assert main(["convert", "group:S3", "--to", "automata-lib"]) == 2
    bad = tmp_path / "bad.dot"
    bad.write_text("digraph { a -> }")
    assert main(["info", str(bad)]) == 2
    assert "line 1" in capsys.readouterr().err


def test_dumps_formats_are_text():
    f = L.load_source("parity")
    assert dumps(f, "dot") == dumps(f, "aalpy") == fsa_to_dot(f)
    assert json.loads(dumps(f, "automata-lib"))["final_states"] == ["q1"]
    with pytest.raises(InputError, match="unknown automaton format"):
        dumps(f, "xml")


@pytest.mark.parametrize("doc", [
    {"alphabet": ["a", "b"], "delta": [[1, None], [1, 0]], "accepting": [1]},
    {"alphabet": ["a", "b"], "delta": {"0": {"a": 1}, "1": {"a": 1, "b": 0}}, "accepting": [1]},
])
def test_partial_lrnnkit_json_completed_only_on_request(tmp_path, doc, capsys):
    p = tmp_path / "partial.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"missing transition from state 0 on symbol 'b'; pass complete=True"):
        L.load_source(str(p))
    f = L.load_source(str(p), complete=True)
    assert f.delta.tolist() == [[1, 2], [1, 0], [2, 2]] and f.accepting == frozenset({1})
    assert f.state_names[2] == "sink"
    assert main(["compile", str(p), "--complete", "--sink", "dead", "-o", str(tmp_path / "m.json")]) == 0


def test_our_dot_rewritten_by_graphviz_reads_back_exactly():
    """mod_arith_2_graphviz.dot: `lrnnkit convert mod-arith:2 --to dot` passed through `dot -Tdot` (Graphviz
    2.43: layout attributes added, multi-line attribute lists, nodes reordered)."""
    f = L.load_source(os.path.join(DATA, "mod_arith_2_graphviz.dot"))
    g = L.load_source("mod-arith:2")
    assert f == g and f.state_names == g.state_names and f.alphabet == g.alphabet


def test_live_graphviz_rewrite(tmp_path):
    import shutil
    import subprocess
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed")
    f = L.load_source("group:S3")
    src, out = tmp_path / "s3.dot", tmp_path / "s3_laid_out.dot"
    src.write_text(fsa_to_dot(f))
    subprocess.run(["dot", "-Tdot", str(src), "-o", str(out)], check=True, capture_output=True, timeout=120)
    g = L.load_source(str(out))
    assert g == f and g.state_names == f.state_names


def test_python_graphviz_style_source():
    """The layout of the `graphviz` package's Digraph.source: tab-indented, no semicolons, space-separated
    attributes."""
    text = ('digraph {\n\trankdir=LR\n\tstart [label="" shape=point]\n\teven [label=even shape=doublecircle]\n'
            '\todd [label=odd]\n\tstart -> even\n\teven -> odd [label=1]\n\teven -> even [label=0]\n'
            '\todd -> even [label=1]\n\todd -> odd [label=0]\n}\n')
    f = fsa_from_dot(text)
    assert f.state_names == ("even", "odd") and f.accepting == frozenset({0})
    assert [f.outputs[f.run(f.encode(w))] for w in ("", "1", "11", "101", "0")] == ["1", "0", "1", "1", "1"]


def test_dot_edge_products_are_bounded(monkeypatch):
    from lrnnkit import limits
    monkeypatch.setattr(limits, "MAX_TRANSITIONS", 1000)
    nodes = " ".join(f"n{i}" for i in range(40))
    with pytest.raises(SizeLimitError, match="MAX_TRANSITIONS"):
        fsa_from_dot("digraph { {" + nodes + "} -> {" + nodes + "} [label=x] }")   # 1600 edges from one line


def test_example_dot_file_is_div3():
    """examples/div3_automatalib.dot (automata-lib's show_diagram output) is the automaton of examples/div3.json."""
    here = os.path.join(REPO, "examples")
    a = L.load_source(os.path.join(here, "div3_automatalib.dot"))
    assert minimize(a) == minimize(L.load_source(os.path.join(here, "div3.json")))


def test_convert_verb_module_runs_a_parsed_command_line(tmp_path, capsys):
    """lrnnkit.cli.convert on its own: the parsed flags (lrnnkit.cli) give load_source's ``complete``,
    and ``run`` writes the automaton, which reads back as the same automaton."""
    parse = build_parser().parse_args
    assert complete_of(parse(["convert", "parity", "--to", "dot"])) is False
    assert complete_of(parse(["convert", "parity", "--to", "dot", "--complete"])) is True
    assert complete_of(parse(["convert", "parity", "--to", "dot", "--complete", "--sink", "dead"])) == "dead"
    with pytest.raises(InputError, match="--complete"):
        complete_of(parse(["convert", "parity", "--to", "dot", "--sink", "dead"]))
    out = str(tmp_path / "m.dot")
    assert convert_run(parse(["convert", "mod-arith:3", "--to", "dot", "-o", out, "--json"])) == 0
    assert json.loads(capsys.readouterr().out)["states"] == L.load_source("mod-arith:3").n_states
    assert L.load_source(out) == L.load_source("mod-arith:3")


# ----------------------------------------------------------------------------------------- the state table
def test_a_partial_table_is_completed_only_on_request():
    """lrnnkit.automata.bridges.table: a missing transition is refused with the state and letter named, or sent
    to a new rejecting sink (named ``sink`` or as asked); a sink name that is taken is refused."""
    t = StateTable(["x", "y"], ["a", "b"], 0, [[1, None], [1, 0]], accepting={1})
    with pytest.raises(InputError, match="state 'a' has no transition on 'y'"):
        to_fsa(t, "t")
    f = to_fsa(t, "t", complete=True)
    assert f.n_states == 3 and f.state_names[-1] == SINK
    s = f.state_names.index(SINK)
    assert f.delta[0, 1] == s and list(f.delta[s]) == [s, s] and f.outputs[s] == f.outputs[0]
    assert to_fsa(t, "t", complete="dead").state_names[-1] == "dead"
    with pytest.raises(InputError, match="a state of that name exists"):
        to_fsa(t, "t", complete="b")


def test_determinise_is_the_subset_construction():
    """The NFA over {a} with states 0 -a-> {0, 1}, 1 -eps-> 2, 2 accepting: subsets {0} and {0, 1, 2}."""
    step = {(0, "a"): {0, 1}}
    t = determinise(["a"], 0, lambda q, a: step.get((q, a), set()), lambda q: q == 2,
                    lambda q: {2} if q == 1 else set(), str, "nfa")
    assert t.names == ["{0}", "{0, 1, 2}"] and t.delta == [[1], [1]] and t.accepting == {1}
