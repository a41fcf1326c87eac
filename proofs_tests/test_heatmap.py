"""Heat-map labels (lrnnkit.heatmap): every cell labelled, white on dark and black on light whatever the colormap,
empty cells ("never wrong") filled and labelled; the sweep heat map and the demo's collapse grid use it."""
from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lrnnkit.heatmap import label_cells, short_count, text_color  # noqa: E402


def _luminance(c):
    r, g, b = matplotlib.colors.to_rgb(c)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


@pytest.mark.parametrize("cmap", ["viridis", "viridis_r", "magma", "Greys"])
def test_labels_contrast_with_their_cells(cmap):
    vals = np.array([[0.0, 1.0, 2.0], [3.0, math.nan, 4.0]])
    fig, ax = plt.subplots()
    im = ax.imshow(np.ma.masked_invalid(vals), cmap=cmap, vmin=0, vmax=4)
    labels = [["a", "b", "c"], ["d", "never", "f"]]
    label_cells(ax, im, vals, labels)
    texts = {t.get_text(): t for t in ax.texts}
    assert set(texts) == {"a", "b", "c", "d", "never", "f"}          # every cell labelled, the empty one too
    for i in range(2):
        for j in range(3):
            t = texts[labels[i][j]]
            bg = "white" if math.isnan(vals[i, j]) else im.cmap(im.norm(vals[i, j]))
            contrast = abs(_luminance(t.get_color()) - _luminance(bg[:3] if not isinstance(bg, str) else bg))
            assert contrast >= 0.45, (cmap, labels[i][j], t.get_color())
    plt.close(fig)


def test_text_color_extremes():
    assert text_color((0.27, 0.0, 0.33, 1)) == "white"       # viridis' dark purple
    assert text_color((0.99, 0.91, 0.14, 1)) == "black"      # viridis' yellow


def test_short_count():
    assert [short_count(x) for x in (950, 12_345, 340_000, 3_400_000, 2 ** 40)] == ["950", "12.3k", "340k", "3.4M",
                                                                                   "1.1e+12"]
    assert all(len(short_count(x)) <= 7 for x in (1, 10 ** 4 - 1, 10 ** 6 - 1, 10 ** 9 - 1, 10 ** 38))


def test_sweep_heatmap_labels_every_cell(tmp_path, monkeypatch):
    """The sweep's collapse heat map: a wrong step, an exact-for-all-lengths cell ("never"), a none-within cell and
    a failed point, each labelled."""
    from lrnnkit.sweep import report
    from lrnnkit.sweep.spec import parse_spec
    spec = parse_spec({"kind": "collapse", "grid": {"source": ["a", "b"], "format": ["bf16", "fp32"]}})
    recs = [{"source": "a", "format": "bf16", "status": "ok", "first_wrong_step": 123456},
            {"source": "a", "format": "fp32", "status": "ok", "first_wrong_step": None,
             "exact_for_all_lengths": True},
            {"source": "b", "format": "bf16", "status": "ok", "first_wrong_step": None, "steps_run": 2000},
            {"source": "b", "format": "fp32", "status": "failed"}]
    seen = {}
    real = plt.close

    def grab(fig=None):
        if fig is not None and hasattr(fig, "axes") and fig.axes:
            seen["texts"] = [t.get_text() for t in fig.axes[0].texts]
        return real(fig)
    monkeypatch.setattr(plt, "close", grab)
    assert report.plot_collapse_heatmap(spec, recs, str(tmp_path / "h.png"))
    assert {"123k", "never", "none<=2000", "FAIL"} <= set(seen["texts"])
    assert (tmp_path / "h.png").read_bytes()[:4] == b"\x89PNG"
