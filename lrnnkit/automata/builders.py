"""Preset automata (the SOURCE grammar, docs/fsa_format.rst), one builder per task, following the papers' task definitions.

Every builder returns a complete deterministic :class:`~lrnnkit.automata.fsa.FSA` with an output label per state;
the output after a prefix is the label of the state reached (a transduction, as in paper 002 Section 4.1 and
paper 000 Appendix E.1: the target ``y_t`` is defined for every prefix ``x_1 .. x_t``).

* :func:`parity` — paper 000, Section 3.1 / Appendix E.1: alphabet ``0 1``, ``y_t = (sum_i x_i) mod 2``; states
  ``0, 1`` = the parity; start 0. It is the word problem of ``Z2 = S2`` on the letters ``0`` (identity) and
  ``1`` (the generator).
* :func:`counter` ``(M)`` — paper 000, Theorem 2 ("count modulo m, i.e. recognise (1^m)*"): one letter ``1``;
  states ``0..M-1`` = the count mod M; output = the count (``"0"`` .. ``"M-1"``), so the language ``(1^M)*`` is
  the set of words with output ``"0"``.
* :func:`flipflop` — the flip-flop monoid (Krohn–Rhodes' aperiodic building block; "set/reset" memory of one
  bit): letters ``set0``, ``set1`` (constant maps) and ``read`` (identity); states ``0, 1`` = the stored bit;
  start 0; output = the stored bit. Its transition monoid is ``{id, set0, set1}`` (3 elements, aperiodic).
* :func:`even_pairs` ``(M=2)`` — paper 002, Section 4.1, EvenPair(M): input digits ``0..M-1``; output ``1`` iff
  the last symbol equals the first (for M = 2 this is Deletang et al.'s Even Pairs: the number of ``ab`` plus
  ``ba`` pairs is even). The empty word outputs ``1`` (zero pairs: even). States: ``start``, and for each first
  symbol f: ``f=`` (last == first) and ``f!=``; ``2M + 1`` states.
* :func:`cycle_nav` ``(M)`` — cycle navigation (Deletang et al. 2023, used by paper 002's benchmark family): an
  agent on a cycle of length M starts at 0; letters ``+1`` (forward), ``-1`` (back), ``stay``; output = the
  position ``"0"`` .. ``"M-1"``. The transition monoid is ``Z_M``.
* :func:`mod_arith` ``(M)`` — modular arithmetic without brackets, with operator precedence (paper 002,
  Section 4.1, ModArith(M); paper 000 Appendix E.1 uses the same task without the ``=``/PAD tokens). See its
  docstring for the alphabet, the well-formed words and the outputs.
* :func:`from_regex` — ``regex:PATTERN`` through interegular (see its docstring).
* :func:`from_transformations` — ``transformations:[[...],...]``: generators as 0-based image lists.

The group presets ``group:NAME`` live in :mod:`lrnnkit.automata.groups` (:func:`group_word_problem`).
"""
from __future__ import annotations

import json
from contextlib import contextmanager
import unicodedata

import numpy as np

from ..errors import MESSAGE_CHARS, InputError, SizeLimitError
from ..limits import shorten
from .fsa import FSA
from .. import limits
from .minimize import minimize

__all__ = ["parity", "counter", "flipflop", "even_pairs", "cycle_nav", "mod_arith", "from_regex",
           "from_transformations", "MAX_MODULUS", "MAX_MOD_ARITH", "MAX_REGEX_STATES"]

MAX_MODULUS = 100_000       # counter / cycle-nav / even-pairs: states ~ M (even-pairs: M^2 transitions)
MAX_MOD_ARITH = 200         # mod-arith has 2 M^2 + 2 M + 1 states and M + 3 letters
MAX_REGEX_STATES = 5_000       # DFA states of a regex: (a|b)*a(a|b){11} has 4096; the subset construction is exponential


def _check_modulus(M, what: str, cap: int = MAX_MODULUS) -> int:
    if isinstance(M, bool) or not isinstance(M, (int, np.integer)):
        raise InputError(f"{what}: the modulus must be an integer, got {M!r}")
    M = int(M)
    if M < 1:
        raise InputError(f"{what}: the modulus must be >= 1, got {M}")
    if M > cap:
        raise SizeLimitError(f"{what}: modulus {M} is above the cap of {cap}")
    return M


def parity() -> FSA:
    """Parity (paper 000, Section 3.1): ``y_t = (x_1 + ... + x_t) mod 2`` over the alphabet ``0 1``."""
    return FSA(("0", "1"), [[0, 1], [1, 0]], 0, None, ("0", "1"), None, "parity")


def counter(M: int) -> FSA:
    """Counting modulo M on one letter ``1`` (paper 000, Theorem 2); output = the count mod M."""
    M = _check_modulus(M, "counter")
    delta = [[(q + 1) % M] for q in range(M)]
    return FSA(("1",), delta, 0, None, tuple(str(q) for q in range(M)), None, f"counter:{M}")


def flipflop() -> FSA:
    """The flip-flop: ``set0``/``set1`` store a bit, ``read`` keeps it; output = the stored bit (start 0)."""
    return FSA(("set0", "set1", "read"), [[0, 1, 0], [0, 1, 1]], 0, None, ("0", "1"), None, "flipflop")


def even_pairs(M: int = 2) -> FSA:
    """EvenPair(M) (paper 002, Section 4.1): output 1 iff the last digit equals the first (1 on the empty word).

    States: 0 = start; ``1 + 2f`` = first digit f and last digit == f; ``2 + 2f`` = first f, last != f.
    """
    M = _check_modulus(M, "even-pairs", cap=2000)
    n = 1 + 2 * M
    delta = np.zeros((n, M), dtype=np.int64)
    for f in range(M):
        delta[0, f] = 1 + 2 * f
        for s in (1 + 2 * f, 2 + 2 * f):
            for a in range(M):
                delta[s, a] = 1 + 2 * f if a == f else 2 + 2 * f
    labels = ["1"] + ["1", "0"] * M
    names = ["start"] + [x for f in range(M) for x in (f"{f}=", f"{f}!=")]
    return FSA(tuple(str(a) for a in range(M)), delta, 0, None, tuple(labels), tuple(names),
               "even-pairs" if M == 2 else f"even-pairs:{M}")


def cycle_nav(M: int) -> FSA:
    """Cycle navigation on a cycle of length M: letters ``+1``, ``-1``, ``stay``; output = the position."""
    M = _check_modulus(M, "cycle-nav")
    delta = [[(q + 1) % M, (q - 1) % M, q] for q in range(M)]
    return FSA(("+1", "-1", "stay"), delta, 0, None, tuple(str(q) for q in range(M)), None, f"cycle-nav:{M}")


def mod_arith(M: int) -> FSA:
    """Modular arithmetic without brackets, with precedence (paper 002, ModArith(M); paper 000, Appendix E.1).

    Alphabet: the digits ``0`` .. ``M-1`` and the operators ``+``, ``-``, ``*`` (M + 3 letters).

    Well-formed words alternate digit, operator, digit, ...: ``d_0 o_1 d_1 ... o_r d_r`` (a prefix of one may end
    in an operator). ``*`` binds tighter than ``+``/``-``, which associate to the left, all modulo M: paper 002's
    example ``1+2-3*4`` (M = 5) evaluates to ``(1 + 2 - 12) mod 5 = 1``.

    Output after every prefix: the value mod M (``"0"`` .. ``"M-1"``) of the longest well-formed prefix that ends
    in a digit (so a trailing operator does not change the output; the empty word outputs ``"0"``). A word that
    is not a prefix of a well-formed word (two digits or two operators in a row, or a leading operator) enters the
    absorbing state with output ``"error"``, which makes the automaton complete.

    States (paper 002 notes the model "should learn to prioritise multiplication"): with ``S`` = the sum of the
    finished terms and ``P`` = the current (signed) product term,

    * ``(S, P, op?)`` after a digit, expecting an operator: output ``S + P``;
    * ``(S', +)`` / ``(S', -)`` after ``+``/``-`` (``S' = S + P``), expecting a digit ``d``: ``P <- +d`` / ``-d``;
    * ``(S, P, *)`` after ``*``, expecting a digit ``d``: ``P <- P d``;
    * the start state = ``(0, +)``; the error state. ``2 M^2 + 2 M + 1`` states in all (not all reachable-distinct:
      see ``minimize``).
    """
    M = _check_modulus(M, "mod-arith", cap=MAX_MOD_ARITH)
    digits = [str(d) for d in range(M)]
    alphabet = tuple(digits + ["+", "-", "*"])
    PLUS, MINUS, TIMES = M, M + 1, M + 2
    # state numbering
    index = {}
    labels = []
    names = []

    def add(key, out, name):
        index[key] = len(labels)
        labels.append(out)
        names.append(name)

    add(("sum", 0, "+"), "0", "S=0,+")          # start state first
    for S in range(M):
        for sign in "+-":
            if (S, sign) != (0, "+"):
                add(("sum", S, sign), str(S), f"S={S},{sign}")
    for S in range(M):
        for P in range(M):
            add(("op", S, P), str((S + P) % M), f"S={S},P={P}")
    for S in range(M):
        for P in range(M):
            add(("mul", S, P), str((S + P) % M), f"S={S},P={P},*")
    add(("error",), "error", "error")
    n = len(labels)
    err = index[("error",)]
    delta = np.full((n, M + 3), err, dtype=np.int64)
    for key, q in index.items():
        kind = key[0]
        if kind == "sum":
            S, sign = key[1], key[2]
            for d in range(M):
                delta[q, d] = index[("op", S, d % M if sign == "+" else (-d) % M)]
        elif kind == "mul":
            S, P = key[1], key[2]
            for d in range(M):
                delta[q, d] = index[("op", S, (P * d) % M)]
        elif kind == "op":
            S, P = key[1], key[2]
            delta[q, PLUS] = index[("sum", (S + P) % M, "+")]
            delta[q, MINUS] = index[("sum", (S + P) % M, "-")]
            delta[q, TIMES] = index[("mul", S, P)]
    return FSA(alphabet, delta, 0, None, tuple(labels), tuple(names), f"mod-arith:{M}")


# ------------------------------------------------------------------------------------------------ regex
_WS_NAMES = {" ": "<space>", "\n": "<newline>", "\t": "<tab>", "\r": "<cr>"}
OTHER = "<other>"


def _char_symbol(c: str) -> str:
    if c in _WS_NAMES:
        return _WS_NAMES[c]
    if c.isspace() or unicodedata.category(c).startswith("C"):
        return f"<U+{ord(c):04X}>"
    return c


@contextmanager
def _bounded_crawl(limit: int, pattern: str):
    """Run interegular with a bounded subset construction. interegular 0.3 builds every automaton through
    ``interegular.fsm.crawl``, which has no size limit and looks states up in a list (quadratic): the DFA of
    ``(a|b)*a(a|b){n}`` has 2^(n+1) states and took minutes from n = 12 on. The replacement below is the same
    procedure with a dict index and a cap of ``limit`` states (SizeLimitError past it), installed only while the
    pattern is compiled. (Hand-written because the library offers no hook; it mirrors interegular's crawl.)"""
    import interegular.fsm as ifsm
    original = ifsm.crawl

    def crawl(alphabet, initial, final, follow):
        states = [initial]
        index = {}
        try:
            index[initial] = 0
        except TypeError:       # unhashable states: fall back to the library's own crawl
            return original(alphabet, initial, final, follow)
        finals, tmap = set(), {}
        i = 0
        while i < len(states):
            state = states[i]
            if final(state):
                finals.add(i)
            tmap[i] = {}
            for transition in alphabet.by_transition:
                try:
                    nxt = follow(state, transition)
                except ifsm.OblivionError:
                    continue
                j = index.get(nxt)
                if j is None:
                    j = index[nxt] = len(states)
                    states.append(nxt)
                    if len(states) > limit:
                        raise SizeLimitError(f"regex: the automaton of {pattern!r} has more than {limit} states "
                                             f"(lrnnkit.automata.builders.MAX_REGEX_STATES)")
                tmap[i][transition] = j
            i += 1
        return ifsm.FSM(alphabet=alphabet, states=range(len(states)), initial=0, finals=finals, map=tmap,
                        __no_validation__=True)

    ifsm.crawl = crawl
    try:
        yield
    finally:
        ifsm.crawl = original


def regex_size(node) -> int:
    """Positions of a parsed pattern once counted repetition is written out, the size of the automaton that
    interegular builds before determinising: a character or class counts 1, a concatenation or alternation the sum
    of its parts, ``X{m,n}`` n copies of X (``X{m,}``: m + 1), a look-around its inner pattern. Linear in the
    pattern's length (the number itself may be large: ``((a{999}){999}){999}``)."""
    if hasattr(node, "base") and hasattr(node, "min") and hasattr(node, "max"):
        copies = node.max if node.max is not None else node.min + 1
        return regex_size(node.base) * max(int(copies), 1)
    parts = getattr(node, "parts", None) or getattr(node, "options", None)
    if parts is not None:
        return sum(regex_size(p) for p in parts)
    inner = getattr(node, "inner", None)
    return regex_size(inner) if inner is not None else 1


def _check_regex_size(parsed, pattern: str) -> None:
    n = regex_size(parsed)
    if n > limits.MAX_REGEX_SIZE:
        shown = str(n) if n < 10 ** 12 else f"about 10^{len(str(n)) - 1}"
        raise SizeLimitError(f"regex: {shorten(pattern)} has {shown} positions once its counted repetitions are "
                             f"written out; at most {limits.MAX_REGEX_SIZE} (lrnnkit.limits.MAX_REGEX_SIZE)")


def _regex_problem(pattern: str, exc: Exception) -> str:
    """What is wrong with a pattern interegular could not read, in words: Python's own parser's message and position
    when it refuses the pattern too (interegular's often has no text, or "Can't multiply an FSM by -1" for
    ``a{2,1}``), else interegular's reason (a feature it does not implement)."""
    import re
    try:
        re.compile(pattern)
    except re.error as err:
        return f"{err.msg}" + (f" at position {err.pos}" if err.pos is not None else "")
    except (RecursionError, OverflowError, ValueError) as err:
        return f"{type(err).__name__}: {err}"[:MESSAGE_CHARS]
    detail = str(exc).strip()
    if not detail or "FSM" in detail:
        return f"a construct lrnnkit's regex dialect does not read ({type(exc).__name__})"
    return f"{detail} (not supported by lrnnkit's regex dialect)"[:MESSAGE_CHARS]


def _refuse_lookarounds(pattern: str) -> None:
    """InputError when Python's parser finds a lookaround in ``pattern`` (see :func:`from_regex`)."""
    import re
    try:
        from re import _parser as sre_parse
    except ImportError:           # pragma: no cover - Python < 3.11
        import sre_parse
    try:
        tree = sre_parse.parse(pattern)
    except (re.error, RecursionError, OverflowError, ValueError):
        return                    # interegular has already parsed it; its dialect decides
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (list, tuple)) or type(node).__name__ == "SubPattern":
            items = list(node)
            if len(items) == 2 and str(items[0]) in ("ASSERT", "ASSERT_NOT"):
                raise InputError(f"regex: {shorten(pattern)} has a lookaround ((?=...), (?!...), (?<=...), "
                                 "(?<!...)): lookarounds are not supported (their meaning under full-match "
                                 "differs between regex engines); write the language without them")
            stack.extend(x for x in items if isinstance(x, (list, tuple)) or type(x).__name__ == "SubPattern")


def from_regex(pattern: str) -> FSA:
    """The minimal complete DFA of a regular expression, through ``interegular`` (a well-kept regex -> FSM library).

    Dialect: Python ``re`` syntax as interegular supports it (literals, classes ``[a-c]``, ``[^x]``, ``.``,
    ``\\d``/``\\w``/``\\s``, groups, ``|``, ``*``, ``+``, ``?``, ``{m,n}``; no back-references). Matching is
    **full-match**: the output after a prefix is ``"1"`` iff the whole prefix read so far is in the language.
    Lookarounds (``(?=``, ``(?!``, ``(?<=``, ``(?<!``) are refused: interegular reads them with another meaning
    than Python's ``re.fullmatch`` (``a(?=b)`` would accept ``a b``, which ``re.fullmatch`` never matches).
    An empty language is an automaton like any other (its model outputs 0 on every input), as from every other
    source.

    Alphabet: one symbol per character that the pattern mentions explicitly, in code-point order (a character
    class contributes all its characters), written as the character itself; white-space and control characters
    get names (``<space>``, ``<newline>``, ``<tab>``, ``<cr>``, ``<U+XXXX>``); and, when the pattern can match
    a character it does not name (``.``, ``[^...]``), one more symbol ``<other>`` standing for every such
    character. Words are space-separated symbols: ``regex:(ab)*`` reads ``a b a b``. As in Python, ``.`` does
    not match a newline, so a pattern with ``.`` names ``<newline>`` (a character ``.`` rejects).
    """
    if not isinstance(pattern, str) or pattern == "":
        raise InputError("regex: empty pattern (write e.g. regex:(ab)*)")
    try:
        import interegular
        from interegular.fsm import anything_else
    except ImportError as exc:  # pragma: no cover
        raise InputError(f"regex sources need the interegular package ({exc})")
    try:
        parsed = interegular.parse_pattern(pattern)
    except Exception as exc:
        raise InputError(f"regex: cannot parse pattern {shorten(pattern)}: {_regex_problem(pattern, exc)}") from None
    _check_regex_size(parsed, pattern)
    _refuse_lookarounds(pattern)
    try:
        with _bounded_crawl(MAX_REGEX_STATES, pattern):
            fsm = parsed.to_fsm()
    except SizeLimitError:
        raise
    except Exception as exc:
        raise InputError(f"regex: cannot parse pattern {shorten(pattern)}: {_regex_problem(pattern, exc)}") from None
    mapping = fsm.alphabet._symbol_mapping if hasattr(fsm.alphabet, "_symbol_mapping") else dict(fsm.alphabet)
    chars = sorted((c for c in mapping if c is not anything_else), key=ord)
    columns = [mapping[c] for c in chars]
    symbols = [_char_symbol(c) for c in chars]
    if anything_else in mapping:
        col = mapping[anything_else]
        if any(col in row for row in fsm.map.values()):     # only if some state can read an unnamed char
            columns.append(col)
            symbols.append(OTHER)
    if not symbols:
        raise InputError(f"regex: pattern {pattern!r} mentions no characters")
    if len(set(symbols)) != len(symbols):
        raise InputError(f"regex: pattern {pattern!r} has characters whose symbol names collide: {symbols}")
    # BFS over the reachable part from the initial state; missing transitions go to a rejecting sink.
    order = {fsm.initial: 0}
    queue = [fsm.initial]
    rows = []
    sink = None
    for s in queue:
        row = []
        for col in columns:
            t = fsm.map.get(s, {}).get(col)
            if t is None:
                if sink is None:
                    sink = "sink"
                    order[sink] = None
                row.append(sink)
            else:
                if t not in order:
                    order[t] = len(order)
                    queue.append(t)
                row.append(t)
            if len(order) > MAX_REGEX_STATES:
                raise SizeLimitError(f"regex: automaton of {pattern!r} exceeds {MAX_REGEX_STATES} states")
        rows.append(row)
    ids = {}
    for s in queue:
        ids[s] = len(ids)
    if sink is not None:
        ids[sink] = len(ids)
        rows.append([sink] * len(columns))
    delta = [[ids[t] for t in row] for row in rows]
    finals = set(fsm.finals)
    labels = ["1" if (s in finals) else "0" for s in queue] + (["0"] if sink is not None else [])
    fsa = FSA(tuple(symbols), delta, 0, None, tuple(labels), None, f"regex:{pattern}")
    m = minimize(fsa)
    return FSA(m.alphabet, m.delta, m.start, None, m.labels, None, f"regex:{pattern}")


# ------------------------------------------------------------------------------------------------ transformations
def from_transformations(spec) -> FSA:
    """An automaton from generators given as 0-based image lists: ``[[1,0,2],[0,0,2]]``.

    ``spec`` is a JSON string (parsed with ``json.loads``, never ``eval``) or a list of lists. States ``0..n-1``,
    start 0, letters ``t0, t1, ...`` (letter ``ti`` is generator i), output = the state index.
    """
    text = spec
    if isinstance(spec, str):
        try:
            spec = json.loads(spec)
        except RecursionError:
            raise InputError(f"transformations: {shorten(text)} is nested too deeply") from None
        except json.JSONDecodeError as exc:
            raise InputError(f"transformations: {shorten(text)} is not valid JSON ({exc.msg} at column {exc.colno}); "
                             f"expected a list of image lists like [[1,0,2],[0,0,2]]") from None
    if not isinstance(spec, list) or not spec:
        raise InputError(f"transformations: expected a non-empty list of image lists, got {shorten(text)}")
    n = None
    for i, g in enumerate(spec):
        if not isinstance(g, list) or not g:
            raise InputError(f"transformations: generator {i} is {shorten(g)}, not a non-empty list of state indices")
        if n is None:
            n = len(g)
        elif len(g) != n:
            raise InputError(f"transformations: image lists have unequal lengths ({n} and {len(g)}, "
                             f"generator {i} = {shorten(g)})")
        for v in g:
            if isinstance(v, bool) or not isinstance(v, int):
                raise InputError(f"transformations: generator {i} = {shorten(g)} has a non-integer image {v!r}")
            if not 0 <= v < n:
                raise InputError(f"transformations: generator {i} = {shorten(g)} maps to {v}, out of range 0..{n - 1}")
    delta = np.array(spec, dtype=np.int64).T
    return FSA(tuple(f"t{i}" for i in range(len(spec))), delta, 0, None, None, None,
               "transformations:" + json.dumps(spec, separators=(",", ":")))
