"""The model IR (lrnnkit.model.ir; paper 000, eq. 1): a layer's symbol is its input map of the reads it names, each
at its lag (BOS before the word), and the float and exact executors follow that semantics; the certifier sees the
lag."""
import numpy as np

from lrnnkit.automata.fsa import FSA
from lrnnkit.certify import certify
from lrnnkit.executor import run_exact, run_float
from lrnnkit.model.ir import Model
from lrnnkit.model.layer import Decoder, Layer, Read, TableMap, Transition


def test_lagged_reads_follow_the_documented_semantics():
    """Layer 1 reads the model input at lag 1 (a token shift): its symbol at step t is x_{t-1}, BOS at t = 0.
    It accumulates counts of the previous symbol being 1 (mod 3 with a permutation of e_0,e_1,e_2)."""
    fsa = FSA(["0", "1"], [[q, (q + 1) % 3] for q in range(3)])
    P = [[0, 0, 1], [1, 0, 0], [0, 1, 0]]  # e_q -> e_{q+1}
    I3 = [[int(i == j) for j in range(3)] for i in range(3)]
    trans = [Transition.from_exact(I3), Transition.from_exact(P), Transition.from_exact(I3)]
    tm = TableMap([Read("input", 1)], [3], [0, 1, 2], 3)  # values 0, 1, BOS -> symbols 0, 1, 2 (BOS = identity)
    L = Layer("dense", 3, trans, np.array([1.0, 0, 0]), tm, Decoder.exact(I3, [0, 0, 0], ["0", "1", "2"]),
              H0_exact=[1, 0, 0])
    M = Model(["0", "1"], [L], TableMap.identity(0, 3), ["0", "1", "2"], provenance={"automaton": fsa.to_dict()})
    rng = np.random.default_rng(0)
    W = rng.integers(0, 2, size=(5, 30))
    out = run_float(M, W).outputs
    for b in range(5):
        expect = [int(np.sum(W[b, :t])) % 3 for t in range(30)]  # counts x_0..x_{t-1}
        assert out[b].tolist() == expect
        assert run_exact(M, W[b].tolist()) == expect
    # the model lags the automaton by one step, so certification must fail at a short word
    c = certify(M, fsa)
    assert not c.certified and c.counterexample == ["1"]
