"""networkx graphs and sympy permutation groups <-> :class:`FSA`.

* :func:`to_networkx`: a ``networkx.MultiDiGraph`` whose nodes are the states ``0..n-1`` (attributes ``output``
  and ``name``), with one edge ``q -> delta(q, a)`` per letter (key and attribute ``symbol`` = the letter), and the
  graph attributes ``name``, ``start`` and ``alphabet`` (the letters in order). Graph algorithms then apply as
  they are (``networkx.has_path``, strongly connected components, drawing).
* :func:`from_networkx`: the same form read back, and any ``DiGraph`` / ``MultiDiGraph`` drawn that way: edge
  attribute ``symbol`` (a letter, or a list of letters for one edge of several), or else ``label`` (letters
  separated by commas, as drawings write them), node
  attribute ``output`` (or ``label``; else ``"1"`` / ``"0"`` from a boolean ``accepting``), the start state from
  the graph's ``start`` or the one node with ``start=True``. Letters in the graph's ``alphabet`` order, else
  sorted; states in the graph's node order (the start state first). A missing transition is completed only on
  request (:mod:`.table`).
* :func:`from_permutation_group`: a ``sympy.combinatorics.PermutationGroup`` as its word problem over its
  generators: states are the group's elements (breadth-first from the identity), letter ``g`` moves element
  ``x`` to ``x g`` (sympy's product: first ``x``, then ``g``), and every state outputs its element in 0-based cycle
  notation (``lrnnkit.automata.groups.cycle_notation``), so the automaton's transition monoid is the group. The
  letters are the distinct generators in cycle notation. Refused past ``GROUP_ORDER_CAP`` elements.
"""
from __future__ import annotations

from collections import deque

from ...errors import InputError, SizeLimitError
from ..fsa import FSA
from ..groups import GROUP_ORDER_CAP, cycle_notation
from .table import StateTable, check_size, to_fsa

__all__ = ["to_networkx", "from_networkx", "is_networkx", "from_permutation_group", "is_permutation_group"]


def is_networkx(obj) -> bool:
    """True for networkx graphs (checked by module name)."""
    return type(obj).__module__.startswith("networkx.")


def is_permutation_group(obj) -> bool:
    return type(obj).__module__.startswith("sympy.combinatorics") and type(obj).__name__ == "PermutationGroup"


def to_networkx(fsa: FSA):
    """The automaton as a ``networkx.MultiDiGraph`` (module docstring)."""
    import networkx as nx
    G = nx.MultiDiGraph(name=fsa.name, start=int(fsa.start), alphabet=list(fsa.alphabet))
    names = fsa.state_names
    for q in range(fsa.n_states):
        G.add_node(q, output=fsa.outputs[q], name=names[q] if names is not None else str(q))
    for q in range(fsa.n_states):
        for a, sym in enumerate(fsa.alphabet):
            G.add_edge(q, int(fsa.delta[q, a]), key=sym, symbol=sym)
    return G


def _symbols(data: dict, where: str) -> list:
    s = data.get("symbol")
    if s is None and isinstance(data.get("label"), str):      # a drawn label: letters separated by commas
        s = [x.strip() for x in data["label"].split(",")] if data["label"].strip() != "," else [","]
    elif s is None:
        s = data.get("label")
    if isinstance(s, str):
        s = [s]
    if not isinstance(s, (list, tuple)) or not s or not all(isinstance(x, str) and x for x in s):
        raise InputError(f"{where}: an edge needs a 'symbol' (or 'label') attribute, a letter or a list of letters; "
                         f"got {data.get('symbol', data.get('label'))!r}")
    return list(s)


def from_networkx(G, *, complete: bool | str = False, name: str = "") -> FSA:
    """The :class:`FSA` drawn by a directed networkx graph (module docstring)."""
    where = f"networkx {type(G).__name__}"
    if not G.is_directed():
        raise InputError(f"{where}: an automaton is a directed graph (its edges go from a state to the next)")
    nodes = list(G.nodes)
    check_size(len(nodes), 0, where)
    start = G.graph.get("start")
    if start is None:
        marked = [v for v, d in G.nodes(data=True) if d.get("start") is True]
        if len(marked) != 1:
            raise InputError(f"{where}: give the start state as the graph attribute 'start' or as exactly one node "
                             f"with start=True (found {len(marked)})")
        start = marked[0]
    if start not in G:
        raise InputError(f"{where}: start state {start!r} is not a node")
    nodes.remove(start)
    nodes.insert(0, start)
    index = {v: i for i, v in enumerate(nodes)}
    edges = []
    for u, v, data in G.edges(data=True):
        for s in _symbols(data, f"{where}, edge {u!r} -> {v!r}"):
            edges.append((index[u], index[v], s))
    letters = sorted({s for _, _, s in edges})
    alphabet = G.graph.get("alphabet")
    if alphabet is not None:
        alphabet = [str(a) for a in alphabet]
        if not set(letters) <= set(alphabet) or len(set(alphabet)) != len(alphabet):
            raise InputError(f"{where}: the graph's alphabet {alphabet[:10]} does not list every edge symbol "
                             f"{letters[:10]} once")
        letters = alphabet
    check_size(len(nodes), len(letters), where)
    col = {s: a for a, s in enumerate(letters)}
    delta = [[None] * len(letters) for _ in nodes]
    for u, v, s in edges:
        if delta[u][col[s]] is not None and delta[u][col[s]] != v:
            raise InputError(f"{where}: state {nodes[u]!r} has two edges labelled {s!r} (a deterministic "
                             f"automaton has one)")
        delta[u][col[s]] = v
    outputs = []
    for v in nodes:
        d = G.nodes[v]
        out = d.get("output", d.get("label"))
        if out is None and isinstance(d.get("accepting"), bool):
            out = "1" if d["accepting"] else "0"
        if out is None:
            raise InputError(f"{where}: node {v!r} has no 'output' (or 'label', or boolean 'accepting') attribute")
        outputs.append(str(out))
    names = [str(G.nodes[v].get("name", v)) for v in nodes]
    return to_fsa(StateTable(letters, names, 0, delta, outputs=outputs, name=name or G.graph.get("name", "")),
                  where, complete)


def from_permutation_group(G, *, name: str = "") -> FSA:
    """The word problem of a sympy ``PermutationGroup`` over its generators (module docstring)."""
    where = "sympy PermutationGroup"
    order = int(G.order())
    if order > GROUP_ORDER_CAP:
        raise SizeLimitError(f"{where}: order {order} > {GROUP_ORDER_CAP} elements (lrnnkit.automata.groups."
                             f"GROUP_ORDER_CAP): the word problem has order x generators transitions")
    n = int(G.degree)
    gens, seen = [], set()
    for g in G.generators:
        t = tuple(int(x) for x in g.array_form) + tuple(range(len(g.array_form), n))
        if t not in seen:
            seen.add(t)
            gens.append(t)
    check_size(order, len(gens), where)
    ident = tuple(range(n))
    index, elems, queue = {ident: 0}, [ident], deque([ident])
    delta: list = [[None] * len(gens)]
    while queue:
        x = queue.popleft()
        for a, g in enumerate(gens):
            y = tuple(g[i] for i in x)          # first x, then g
            if y not in index:
                index[y] = len(elems)
                elems.append(y)
                delta.append([None] * len(gens))
                queue.append(y)
            delta[index[x]][a] = index[y]
    labels = [cycle_notation(e) for e in elems]
    return to_fsa(StateTable([cycle_notation(g) for g in gens], labels, 0, delta, outputs=labels,
                             name=name or f"PermutationGroup of order {order}"), where, False)
