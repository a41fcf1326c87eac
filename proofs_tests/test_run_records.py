"""lrnnkit.run_records: run_cells (per configuration and (seed, learning rate) the run with the most steps, the first
on a tie, against a brute-force reading of the same runs) and mamba_key (a Mamba configuration under either of its
names)."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lrnnkit.run_records import MAMBA, MAMBA_LIKE, mamba_key, run_cells

_run = st.fixed_dictionaries({"config_label": st.sampled_from(["a", "b"]), "seed": st.integers(0, 2),
                              "lr": st.sampled_from([1e-3, 1e-4]), "steps": st.integers(0, 5)})


@settings(max_examples=200, deadline=None)
@given(st.lists(_run, max_size=12), st.booleans())
def test_the_run_with_the_most_steps_speaks_for_its_cell(rows, only_a):
    runs = {f"r{i}": {"config_label": r["config_label"], "steps": r["steps"],
                      "config": {"seed": r["seed"], "lr": r["lr"]}} for i, r in enumerate(rows)}
    got = run_cells(runs, ["a"] if only_a else None)
    want: dict = {}
    for k, r in runs.items():       # brute force: the first run of the largest step count in each cell
        if only_a and r["config_label"] != "a":
            continue
        cell = want.setdefault(r["config_label"], {})
        key = (r["config"]["seed"], r["config"]["lr"])
        best = max(x["steps"] for x in runs.values() if x["config_label"] == r["config_label"]
                   and (x["config"]["seed"], x["config"]["lr"]) == key)
        if key not in cell and r["steps"] == best:
            cell[key] = r
    assert got == want


def test_a_run_without_a_config_label_is_its_own_configuration():
    runs = {"x": {"steps": 3, "config": {"seed": 0, "lr": 1e-3}},
            "y": {"steps": 5, "config": {"seed": 0, "lr": 1e-3}, "config_label": "x"}}
    assert run_cells(runs) == {"x": {(0, 1e-3): runs["y"]}}


def test_call_terms_reads_numbers_as_numbers_and_words_as_words():
    """A call's concurrency and cap: numbers are read (runs at a time, seconds), the call's own words are kept as
    written (a summary once printed "... triton 3.6 runs at a time, cap ... s" for worded provenance)."""
    from lrnnkit.run_records import call_terms
    assert call_terms({"concurrency": 4, "cap": 320}) == "4 runs at a time, cap 320 s"
    assert call_terms({"concurrency": "one run on one H200", "cap": "none bound"}) == \
        "one run on one H200, cap: none bound"
    assert call_terms({}) == "?, cap: ?"


@pytest.mark.parametrize("label,have,want", [
    ("Mamba [0,1]", {"Mamba-like diagonal [0,1]": 1}, "Mamba-like diagonal [0,1]"),
    ("Mamba-like diagonal [0,1]", {"Mamba [0,1]": 1}, "Mamba [0,1]"),
    ("A5 Mamba [0,1] 2L", ["A5 Mamba-like diagonal [0,1] 2L", "A5 Mamba [0,1] 2L"], "A5 Mamba [0,1] 2L"),
    ("A5 Mamba [0,1] 2L", ["A5 Mamba-like diagonal [0,1] 2L"], "A5 Mamba-like diagonal [0,1] 2L"),
    ("Mamba [0,1]", {"Mamba [-1,1]": 1}, "Mamba [0,1]"),                       # the other range is not it
    ("DeltaNet [0,1]", {"Mamba [0,1]": 1}, "DeltaNet [0,1]"),
])
def test_mamba_key_cases(label, have, want):
    assert mamba_key(label, have) == want


@given(st.sampled_from(["", "A5 ", "copy "]), st.sampled_from(["[0,1]", "[-1,1]"]), st.sampled_from(["", " 2L"]),
       st.booleans(), st.booleans())
def test_mamba_key_finds_the_one_configuration_under_either_name(pre, rng, post, asked_like, stored_like):
    """Either name finds the stored one, whichever it is; a label itself present is always its own key."""
    def lab(like):
        return f"{pre}{MAMBA_LIKE if like else MAMBA} {rng}{post}"
    have = {lab(stored_like): 0, "DeltaNet " + rng: 1}
    assert mamba_key(lab(asked_like), have) == lab(stored_like)
    assert mamba_key(lab(stored_like), {**have, lab(not stored_like): 2}) == lab(stored_like)
