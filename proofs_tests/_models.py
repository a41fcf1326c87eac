"""Small models built directly in the IR, independent of lrnnkit.constructions, for testing the core."""
import numpy as np

from lrnnkit.automata.fsa import FSA
from lrnnkit.model import Decoder, Layer, Model, TableMap, Transition


def one_hot_model(fsa: FSA) -> Model:
    """The one-hot simulation of an automaton (independent re-implementation for core tests): state e_q, letter a
    acts by the 0/1 matrix M(a)[q', q] = [delta(q, a) = q'], decoder = identity argmax, readout = state -> label."""
    n, k = fsa.n_states, fsa.n_letters
    trans = []
    for a in range(k):
        A = [[int(fsa.delta[q, a] == p) for q in range(n)] for p in range(n)]
        trans.append(Transition.from_exact(A))
    trans = [Transition(t.A, t.B, None, t.A_exact, t.B_exact) for t in trans]
    H0 = [int(q == fsa.start) for q in range(n)]
    I = [[int(i == j) for j in range(n)] for i in range(n)]
    dec = Decoder.exact(I, [0] * n, [str(q) for q in range(n)])
    labels = list(fsa.output_alphabet)
    readout = TableMap([(0, 0)], [n], [labels.index(fsa.outputs[q]) for q in range(n)], len(labels))
    L = Layer("dense", n, trans, np.array(H0, dtype=float), TableMap.identity("input", k), dec, H0_exact=H0)
    return Model(list(fsa.alphabet), [L], readout, labels, name=f"one-hot({fsa.name})",
                 provenance={"automaton": fsa.to_dict(), "construction": "test-one-hot"})
