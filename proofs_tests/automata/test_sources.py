"""Every preset of the SOURCE grammar against an independent definition of its task, and every bad source."""
import itertools
import json
import re

import pytest
from hypothesis import given, strategies as st
from sympy.combinatorics import Permutation

from lrnnkit.automata.groups import named_group
from lrnnkit.automata.monoid import compose
from lrnnkit.automata.sources import load_source
from lrnnkit.errors import InputError, SizeLimitError


def outputs(fsa, word):
    return fsa.output_trace(fsa.encode(word))


@given(st.lists(st.sampled_from("01"), max_size=30))
def test_parity_is_sum_mod_2(word):
    f = load_source("parity")
    assert outputs(f, word) == [str(sum(map(int, word[:t + 1])) % 2) for t in range(len(word))]


def test_parity_is_the_z2_word_problem_and_counting_is_zm():
    """Paper 000, Section 4: "Parity is equivalent to the S_2 word problem"; counting mod m is Z_m's word
    problem restricted to the generator 1."""
    assert load_source("group:Z2") == load_source("parity")
    assert load_source("group:S2").n_states == 2
    for m in (2, 3, 5):
        z, c = load_source(f"group:Z{m}"), load_source(f"counter:{m}")
        assert [int(z.delta[q, 1]) for q in range(m)] == [int(c.delta[q, 0]) for q in range(m)]
        assert z.outputs == c.outputs


@given(st.integers(1, 12), st.integers(0, 40))
def test_counter_counts_mod_m(m, length):
    f = load_source(f"counter:{m}")
    assert f.alphabet == ("1",)
    assert outputs(f, ["1"] * length) == [str((t + 1) % m) for t in range(length)]
    # recognises (1^m)*: output "0" exactly on multiples of m
    assert [o == "0" for o in outputs(f, ["1"] * length)] == [(t + 1) % m == 0 for t in range(length)]


@given(st.lists(st.sampled_from(["set0", "set1", "read"]), max_size=30))
def test_flipflop_remembers_last_set(word):
    f = load_source("flipflop")
    bit, exp = "0", []
    for s in word:
        if s != "read":
            bit = s[-1]
        exp.append(bit)
    assert outputs(f, word) == exp


@given(st.integers(2, 5), st.data())
def test_even_pairs_first_equals_last(m, data):
    f = load_source("even-pairs" if m == 2 else f"even-pairs:{m}")
    word = data.draw(st.lists(st.sampled_from([str(d) for d in range(m)]), max_size=25))
    exp = ["1" if word[t] == word[0] else "0" for t in range(len(word))]
    assert outputs(f, word) == exp
    assert f.outputs[f.start] == "1"


def test_even_pairs_binary_counts_ab_ba_pairs():
    # Deletang et al.: even number of 'ab' + 'ba' pairs  <=>  first == last (for binary strings)
    f = load_source("even-pairs")
    for n in range(1, 9):
        for w in itertools.product("01", repeat=n):
            pairs = sum(1 for i in range(n - 1) if w[i] != w[i + 1])
            assert outputs(f, list(w))[-1] == ("1" if pairs % 2 == 0 else "0")


@given(st.integers(1, 9), st.lists(st.sampled_from(["+1", "-1", "stay"]), max_size=30))
def test_cycle_nav_is_position(m, word):
    f = load_source(f"cycle-nav:{m}")
    pos, exp = 0, []
    for s in word:
        pos = (pos + {"+1": 1, "-1": -1, "stay": 0}[s]) % m
        exp.append(str(pos))
    assert outputs(f, word) == exp


def _evaluate(tokens, m):
    """Independent evaluator (precedence by two-level parsing, no eval): value of a well-formed digit/op list."""
    terms, sign, cur = [], 1, None
    i = 0
    total = 0
    prod = int(tokens[0])
    i = 1
    while i < len(tokens):
        op, d = tokens[i], int(tokens[i + 1])
        if op == "*":
            prod *= d
        else:
            total += sign * prod
            sign = 1 if op == "+" else -1
            prod = d
        i += 2
    return (total + sign * prod) % m


@given(st.integers(1, 7), st.data())
def test_mod_arith_well_formed_words(m, data):
    f = load_source(f"mod-arith:{m}")
    r = data.draw(st.integers(0, 12))
    toks = [str(data.draw(st.integers(0, m - 1)))]
    for _ in range(r):
        toks += [data.draw(st.sampled_from("+-*")), str(data.draw(st.integers(0, m - 1)))]
    outs = outputs(f, toks)
    for t in range(len(toks)):
        last_digit = t if t % 2 == 0 else t - 1
        assert outs[t] == str(_evaluate(toks[:last_digit + 1], m)), (toks, t)


def test_mod_arith_paper_example_and_errors():
    f = load_source("mod-arith:5")
    assert outputs(f, "1 + 2 - 3 * 4".split())[-1] == "1"      # paper 002: 1+2-3x4 mod 5 = 1
    assert outputs(f, "2 - 3 - 3 * 2".split())[-1] == str((2 - 3 - 6) % 5)
    assert outputs(f, ["1", "1"])[-1] == "error"
    assert outputs(f, ["+"])[-1] == "error"
    assert outputs(f, ["1", "+", "*"])[-1] == "error"
    assert outputs(f, ["1", "+", "*", "2", "+"])[-1] == "error"   # absorbing
    assert f.outputs[f.start] == "0"
    assert set(f.alphabet) == {"0", "1", "2", "3", "4", "+", "-", "*"}


@pytest.mark.parametrize("pattern", ["(ab)*", "a|bc*", "[a-c]+d?", "(0|1(01*0)*1)*", "x.y", "[^a]b", "a{2,3}"])
def test_regex_agrees_with_python_re(pattern):
    f = load_source(f"regex:{pattern}")
    rx = re.compile(pattern)
    chars = [s for s in f.alphabet if len(s) == 1]
    probe = chars + (["Z"] if "<other>" in f.alphabet else [])
    assert "Z" not in chars
    for n in range(0, 7):
        for w in itertools.product(probe, repeat=n):
            syms = [c if c in chars else "<other>" for c in w]
            expect = "1" if rx.fullmatch("".join(w)) else "0"
            got = f.outputs[f.run(f.encode(syms))]
            assert got == expect, (pattern, w)


def test_regex_names_whitespace_symbols():
    f = load_source("regex:a b")
    assert "<space>" in f.alphabet
    assert f.outputs[f.run(f.encode(["a", "<space>", "b"]))] == "1"


@given(st.data())
def test_group_word_problems_are_prefix_products(data):
    name = data.draw(st.sampled_from(["S3", "S4", "A4", "D5", "Z6", "D2", "A4xZ5", "S3xZ2", "Z2xZ2xZ2"]))
    f = load_source(f"group:{name}")
    G = named_group(name)
    assert f.n_states == f.n_letters == G.order
    assert f.outputs[f.start] == G.element_names[0] and G.perms[0] == tuple(range(G.degree))
    word = data.draw(st.lists(st.integers(0, G.order - 1), max_size=12))
    prod = Permutation(list(range(G.degree)))
    for t, g in enumerate(word):
        prod = prod * Permutation(list(G.perms[g]))     # sympy: p*q = first p, then q
        state = f.trace(word)[t]
        assert tuple(prod.array_form) == G.perms[state]
        assert f.outputs[state] == f.alphabet[state] == G.element_names[state]


def test_group_element_names():
    assert load_source("group:S3").alphabet == ("()", "(1,2)", "(0,1)", "(0,1,2)", "(0,2,1)", "(0,2)")
    assert load_source("group:Z3").alphabet == ("0", "1", "2")
    assert load_source("group:D3").alphabet == ("r0", "r1", "r2", "s0", "s1", "s2")
    f = load_source("group:Z2xZ3")
    assert f.alphabet == ("0x0", "0x1", "0x2", "1x0", "1x1", "1x2")
    assert f.outputs[f.run(f.encode("1x2 1x2"))] == "0x1"
    q = named_group("Q8", allow_quaternion=True)       # catalogue only, not a SOURCE preset
    assert q.element_names == ["1", "i", "j", "k", "-1", "-i", "-j", "-k"]
    ij = compose(q.perms[1], q.perms[2])
    assert q.element_names[q.perms.index(ij)] == "k"
    assert q.element_names[q.perms.index(compose(q.perms[2], q.perms[1]))] == "-k"
    g = load_source("group:C4")
    assert g.alphabet == ("0", "1", "2", "3")
    assert all(not any(c.isspace() for c in s) for s in load_source("group:S4").alphabet)


@given(st.data())
def test_transformations_source(data):
    n = data.draw(st.integers(1, 5))
    gens = data.draw(st.lists(st.lists(st.integers(0, n - 1), min_size=n, max_size=n), min_size=1, max_size=3))
    f = load_source("transformations:" + json.dumps(gens))
    assert f.alphabet == tuple(f"t{i}" for i in range(len(gens)))
    assert f.start == 0 and f.n_states == n
    for i, g in enumerate(gens):
        assert [int(f.delta[q, i]) for q in range(n)] == g
    assert f.outputs == tuple(str(q) for q in range(n))


def test_file_source(tmp_path):
    p = tmp_path / "p.json"
    p.write_text('{"alphabet": ["a"], "delta": [[1], [0]]}')
    assert load_source(str(p)).n_states == 2


BAD_SOURCES = [
    ("", "empty source"),
    ("parityy", "unknown source"),
    ("nosuch.json", "no such file"),
    ("counter", "needs an argument"),
    ("counter:0", ">= 1"),
    ("counter:-3", "bad modulus"),
    ("counter:x", "bad modulus"),
    ("counter:2.5", "bad modulus"),
    ("cycle-nav:", "bad modulus"),
    ("mod-arith:abc", "bad modulus"),
    ("mod-arith:100000", "cap"),
    ("parity:3", "takes no argument"),
    ("frob:3", "unknown preset 'frob'"),
    ("group:", "group name"),
    ("group:Q7", "unknown group name"),
    ("group:Q8", "unknown group name 'Q8'"),
    ("group:R7", "unknown group name"),
    ("group:S", "unknown group name"),
    ("group:A4x", "unknown group name"),
    ("group:s5", "unknown group name"),
    ("group:Z0", "Z0"),
    ("group:S9", "above the cap"),
    ("group:S100", "above the cap"),
    ("regex:", "empty pattern"),
    ("regex:(a", "cannot parse"),
    ("transformations:[[0,1],[0]]", "unequal lengths"),
    ("transformations:[[0,2]]", "out of range"),
    ("transformations:[]", "non-empty list"),
    ("transformations:[[0,1]", "not valid JSON"),
    ("transformations:[[0,\"a\"]]", "non-integer"),
    ("transformations:__import__('os')", "not valid JSON"),
]


@pytest.mark.parametrize("source,msg", BAD_SOURCES)
def test_bad_sources(source, msg):
    with pytest.raises(InputError) as info:
        load_source(source)
    assert msg in str(info.value)


def test_size_caps_are_size_limit_errors():
    with pytest.raises(SizeLimitError):
        load_source("group:S7")
    with pytest.raises(SizeLimitError):
        load_source("counter:1000000000")
