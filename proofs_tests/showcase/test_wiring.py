"""The documentation's pictures of a compiled model: the wiring figure draws one route per read of every layer's
input map (lagged reads dashed and labelled), and the Krohn-Rhodes page shows a cascade of several levels whose
worked trace moves (its word avoids the error trap)."""
import numpy as np

import lrnnkit as L
from lrnnkit.constructions import get
from lrnnkit.executor import run_float
from lrnnkit.showcase.docgen import _pick_instance, _trace_word
from lrnnkit.showcase.wiring import wiring_figure


def test_one_route_per_read_and_lags_labelled():
    m = L.compile(L.load_source("even-pairs"), "krohn-rhodes")
    reads = [r for layer in m.layers for r in layer.input_map.reads]
    ax = wiring_figure(m).axes[0]
    assert len(ax.lines) == len(reads)
    lagged = [r for r in reads if r.lag]
    assert lagged and sum(t.get_text().startswith("lag ") for t in ax.texts) == len(lagged)
    assert sum(line.get_linestyle() == "--" for line in ax.lines) == len(lagged)
    assert sum(t.get_text().startswith("layer ") for t in ax.texts) == len(m.layers)


def test_the_krohn_rhodes_page_shows_a_multi_level_cascade_that_moves():
    src, fsa, _ = _pick_instance(get("krohn-rhodes"))
    m = L.compile(fsa, "krohn-rhodes")
    levels = [layer for layer in m.layers if layer.name.startswith("level")]
    assert len(levels) >= 3 and L.certify(m).certified
    word = _trace_word(fsa)
    res = run_float(m, np.array([[m.alphabet.index(fsa.alphabet[a]) for a in word]]), keep_states=True)
    assert len({fsa.outputs[q] for q in fsa.trace(word)}) > 1          # the outputs change along the word
    assert any(np.abs(H[0]).max() > 0 for H in res.states)             # and the states are not all zero
