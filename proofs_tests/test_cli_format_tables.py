"""The command line's tables fit the width and keep every cell whole (lrnnkit.cli_format.table wraps a cell onto
more lines of its row instead of cutting it): at 80 columns, cells that differ only at their ends stay distinct."""
import re

from hypothesis import given, settings, strategies as st

from lrnnkit.cli_format import table

_TEXT = st.text(alphabet="abcde -,/_+()=0123", min_size=0, max_size=60)


def _cells(t: str, ncol: int) -> list:
    """The table's rows read back: per row, per column, the column's text of the row's lines joined (a row starts
    where its first column is non-empty, as the ids below never wrap)."""
    lines = t.split("\n")
    dash = lines[1] if set(lines[1].replace(" ", "")) == {"-"} else next(x for x in lines if set(x) <= {"-", " "})
    spans = [m.span() for m in re.finditer(r"-+", dash)]
    assert len(spans) == ncol
    rows = []
    for line in lines[lines.index(dash) + 1:]:
        parts = [line[a:b if j < ncol - 1 else None].strip() for j, (a, b) in enumerate(spans)]
        if parts[0]:
            rows.append([[p] if p else [] for p in parts])
        else:
            for j, p in enumerate(parts):
                if p:
                    rows[-1][j].append(p)
    return rows


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_TEXT, min_size=3, max_size=3), min_size=1, max_size=6), st.integers(40, 120))
def test_wrapped_tables_fit_and_keep_every_cell(rows, width):
    body = [[f"r{i}"] + r for i, r in enumerate(rows)]
    t = table(["id", "first", "second column", "third"], body, width=width, shrink=(1, 2, 3))
    assert max(map(len, t.split("\n"))) <= width
    got = _cells(t, 4)
    assert len(got) == len(body)
    for want, have in zip(body, got):
        for cell, pieces in zip(want, have):
            # the pieces, joined, are the cell without the spaces at the breaks (wrapping drops only those)
            assert "".join(pieces).replace(" ", "") == "".join(cell.split())


def test_the_cells_that_used_to_be_cut_stay_distinct_at_80_columns():
    fmts = ["fp8-e4m3fn", "fp8-e4m3-ieee", "fp8-e5m2"]
    rows = [[f"r{i}", "mamba-diagonal a=(1/2, 15/16), B=1", "[0, 1]", f, "12+1", "12+1", "54+1", "-", "-"]
            for i, f in enumerate(fmts)]
    heads = ["", "model", "spectrum", "format", "op", "matvec", "proof", "parity_first_wrong_step",
             "parity_verdict_all_lengths"]
    t = table(heads, rows, width=80, shrink={j: 6 for j in range(9)})
    assert max(map(len, t.split("\n"))) <= 80 and "..." not in t
    assert ["".join(c[3]) for c in _cells(t, 9)] == fmts
    cut = table(heads, rows, width=80, shrink={j: 6 for j in range(9)}, overflow="cut")
    assert max(map(len, cut.split("\n"))) <= 80     # the old layout: one line a row, the formats cut alike
    assert cut.split("\n")[0].count("parity_...") == 2          # the two last headers read alike when cut
    spans = [m.span() for m in re.finditer(r"-+", t.split("\n")[t.split("\n").index(
        next(x for x in t.split("\n") if set(x) <= {"-", " "}))])]
    head_lines = t.split("\n")[:t.split("\n").index(next(x for x in t.split("\n") if set(x) <= {"-", " "}))]
    wrapped = ["".join(x[a:b].strip() for x in head_lines) for a, b in spans[-2:-1]] + \
        ["".join(x[spans[-1][0]:].strip() for x in head_lines)]
    assert wrapped == heads[-2:]                                      # wrapped, they are whole
