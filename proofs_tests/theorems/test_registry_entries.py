"""The statement modules of the registry (``lrnnkit/theorems/paper_NNN/<group>.py``, one per statement group):
each registers entries of its own paper only (the number in its package's ``_common.PAPER``), and its docstring names
every entry it registers, so that the module of a statement is found from the statement's id and back. The entries'
checks themselves run in test_registry.py."""
import os
import pkgutil
import re
import sys

import pytest

import lrnnkit.theorems
import lrnnkit.theorems.paper_000._common
import lrnnkit.theorems.paper_000.appendix
import lrnnkit.theorems.paper_000.equations
import lrnnkit.theorems.paper_000.proof_errata
import lrnnkit.theorems.paper_000.proposition_1
import lrnnkit.theorems.paper_000.section_4
import lrnnkit.theorems.paper_000.section_4_1
import lrnnkit.theorems.paper_000.tables_discussion
import lrnnkit.theorems.paper_000.theorem_1_2
import lrnnkit.theorems.paper_000.theorem_1_2_generic
import lrnnkit.theorems.paper_000.theorem_3
import lrnnkit.theorems.paper_000.theorem_4_5
import lrnnkit.theorems.paper_000.theorem_6
import lrnnkit.theorems.paper_001._common
import lrnnkit.theorems.paper_001.deltaproduct
import lrnnkit.theorems.paper_001.groups
import lrnnkit.theorems.paper_001.section_2
import lrnnkit.theorems.paper_001.tables
import lrnnkit.theorems.paper_001.theorem_1
import lrnnkit.theorems.paper_002._common
import lrnnkit.theorems.paper_002.appendix_a2
import lrnnkit.theorems.paper_002.propositions
import lrnnkit.theorems.paper_002.section_2
import lrnnkit.theorems.paper_002.section_3
import lrnnkit.theorems.paper_002.section_4
import lrnnkit.theorems.paper_003._common
import lrnnkit.theorems.paper_003.appendix_e
import lrnnkit.theorems.paper_003.appendix_g
import lrnnkit.theorems.paper_003.circulant
import lrnnkit.theorems.paper_003.equation_3
import lrnnkit.theorems.paper_003.mixer
import lrnnkit.theorems.paper_003.proof_errata
import lrnnkit.theorems.paper_003.theorem_2
import lrnnkit.theorems.paper_003.theorem_c1
import lrnnkit.theorems.paper_003.theorem_d
import lrnnkit.theorems.paper_004._common
import lrnnkit.theorems.paper_004.hierarchy
import lrnnkit.theorems.paper_004.parameter_counts
import lrnnkit.theorems.paper_004.proposition_2_2
import lrnnkit.theorems.paper_004.proposition_2_4
import lrnnkit.theorems.paper_004.section_2_3
from lrnnkit.theorems import all_statements

#: every statement group, paper by paper (a new module is added here)
GROUPS = {
    "paper_000": ["appendix", "equations", "proof_errata", "proposition_1", "section_4", "section_4_1",
                  "tables_discussion", "theorem_1_2", "theorem_1_2_generic", "theorem_3", "theorem_4_5",
                  "theorem_6"],
    "paper_001": ["deltaproduct", "groups", "section_2", "tables", "theorem_1"],
    "paper_002": ["appendix_a2", "propositions", "section_2", "section_3", "section_4"],
    "paper_003": ["appendix_e", "appendix_g", "circulant", "equation_3", "mixer", "proof_errata", "theorem_2",
                  "theorem_c1", "theorem_d"],
    "paper_004": ["hierarchy", "parameter_counts", "proposition_2_2", "proposition_2_4", "section_2_3"],
}
MODULES = [sys.modules[f"lrnnkit.theorems.{p}.{m}"] for p, ms in GROUPS.items() for m in ms]
COMMONS = [sys.modules[f"lrnnkit.theorems.{p}._common"] for p in GROUPS]

ID = re.compile(r"\b\d{3}:[A-Za-z0-9.\-]*[A-Za-z0-9]")


def _registered() -> dict:
    out = {}
    for s in all_statements():
        if s.check is not None:
            out.setdefault(s.check.__module__, []).append(s)
    return out


def test_the_list_is_every_statement_module():
    """Each paper package's modules are its ``_common`` and the groups listed here, nothing else."""
    root = os.path.dirname(lrnnkit.theorems.__file__)
    on_disk = {f"{p.name}.{m.name}" for p in pkgutil.iter_modules([root]) if p.name.startswith("paper_")
               for m in pkgutil.iter_modules([os.path.join(root, p.name)])}
    assert on_disk == {f"{p}.{m}" for p, ms in GROUPS.items() for m in ms + ["_common"]}


@pytest.mark.parametrize("mod", MODULES, ids=lambda m: m.__name__.split(".", 2)[2])
def test_a_group_registers_its_papers_entries_and_names_them(mod):
    entries = _registered().get(mod.__name__, [])
    assert entries, f"{mod.__name__} registers no statement"
    package = mod.__name__.rsplit(".", 1)[0]
    paper = sys.modules[package + "._common"].PAPER
    assert package.endswith("_" + paper)
    assert {s.paper for s in entries} == {paper} and all(s.id.startswith(paper + ":") for s in entries)
    named = set(ID.findall(mod.__doc__ or ""))
    unnamed = sorted(s.id for s in entries if s.id not in named)
    assert not unnamed, f"{mod.__name__}'s docstring does not name {unnamed}"


def test_the_commons_register_nothing():
    """``_common`` holds what a paper's groups share (the paper number, helpers): no entry of its own."""
    reg = _registered()
    assert all(c.__name__ not in reg for c in COMMONS)
    assert [c.PAPER for c in COMMONS] == ["000", "001", "002", "003", "004"]
