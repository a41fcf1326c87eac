"""Runs every registered statement's check and compares the derived verdict with the recorded one.

The quick profile runs inside ``make test``; the deep profile (many more examples) is marked slow.
A mismatch means either the code changed behaviour or a recorded verdict is stale: both must be looked at.
"""
import json

import pytest

from lrnnkit.theorems import all_statements, run_check
from lrnnkit.theorems.registry import VERDICTS, perturbation_flips

STATEMENTS = all_statements()
IDS = [s.id for s in STATEMENTS]


def test_registry_is_well_formed():
    assert len(set(IDS)) == len(IDS)
    for s in STATEMENTS:
        assert s.verdict in VERDICTS
        assert s.id.startswith(s.paper + ":")
        assert s.statement.strip() and s.evidence.strip()
        json.dumps(s.to_json(), default=str)  # the registry is JSON-able for `lrnnkit theorems --json`
        if s.verdict in ("falsified", "holds-as-corrected", "holds-with-wording-slip"):
            assert s.counterexample is not None
        if s.verdict in ("holds-as-corrected", "holds-with-wording-slip"):
            assert s.corrected
        if s.verdict != "open":
            assert s.check is not None, f"{s.id}: a decided verdict needs an executable check"


def _reproduced(sid: str, profile: str):
    """The check of ``sid`` run at ``profile`` derives the recorded verdict; returns its result."""
    s = next(x for x in STATEMENTS if x.id == sid)
    if s.check is None:
        pytest.skip("no executable check (verdict open)")
    r = run_check(sid, profile)
    assert r.verdict == s.verdict, f"{sid}: derived {r.verdict}, recorded {s.verdict}: {r.evidence}"
    return r


@pytest.mark.parametrize("sid", IDS)
def test_recorded_verdict_is_reproduced_quick(sid):
    r = _reproduced(sid, "quick")
    if r.verdict in ("falsified", "holds-as-corrected", "holds-with-wording-slip"):
        assert r.counterexample is not None


@pytest.mark.slow
@pytest.mark.parametrize("sid", IDS)
def test_recorded_verdict_is_reproduced_deep(sid):
    _reproduced(sid, "deep")


def test_every_entry_has_its_reproduce_command():
    for s in STATEMENTS:
        assert s.reproduce == f"lrnnkit theorems --check {s.id}"
        assert s.to_json()["reproduce"] == s.reproduce


def test_open_entries_say_what_remains_and_run_a_decision_procedure():
    """An `open` verdict is only recorded with a decision procedure tried (an executable check)
    and an evidence text that states what remains unknown. Empirical entries (kind `empirical`, a training run not
    reproduced at some scale) are a different kind of open and are excluded."""
    for s in STATEMENTS:
        if s.verdict == "open" and s.kind != "empirical":
            assert s.check is not None, s.id
            assert any(w in s.evidence.lower() for w in ("remains", "unknown", "open for")), s.id


PERTURBED = [s.id for s in STATEMENTS if s.perturb is not None]
#: entries with a check but no declared perturbation (the count may only go down): none; the empirical entries'
#: perturbation is their stored results at the paper's scale with the numbers turned against the claim
MISSING_PERTURBATIONS = 0


def _perturbed_verdict_ok(s, r) -> bool:
    """A perturbed input must change the outcome: a statement that holds (or holds as corrected) becomes
    ``falsified``; a falsified one (whose perturbation breaks the recorded counterexample) becomes anything else.
    An empirical entry's perturbation must be decided by its experiment's judge (a rejection of the turned numbers),
    not by the plumbing around it (a missing judge or an unreadable record gives ``open``)."""
    if s.kind == "empirical" and s.paper != "lrnnkit":
        outcome = ((r.details or {}).get("judgement") or {}).get("outcome", "")
        if not outcome.startswith(("not reproduced", "partly reproduced")):
            return False
    return perturbation_flips(s.verdict, r.verdict)


@pytest.mark.parametrize("sid", PERTURBED)
def test_check_fails_on_its_perturbation_quick(sid):
    s = next(x for x in STATEMENTS if x.id == sid)
    r = run_check(sid, "quick", perturbed=True)
    assert _perturbed_verdict_ok(s, r), f"{sid}: perturbation {s.perturb} gave {r.verdict}: {r.evidence}"


@pytest.mark.slow
@pytest.mark.parametrize("sid", PERTURBED)
def test_check_fails_on_its_perturbation_deep(sid):
    s = next(x for x in STATEMENTS if x.id == sid)
    r = run_check(sid, "deep", perturbed=True)
    assert _perturbed_verdict_ok(s, r), f"{sid}: perturbation {s.perturb} gave {r.verdict}: {r.evidence}"


def test_perturbation_coverage_only_grows():
    """Entries whose check declares no perturbation yet are listed here by count; the number may only go down."""
    missing = [s.id for s in STATEMENTS if s.perturb is None and s.check is not None]
    assert len(missing) <= MISSING_PERTURBATIONS, sorted(missing)


def test_own_claims_live_apart_from_the_papers():
    """lrnnkit's own claims (its questions and measurements) carry paper OWN and ids OWN:...; the papers' tallies
    (paper_statements) count only the five papers' statements."""
    from lrnnkit.theorems.registry import OWN, paper_statements
    own = [s for s in STATEMENTS if s.paper == OWN]
    assert all(s.id.startswith(OWN + ":") for s in own)
    assert all(s.paper in ("000", "001", "002", "003", "004") for s in paper_statements())
    assert len(paper_statements()) + len(own) == len(STATEMENTS)
    for s in paper_statements():
        assert "lrnnkit's own question" not in s.statement, s.id


def test_user_facing_text_cites_no_issue_numbers():
    import re
    for s in STATEMENTS:
        for text in (s.statement, s.evidence, s.notes, s.corrected or "", s.hypotheses, s.conclusion):
            assert not re.search(r"\bissue\s*#?\d", text, re.I), s.id


def test_empirical_perturbation_is_falsified_only_at_the_papers_scale():
    """The empirical entries' perturbation (their numbers turned against the claim, at the paper's scale) is
    ``falsified`` because the judge rejects the numbers at the paper's scale: the same numbers at small scale stay
    ``open`` (a miss at small scale is not evidence against the paper)."""
    from lrnnkit.theorems.registry import OWN
    empirical = [s for s in STATEMENTS if s.kind == "empirical" and s.paper != OWN and s.perturb is not None
                 and s.verdict not in ("falsified", "holds-as-corrected")]   # one seed / the sweep turned
    assert empirical
    for s in empirical:
        turned = s.perturb["record"]
        assert s.check("quick", record=dict(turned, scale="small")).verdict == "open", s.id
        assert s.check("quick", record=turned).verdict == "falsified", s.id


# ---------------------------------------------------------------------------- a counterexample that fails to verify
def _broken_counterexamples():
    """(entry id, the check's keyword arguments that break its recorded counterexample and nothing else)."""
    from fractions import Fraction as F
    from lrnnkit.theorems.paper_000.proposition_1 import P13B_CE, UNIT_K3_H0
    return [
        # the first factor's beta set to 0 (the identity): a product of two factors, whose spectrum is real
        ("000:proposition-1.3b", {"factors": [(F(0), P13B_CE[0][1])] + list(P13B_CE[1:])}),
        # a reflection across the first axis in place of v1: the product is no rotation by 2 pi / 3
        ("000:proposition-1-consequence", {"v1": (F(1), F(0))}),
        # the initial state moved off the bf16 midpoint's neighbourhood: the cast no longer counts modulo 3
        ("000:proposition-1.unit-interval-reading", {"h0": (F(1), UNIT_K3_H0[1], UNIT_K3_H0[2])}),
        # the higher automaton's letter is the identity: the printed and the cascade wiring agree on 'a'
        ("000:theorem-4-proof-wiring", {"ce_top": (0, 1)}),
        # Lambda = diag(0, 0): the printed chain's bound is 3/4 <= 1, no counterexample
        ("003:theorem-2.1-proof-neumann", {"lams": [F(0), F(0)]}),
    ]


@pytest.mark.parametrize("sid,kwargs", _broken_counterexamples(), ids=[x[0] for x in _broken_counterexamples()])
def test_a_counterexample_that_does_not_verify_gives_open(sid, kwargs):
    """A check whose recorded counterexample fails to verify decides nothing: ``open``, never ``holds``."""
    s = next(x for x in STATEMENTS if x.id == sid)
    r = s.check("quick", **kwargs)
    assert r.verdict == "open", (sid, r.verdict, r.evidence)
    assert "does not verify" in r.evidence and "remains undecided" in r.evidence, r.evidence


# ------------------------------------------------------------------------------------------------ labelling rule
def test_one_label_per_kind_of_flaw():
    """The same kind of finding gets the same verdict everywhere (docs/registry.rst): a statement that fails only
    where the cast jumps is ``holds-as-corrected`` (000 Theorems 1, 2 and the unit-interval reading alike), a
    misquoted number ``falsified`` (000 Table 4's Mamba average and 003 App. E.1's best reported score alike); the
    docs page states the rule and names every entry it labels; the registry refuses a mislabelled entry."""
    import os
    from lrnnkit.theorems.registry import FLAW_VERDICT, Statement
    kinds: dict = {}
    for s in STATEMENTS:
        if s.flaw:
            assert s.verdict == FLAW_VERDICT[s.flaw], s.id
            kinds.setdefault(s.flaw, set()).add(s.id)
    assert {"000:theorem-1", "000:theorem-2", "000:proposition-1.unit-interval-reading"} <= kinds["rounding-boundary"]
    assert {"000:table-4.mamba-average", "003:appendix-E.1.best-reported"} <= kinds["misquoted-number"]
    page = open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "registry.rst"), encoding="utf-8").read()
    for kind, verdict in FLAW_VERDICT.items():
        assert f"``{kind}``" in page and f"``{verdict}``" in page, kind
    for ids in kinds.values():
        for sid in ids:
            assert f"``{sid}``" in page, sid
    with pytest.raises(ValueError, match="rounding-boundary"):
        Statement(id="x:y", paper="x", kind="claim", statement="s", hypotheses="", conclusion="", verdict="falsified",
                  evidence="e", counterexample={"x": 1}, flaw="rounding-boundary")


# ------------------------------------------------------------------------------------------ coverage of the tables
def test_the_docs_name_only_entries_that_exist_and_cover_every_paper():
    """docs/registry.rst (the labelling rule, the coverage of the papers' tables) names registry entries: every id
    it names exists (a pattern PAPER:empirical-NAME-* names an experiment that has entries), and its coverage table
    has a row per paper."""
    import os
    import re
    page = open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "registry.rst"), encoding="utf-8").read()
    ids = {s.id for s in STATEMENTS}
    named = re.findall(r"``(\d{3}:[A-Za-z0-9.\-*]+)``", page)
    assert len(named) > 30
    for n in named:
        if n.endswith("*"):
            assert any(i.startswith(n[:-1]) for i in ids), n
        else:
            assert n in ids, n
    for p in ("000", "001", "002", "003", "004"):
        assert f"   * - {p}\n" in page, p


def test_training_claims_without_runs_are_open_empirical_entries():
    """The papers' numbers that only training decides are registered as ``empirical`` entries, ``open``, with no
    check, and say what a run would need; the arithmetic of the printed tables is checked exactly."""
    want = ["001:section-5.1.deltanet-five-layers", "002:table-2.baselines", "003:table-1.bedouin",
            "003:table-2.copying", "004:table-1", "004:table-2", "004:table-3"]
    for sid in want:
        s = next(x for x in STATEMENTS if x.id == sid)
        assert s.kind == "empirical" and s.verdict == "open" and s.check is None, sid
        assert "Needs training" in s.evidence and "remains open" in s.evidence.lower(), sid
    decided = {"000:table-3.negative-eigenvalues-help": "holds", "000:table-5.median-mad": "falsified",
               "001:table-1.avg-column": "holds", "001:table-2.avg-column": "holds",
               "001:table-2.improvements": "holds", "001:table-2.baselines-from-000": "falsified",
               "002:table-2.only-extrapolating-lrnn": "holds"}
    for sid, v in decided.items():
        s = next(x for x in STATEMENTS if x.id == sid)
        assert s.verdict == v and s.perturb is not None, sid
