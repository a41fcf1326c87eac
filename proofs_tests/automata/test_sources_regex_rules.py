"""``regex:`` means what the docs say (the words it matches entirely, as ``re.fullmatch``): lookarounds, which
interegular reads otherwise (``a(?=b)`` accepted ``a b``), are refused; and an empty language follows one rule for
every source: it compiles into a certified constant-0 model (regexes were refused, automata-lib DFAs compiled)."""
from __future__ import annotations

import re

import pytest

import lrnnkit as L
from lrnnkit.automata.builders import from_regex
from lrnnkit.automata.fsa import FSA
from lrnnkit.errors import InputError


@pytest.mark.parametrize("pattern", ["a(?=b)", "(?!a)a", "(?<=a)b", "a(?<!b)", "(x|y(?=z))*"])
def test_lookarounds_are_refused(pattern):
    with pytest.raises(InputError, match="lookaround"):
        from_regex(pattern)


@pytest.mark.parametrize("pattern, word", [("(ab)*", "abab"), ("a|bc", "bc"), ("a(b|c)?", "a"), ("[ab]+c", "bac")])
def test_patterns_without_lookarounds_match_as_fullmatch(pattern, word):
    f = from_regex(pattern)
    for n in range(len(word) + 1):
        prefix = word[:n]
        assert f.outputs[f.run(f.encode(" ".join(prefix)))] == ("1" if re.fullmatch(pattern, prefix) else "0")


def test_empty_language_is_one_rule_for_every_source():
    """An empty language compiles, from a regex as from any other source, into a certified constant-0 model."""
    sources = [FSA(("a", "b"), [[0, 0]], 0, frozenset(), None, None, "nothing")]
    pytest.importorskip("automata")
    from automata.fa.dfa import DFA
    sources.append(DFA(states={"q", "r"}, input_symbols={"a"}, transitions={"q": {"a": "r"}, "r": {"a": "r"}},
                       initial_state="q", final_states=set()))
    for src in sources:
        fsa = L.load_source(src) if not isinstance(src, FSA) else src
        model = L.compile(fsa)
        cert = L.certify(model, fsa)
        assert cert.certified, cert.reason
        assert set(L.run_float(model, [[0] * 5]).outputs[0].tolist()) == {model.output_labels.index("0")}
