"""Graphviz DOT <-> :class:`FSA`: read what automata-lib, AALpy and Graphviz write; write what AALpy reads.

Reading (:func:`fsa_from_dot`). The text is parsed with the DOT grammar (graphviz.org/doc/info/lang.html:
``strict``, ``digraph``, statements, attribute lists, ``node``/``edge`` defaults with their scope, subgraphs,
ports, quoted strings joined with ``+``, comments) and then read as an automaton:

* the **start state** is the target of the one edge leaving a *start marker*: a node without incoming edges whose
  ``shape`` is ``point``, ``none``, ``plaintext`` or ``plain``, or whose name begins with ``__start`` (AALpy writes
  ``__start0 [shape=none, label=""]``, automata-lib a ``shape=point`` node with an empty label);
* every other node is a **state**, numbered in order of first appearance; its name is its ``label`` (the node id
  when there is none, or when it is ``\\N``);
* a graph with ``shape=record`` nodes labelled ``name|output`` is a **Moore machine** (AALpy's ``moore``
  files): the output of a state is the text after the first unescaped ``|``. Otherwise it is an **acceptor**: a
  state accepts (output ``"1"``) iff it has ``shape=doublecircle`` or ``peripheries`` >= 2;
* every other edge is a **transition**; its label is the input symbol. automata-lib draws one edge per pair of
  states with the symbols joined by commas (``label="0,1"``): a label is split at its commas when every piece is
  one character (automata-lib's symbols are single characters), and kept whole otherwise (``(0,1)`` is one
  symbol). Files written by :func:`fsa_to_dot` say so in their ``comment`` and are never split;
* the **alphabet** is the symbols in order of first appearance (and in files of ours that Graphviz re-wrote,
  ``dot -Tdot``, the states are put back in the order of their ids ``s0, s1, ...``). Missing transitions make a
  partial automaton, completed only on request (:mod:`.table`); two targets on one symbol (an NFA drawing) are
  refused.

Errors are one-line :class:`InputError` messages naming the input and, for syntax errors, the line. The text is at
most :data:`lrnnkit.limits.MAX_FILE_BYTES` (files are read bounded), subgraphs nest at most
:data:`MAX_DEPTH` deep, the nodes number at most :data:`lrnnkit.limits.MAX_STATES` plus :data:`MAX_MARKERS`
start markers, and the edges (a subgraph-to-subgraph edge stands for all pairs) at most
:data:`lrnnkit.limits.MAX_TRANSITIONS`: each is checked as the parser meets it, before the work it would cost.
Parsing and reading take time linear in the text (a subgraph's members are collected in time proportional to
them), so a file at the limits reads in seconds.

Why not pydot (which AALpy installs): its pyparsing grammar is orders of magnitude slower on large files, it
checks no size before it has built the whole graph, and its syntax errors are multi-line pyparsing reports; this
reader keeps the bounds and the one-line messages.

Writing (:func:`fsa_to_dot`): one statement per line, AALpy's dialect (``aalpy.utils.load_automaton_from_file(path,
"dfa")`` for an acceptor, ``"moore"`` otherwise reads it back), also valid Graphviz input: node ids ``s0, s1,
...``, the state name in the label, ``doublecircle`` for accepting states of an acceptor (outputs ``"0"``/``"1"``),
``shape=record`` with ``label="name|output"`` for a Moore machine, one edge per symbol, and the start marker
``__start0``.
"""
from __future__ import annotations

import re

from ... import limits
from ...errors import InputError, SizeLimitError
from ..fsa import FSA
from .table import StateTable, to_fsa

__all__ = ["parse_dot", "fsa_from_dot", "fsa_to_dot", "looks_like_dot", "MAX_DEPTH", "MAX_MARKERS",
           "LRNNKIT_COMMENT"]

MAX_DEPTH = 64
MAX_MARKERS = 64     # start-marker nodes beside the states (lrnnkit and AALpy write one)
LRNNKIT_COMMENT = "lrnnkit.fsa: one input symbol per edge"
_MARKER_SHAPES = {"point", "none", "plaintext", "plain"}
_KEYWORDS = {"strict", "graph", "digraph", "node", "edge", "subgraph"}
_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\n\f\v]+)
  | (?P<lcomment>//[^\n]*)
  | (?P<bcomment>/\*.*?\*/)
  | (?P<edgeop>->|--)
  | (?P<num>-?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?))
  | (?P<id>[A-Za-z_\x80-\U0010ffff][A-Za-z_0-9\x80-\U0010ffff]*)
  | (?P<punct>[{}\[\]=;,:+])
""", re.VERBOSE | re.DOTALL)


_STRING = re.compile(r'"([^"\\]*(?:\\.[^"\\]*)*)"', re.DOTALL)     # a quoted string; its escapes resolved by _escaped
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


def _escaped(m) -> str:
    """DOT's escapes in a quoted string: ``\\"`` is a quote, a backslash-newline continues the line, any other
    escape is kept as written (labels give ``\\N``, ``\\l`` ... their meaning later)."""
    e = m.group(1)
    return '"' if e == '"' else "" if e == "\n" else "\\" + e


class _Html(str):
    """An HTML-like string ``<...>`` (a rich label, not a plain name or symbol)."""


class _Tok:
    __slots__ = ("kind", "value", "line")

    def __init__(self, kind, value, line):
        self.kind, self.value, self.line = kind, value, line


def _tokens(text: str, where: str):
    """The tokens of ``text``, one at a time (the parser takes them as it goes: a size bound it meets stops the
    reading there)."""
    i, n, line = 0, len(text), 1
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":             # C preprocessor output lines
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == '"':
            m = _STRING.match(text, i)
            if m is None:
                raise InputError(f"{where}: line {line}: unterminated quoted string")
            body = m.group(1)
            yield _Tok("str", _ESCAPE.sub(_escaped, body) if "\\" in body else body, line)
            line += body.count("\n")
            i = m.end()
            at_line_start = False
            continue
        if c == "<":                               # HTML-like string: balanced angle brackets
            depth, j = 0, i
            while j < n:
                if text[j] == "<":
                    depth += 1
                elif text[j] == ">":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            if j >= n:
                raise InputError(f"{where}: line {line}: unterminated HTML-like string '<...>'")
            yield _Tok("html", text[i + 1:j], line)
            line += text.count("\n", i, j + 1)
            i = j + 1
            at_line_start = False
            continue
        m = _TOKEN.match(text, i)
        if m is None:
            raise InputError(f"{where}: line {line}: unexpected character {c!r} (not DOT)")
        kind = m.lastgroup
        s = m.group()
        if kind == "ws" or kind.endswith("comment"):
            nl = s.count("\n")
            line += nl
            if nl:
                at_line_start = True
            i = m.end()
            continue
        at_line_start = False
        if kind in ("id", "num"):
            yield _Tok("kw" if kind == "id" and s.lower() in _KEYWORDS else "id", s.lower()
                       if kind == "id" and s.lower() in _KEYWORDS else s, line)
        else:
            yield _Tok("edgeop" if kind == "edgeop" else s, s, line)
        i = m.end()


class _Graph:
    def __init__(self):
        self.directed = True
        self.name = ""
        self.attrs: dict = {}
        self.nodes: dict = {}      # id -> attrs, insertion order = first appearance
        self.edges: list = []      # (src, dst, attrs)


class _Parser:
    def __init__(self, toks, where: str):
        self.src, self.t, self.i, self.where = iter(toks), [], 0, where
        self.g = _Graph()
        self.order: list = []       # node ids in order of first appearance (a subgraph's new ones: a tail of it)

    def fail(self, msg):
        self.peek()
        line = self.t[self.i].line if self.i < len(self.t) else (self.t[-1].line if self.t else 1)
        raise InputError(f"{self.where}: line {line}: {msg}")

    def peek(self, k=0):
        j = self.i + k
        while len(self.t) <= j:
            tok = next(self.src, None)
            if tok is None:
                return None
            self.t.append(tok)
        return self.t[j]

    def take(self, kind=None, value=None):
        tok = self.peek()
        if tok is None:
            self.fail(f"unexpected end of input (expected {value or kind})")
        if (kind is not None and tok.kind != kind) or (value is not None and tok.value != value):
            self.fail(f"expected {value or kind}, found {tok.value!r}")
        self.i += 1
        return tok

    def at(self, kind, value=None):
        tok = self.peek()
        return tok is not None and tok.kind == kind and (value is None or tok.value == value)

    def ident(self):
        tok = self.peek()
        if tok is None or tok.kind not in ("id", "str", "html"):
            self.fail(f"expected an identifier, found {tok.value if tok else 'end of input'!r}")
        self.i += 1
        value = tok.value
        if tok.kind == "str":
            while self.at("+") and self.peek(1) is not None and self.peek(1).kind == "str":
                self.i += 1
                value += self.take("str").value
        return _Html(value) if tok.kind == "html" else value

    def parse(self) -> _Graph:
        if self.at("kw", "strict"):
            self.i += 1
        tok = self.take("kw")
        if tok.value not in ("graph", "digraph"):
            self.fail(f"expected 'digraph' or 'graph', found {tok.value!r}")
        self.g.directed = tok.value == "digraph"
        if not self.at("{"):
            self.g.name = self.ident()
        self.take("{")
        self.stmts({}, {}, 0)
        self.take("}")
        if self.peek() is not None:
            self.fail(f"unexpected {self.peek().value!r} after the graph (one graph per file)")
        return self.g

    def attr_list(self) -> dict:
        out: dict = {}
        while self.at("["):
            self.i += 1
            while not self.at("]"):
                k = self.ident()
                if self.at("="):
                    self.i += 1
                    out[k] = self.ident()
                else:
                    out[k] = "true"
                if self.at(",") or self.at(";"):
                    self.i += 1
            self.take("]")
        return out

    def node_id(self) -> str:
        name = self.ident()
        if self.at(":"):                         # port (and compass point): not part of the node
            self.i += 1
            self.ident()
            if self.at(":"):
                self.i += 1
                self.ident()
        return name

    def touch(self, name: str, ndef: dict) -> None:
        if name not in self.g.nodes:
            if len(self.order) >= limits.MAX_STATES + MAX_MARKERS:
                raise SizeLimitError(f"{self.where}: more than {limits.MAX_STATES + MAX_MARKERS} nodes: automata have "
                                     f"at most {limits.MAX_STATES} states (lrnnkit.limits.MAX_STATES) and the "
                                     f"reader takes at most {MAX_MARKERS} start markers")
            self.g.nodes[name] = dict(ndef)
            self.order.append(name)

    def operand(self, ndef, edef, depth) -> list:
        if self.at("{") or self.at("kw", "subgraph"):
            return self.subgraph(ndef, edef, depth)
        name = self.node_id()
        self.touch(name, ndef)
        return [name]

    def subgraph(self, ndef, edef, depth) -> list:
        if depth >= MAX_DEPTH:
            self.fail(f"subgraphs nested more than {MAX_DEPTH} deep")
        if self.at("kw", "subgraph"):
            self.i += 1
            if not self.at("{"):
                self.ident()
        self.take("{")
        first = len(self.order)
        members = self.stmts(dict(ndef), dict(edef), depth + 1)
        self.take("}")
        seen = set(members)
        return members + [n for n in self.order[first:] if n not in seen]

    def stmts(self, ndef: dict, edef: dict, depth: int) -> list:
        members: dict = {}      # an ordered set: membership in constant time
        while not self.at("}"):
            if self.peek() is None:
                self.fail("unexpected end of input (missing '}')")
            if self.at(";"):
                self.i += 1
                continue
            tok = self.peek()
            if tok.kind == "kw" and tok.value in ("graph", "node", "edge"):
                self.i += 1
                attrs = self.attr_list()
                {"graph": self.g.attrs if depth == 0 else {}, "node": ndef, "edge": edef}[tok.value].update(attrs)
                continue
            nxt = self.peek(1)
            if tok.kind in ("id", "str") and nxt is not None and nxt.kind == "=":
                k = self.ident()
                self.take("=")
                v = self.ident()
                if depth == 0:
                    self.g.attrs[k] = v
                continue
            left = self.operand(ndef, edef, depth)
            members.update(dict.fromkeys(left))
            if self.at("edgeop"):
                chain = [left]
                while self.at("edgeop"):
                    op = self.take("edgeop").value
                    if (op == "->") != self.g.directed:
                        self.fail(f"edge operator {op!r} in a{' directed' if self.g.directed else 'n undirected'} "
                                  "graph")
                    chain.append(self.operand(ndef, edef, depth))
                    members.update(dict.fromkeys(chain[-1]))
                attrs = {**edef, **self.attr_list()}
                more = sum(len(a) * len(b) for a, b in zip(chain, chain[1:]))
                if len(self.g.edges) + more > limits.MAX_TRANSITIONS:   # {a b ...} -> {c d ...} multiplies
                    raise SizeLimitError(f"{self.where}: more than {limits.MAX_TRANSITIONS} edges "
                                         "(lrnnkit.limits.MAX_TRANSITIONS)")
                for a, b in zip(chain, chain[1:]):
                    for u in a:
                        for v in b:
                            self.g.edges.append((u, v, attrs))
            elif len(left) == 1 and tok.kind in ("id", "str", "html"):
                self.g.nodes[left[0]].update(self.attr_list())
        return list(members)


def parse_dot(text: str, where: str = "<DOT>") -> _Graph:
    """The parsed graph: ``directed``, ``name``, ``attrs`` (graph attributes), ``nodes`` (id -> attributes, in
    order of first appearance) and ``edges`` ((source, target, attributes), in file order)."""
    return _Parser(_tokens(text, where), where).parse()


def looks_like_dot(text: str) -> bool:
    """True when ``text`` begins (after white space and comments) with ``strict``, ``digraph`` or ``graph``."""
    t = re.sub(r"^(\s+|//[^\n]*|/\*.*?\*/|#[^\n]*)*", "", text[:4096], flags=re.DOTALL)
    return re.match(r"(?i)(strict\s+)?(di)?graph\b", t) is not None


def _unescape(s: str, node: str = "", record: bool = False) -> str:
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            e = s[i + 1]
            if e == "\\":
                out.append("\\")
            elif e == "N":
                out.append(node)
            elif record and e in "{}|<> ":
                out.append(e)
            else:
                out.append(c + e)
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _record_fields(label: str) -> list:
    """Split a record label at its unescaped ``|`` (the raw label, escapes still in)."""
    parts, cur, i = [], [], 0
    while i < len(label):
        if label[i] == "\\" and i + 1 < len(label):
            cur.append(label[i:i + 2])
            i += 2
            continue
        if label[i] == "|":
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(label[i])
        i += 1
    parts.append("".join(cur))
    return parts


def _symbols(label: str, split: bool) -> list:
    if split and "," in label:
        parts = label.split(",")
        if all(len(p) == 1 for p in parts):
            return parts
    return [label]


def fsa_from_dot(text: str, where: str = "<DOT>", *, complete: bool | str = False, name: str = "") -> FSA:
    """The automaton drawn by the DOT ``text`` (module docstring)."""
    g = parse_dot(text, where)
    if not g.directed:
        raise InputError(f"{where}: an undirected graph: an automaton needs directed edges (digraph, ->)")
    incoming = {v for _, v, _ in g.edges}

    def shape(n):
        return g.nodes[n].get("shape", "").lower()

    markers = [n for n in g.nodes if n not in incoming and (shape(n) in _MARKER_SHAPES or n.startswith("__start"))]
    mset = set(markers)
    start_edges = [(u, v) for u, v, _ in g.edges if u in mset]
    if not start_edges:
        raise InputError(f"{where}: no start state: draw an edge from an invisible node to it, e.g. "
                         '__start0 [shape=none, label=""]; __start0 -> q0;')
    if len({v for _, v in start_edges}) > 1:
        shown = ", ".join(f"{u} -> {v}" for u, v in start_edges[:4])
        raise InputError(f"{where}: {len(start_edges)} start edges ({shown}); an automaton has one start state")
    states = [n for n in g.nodes if n not in mset]
    ours = LRNNKIT_COMMENT in g.attrs.get("comment", "")
    if ours and all(re.fullmatch(r"s[0-9]{1,9}", n) for n in states):
        states.sort(key=lambda n: int(n[1:]))     # a file of ours that Graphviz re-wrote: our numbering back
    index = {n: i for i, n in enumerate(states)}
    moore = any(shape(n) in ("record", "mrecord") and len(_record_fields(g.nodes[n].get("label", ""))) > 1
                for n in states)
    names, outputs, accepting = [], [], set()
    for i, n in enumerate(states):
        attrs = g.nodes[n]
        label = attrs.get("label", "\\N")
        if isinstance(label, _Html):
            label = "\\N"
        if moore:
            fields = _record_fields(label)
            if len(fields) < 2:
                raise InputError(f"{where}: state {n!r} has no output: in a Moore machine every state is labelled "
                                 "'name|output' (shape=record)")
            nm = _unescape(fields[0], n, True).strip()
            if nm.startswith("{"):
                nm = nm[1:]
            out = _unescape("|".join(fields[1:]), n, True).strip()
            if out.endswith("}"):
                out = out[:-1]
            names.append(nm or n)
            outputs.append(out)
        else:
            nm = _unescape(label, n)
            names.append(nm if nm else n)
            try:
                per = int(attrs.get("peripheries", "1"))
            except ValueError:
                per = 1
            if attrs.get("shape", "").lower() == "doublecircle" or per >= 2:
                accepting.add(i)
    if len(set(names)) != len(names):
        names = list(states)
    split = not ours
    alphabet: list = []
    sym_index: dict = {}
    moves: dict = {}
    edges = g.edges
    if ours:                                       # state by state, as written: the alphabet in its order
        edges = sorted(edges, key=lambda e: index.get(e[0], -1))
    for u, v, attrs in edges:
        if u in mset:
            continue
        if v in mset:
            raise InputError(f"{where}: edge {u} -> {v} enters the start marker {v!r}")
        label = attrs.get("label")
        if label is None or label == "" or isinstance(label, _Html):
            raise InputError(f"{where}: edge {u} -> {v} has no {'plain ' if label else ''}label: every transition "
                             "is labelled with its input symbol")
        for s in _symbols(_unescape(label), split):
            if s == "ε":
                raise InputError(f"{where}: edge {u} -> {v} is an epsilon (ε) transition: this DOT draws an NFA; "
                                 "determinise it first (automata-lib: DFA.from_nfa, or pass the NFA object)")
            if s not in sym_index:
                sym_index[s] = len(alphabet)
                alphabet.append(s)
            key = (index[u], sym_index[s])
            if key in moves and moves[key] != index[v]:
                raise InputError(f"{where}: state {names[index[u]]!r} has two targets on {s!r} "
                                 f"({names[moves[key]]!r} and {names[index[v]]!r}): nondeterministic; determinise "
                                 "it first (automata-lib: DFA.from_nfa, or pass the NFA object)")
            moves[key] = index[v]
    if not moore and not accepting and not ours and alphabet and all("/" in a for a in alphabet):
        raise InputError(f"{where}: every edge is labelled input/output and no state accepts: this looks like a "
                         "Mealy machine, which lrnnkit does not read (acceptors and Moore machines only)")
    delta = [[moves.get((q, a)) for a in range(len(alphabet))] for q in range(len(states))]
    start = index[start_edges[0][1]]
    t = StateTable(alphabet, names, start, delta, accepting=None if moore else accepting,
                   outputs=outputs if moore else None, name=name or str(g.name))
    return to_fsa(t, where, complete)


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _rec(s: str) -> str:
    return re.sub(r"([{}|<>])", r"\\\1", s)


def fsa_to_dot(fsa: FSA) -> str:
    """DOT text of ``fsa`` (module docstring), ending with a newline."""
    acceptor = set(fsa.outputs) <= {"0", "1"}
    names = (list(fsa.state_names) if fsa.state_names is not None else [str(q) for q in range(fsa.n_states)])
    gname = re.sub(r"\W", "_", fsa.name) or "automaton"
    lines = [f"digraph {gname} {{", f"comment={_q(LRNNKIT_COMMENT)};", "rankdir=LR;"]
    for q in range(fsa.n_states):
        if acceptor:
            lines.append(f"s{q} [label={_q(names[q])}" + (", shape=doublecircle" if fsa.outputs[q] == "1" else "")
                         + "];")
        else:
            lines.append(f"s{q} [label={_q(_rec(names[q]) + '|' + _rec(fsa.outputs[q]))}, shape=record, "
                         "style=rounded];")
    for q in range(fsa.n_states):
        for a, sym in enumerate(fsa.alphabet):
            lines.append(f"s{q} -> s{int(fsa.delta[q, a])} [label={_q(sym)}];")
    lines += ['__start0 [label="", shape=none];', f'__start0 -> s{fsa.start} [label=""];', "}"]
    return "\n".join(lines) + "\n"
