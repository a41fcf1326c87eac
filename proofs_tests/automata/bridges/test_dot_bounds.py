"""The DOT reader bounds every size before the work that grows with it and reads in linear time: nodes past
MAX_STATES + MAX_MARKERS are refused as the parser meets them (before the rest of the file is even tokenized), a
complete automaton of exactly MAX_STATES states loads (the sink a partial one would get counts only when it is
added), and reading a file 8 times larger takes about 8 times longer, not 64."""
from __future__ import annotations

import time

import pytest

from lrnnkit import limits
from lrnnkit.automata.bridges import dot
from lrnnkit.automata.bridges.dot import MAX_MARKERS, fsa_from_dot
from lrnnkit.errors import InputError, SizeLimitError


def _ours(n: int, partial: bool = False) -> str:
    """lrnnkit's own DOT of an n-state automaton on letters 0, 1 (q -> 2q + a mod n); ``partial`` drops one edge."""
    lines = ["digraph a {", f'comment="{dot.LRNNKIT_COMMENT}";']
    lines += [f's{q} [label="q{q}"];' for q in range(n)]
    lines += [f's{q} -> s{(2 * q + a) % n} [label="{a}"];' for q in range(n) for a in (0, 1)
              if not (partial and q == 0 and a == 1)]
    lines += ['__start0 [label="", shape=none];', "__start0 -> s0 [label=\"\"];", "}"]
    return "\n".join(lines) + "\n"


def test_exactly_max_states_loads_and_one_more_is_refused(monkeypatch):
    monkeypatch.setattr(limits, "MAX_STATES", 40)
    assert fsa_from_dot(_ours(40)).n_states == 40          # the start marker is not a state, no sink is added
    with pytest.raises(SizeLimitError, match="41 states"):
        fsa_from_dot(_ours(41))
    with pytest.raises(SizeLimitError, match="41 states"):  # a partial one gets a sink: 41
        fsa_from_dot(_ours(40, partial=True), complete=True)
    assert fsa_from_dot(_ours(39, partial=True), complete=True).n_states == 40


def test_nodes_past_the_bound_stop_the_reading_where_they_appear(monkeypatch):
    """A syntax error after the excess nodes is never reached: the bound is met first (a reader that tokenized or
    parsed the whole file first would report the syntax error, or spend the time)."""
    monkeypatch.setattr(limits, "MAX_STATES", 40)
    text = "digraph a {\n" + "".join(f"n{i};\n" for i in range(40 + MAX_MARKERS + 1)) + "@@@ }"
    with pytest.raises(SizeLimitError, match=f"more than {40 + MAX_MARKERS} nodes"):
        fsa_from_dot(text)
    with pytest.raises(InputError, match="unexpected character '@'"):
        fsa_from_dot("digraph a {\n" + "".join(f"n{i};\n" for i in range(10)) + "@@@ }")


def test_quoted_strings_and_their_escapes():
    g = dot.parse_dot('digraph { a [label="x\\"y\\\nz\\N\\l"]; b [label="" + "q" + "\\\\"]; }')
    assert g.nodes["a"]["label"] == 'x"yz\\N\\l' and g.nodes["b"]["label"] == "q\\\\"
    with pytest.raises(InputError, match="line 2: unterminated quoted string"):
        dot.parse_dot('digraph {\n a [label="x\\"];\n}')


def _seconds(text: str) -> float:
    best = float("inf")
    for _ in range(2):
        t0 = time.perf_counter()
        fsa_from_dot(text)
        best = min(best, time.perf_counter() - t0)
    return best


@pytest.mark.slow
def test_reading_time_is_linear_in_the_nodes():
    """4000 and 32000 states: the quadratic reader (a list membership test per statement) took ~55x longer for 8x
    the nodes; a linear one ~8x. The bound 20 leaves room for a busy machine's noise."""
    small, large = _seconds(_ours(4000)), _seconds(_ours(32000))
    assert large / small < 20, (small, large)
