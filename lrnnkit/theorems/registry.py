"""The statement registry: every formal statement of the five papers as an executable check with a verdict.

Each :class:`Statement` records the statement *as printed*, its hypotheses and conclusion, the verdict recorded in
the registry (see ``VERDICTS``) with its evidence, and a ``check`` that
re-derives the verdict: ``check(profile)`` returns a :class:`CheckResult`. The test suite (proofs_tests/) runs every
check and fails if the verdict it derives differs from the recorded one, so a recorded verdict is always
reproducible by one command: ``lrnnkit theorems --check ID``.

A paper's entry is declared once, on its check: ``@entry("000:theorem-2", perturb={...})``; its words (the statement
as printed, hypotheses, conclusion, recorded verdict, evidence, counterexample, correction, notes) live in the paper
package's ``statements.json`` and the code holds only the mathematics.

Verdicts:

* ``holds``: the check searched for counterexamples (property search with shrinking, exhaustive search over a
  finite space, or the certifier) and found none; the evidence says what was covered.
* ``falsified``: the check found a counterexample to the statement as printed; ``counterexample`` is minimal (after
  shrinking) and checkable by hand.
* ``holds-as-corrected``: falsified as printed, and a corrected statement (recorded in ``corrected``) passes the
  same check.
* ``holds-with-wording-slip``: the literal wording is false only through an evident slip (a bound stated with the
  wrong count, a symbol for its neighbour) while the mathematics it serves holds; ``corrected`` gives the intended
  wording, the check confirms both the slip (a counterexample to the literal words) and the intended statement.
  Used where ``holds-as-corrected`` would suggest a false step that the argument does not need.
* ``open``: no decisive check yet (the evidence says why).

One label per kind of flaw (``FLAW_VERDICT``, docs/registry.rst): an entry that names its kind in ``flaw`` must
carry that kind's verdict.

Every check takes its input as keyword arguments whose defaults are the statement as printed; ``perturb`` names
the arguments of a nearby false statement, and the test suite runs each check on it too (a check that cannot fail
would pass its perturbation).

Profiles: ``quick`` (inside ``make test``) and ``deep`` (many more examples; ``pytest -m slow``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..errors import InputError
from . import __path__ as p
from ._exact import DETECT_ONLY

__all__ = ["Statement", "CheckResult", "statement", "entry", "statement_texts", "register", "get", "all_statements", "paper_statements",
           "run_check", "perturbation_flips", "empirical_claim", "set_judge_source", "judge_source", "VERDICTS",
           "FLAW_VERDICT", "OWN"]

VERDICTS = ("holds", "falsified", "holds-as-corrected", "holds-with-wording-slip", "open")
#: the labelling rule: one verdict per kind of flaw (docs/registry.rst). An entry names its kind in ``flaw``:
#: ``rounding-boundary``: false as printed only through a counterexample whose exact states converge to a point
#: where the cast jumps (a midpoint, for round-to-nearest), the statement certified for monotone casts or casts
#: continuous at the limit points; ``misquoted-number``: a number in the text that its source (a table) does not
#: give, the source's number as the counterexample (the number is the claim, so no corrected statement);
#: ``wording-slip``: a wrong word, index, count or citation while the mathematics the sentence serves holds as
#: written elsewhere in the paper; ``false-step``: a false statement or proof step whose corrected form (a
#: hypothesis added, a constant or formula changed) is certified.
FLAW_VERDICT = {"rounding-boundary": "holds-as-corrected", "misquoted-number": "falsified",
                "wording-slip": "holds-with-wording-slip", "false-step": "holds-as-corrected"}
#: verdicts that record a counterexample to the literal statement and a corrected (intended) one
CORRECTED_VERDICTS = ("holds-as-corrected", "holds-with-wording-slip")
#: the ``paper`` of lrnnkit's own claims (its measurements and questions): kept apart from the five papers' tallies
OWN = "lrnnkit"
PROFILES = ("quick", "deep")
_REGISTRY: dict = {}
_LOADED = False


@dataclass
class CheckResult:
    verdict: str
    evidence: str                      # what was covered / how decided
    counterexample: object = None      # minimal counterexample to the printed statement (JSON-able)
    corrected: str | None = None       # the corrected statement, for holds-as-corrected
    details: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"bad verdict {self.verdict!r}")


@dataclass
class Statement:
    id: str                            # "000:theorem-2", "000:proposition-1.3", "001:lemma-1"
    paper: str                         # "000".."004", or OWN for lrnnkit's own claims
    kind: str                          # theorem / proposition / lemma / corollary / construction / claim
    statement: str                     # as printed (reconstructed where the extraction garbled it: say so)
    hypotheses: str
    conclusion: str
    verdict: str                       # the recorded verdict
    evidence: str                      # the recorded evidence summary
    check: Callable | None = None      # check(profile: str) -> CheckResult
    counterexample: object = None
    corrected: str | None = None
    tests: list = field(default_factory=list)   # pytest node ids that exercise it beyond the check
    notes: str = ""
    perturb: dict | None = None        # keyword arguments of ``check`` that perturb its input (see run_check)
    flaw: str = ""                     # the kind of flaw found, one of FLAW_VERDICT (its verdict follows from it)

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"{self.id}: bad verdict {self.verdict!r}")
        if (self.verdict == "falsified" or self.verdict in CORRECTED_VERDICTS) and self.counterexample is None:
            raise ValueError(f"{self.id}: a {self.verdict} verdict needs a counterexample")
        if self.verdict in CORRECTED_VERDICTS and not self.corrected:
            raise ValueError(f"{self.id}: {self.verdict} needs the corrected statement")
        if self.flaw and FLAW_VERDICT.get(self.flaw) != self.verdict:
            raise ValueError(f"{self.id}: a {self.flaw!r} flaw is labelled {FLAW_VERDICT.get(self.flaw)!r}, "
                             f"not {self.verdict!r} (docs/registry.rst)")

    @property
    def reproduce(self) -> str:
        """The one command that re-derives this entry's verdict (printed by ``lrnnkit theorems``)."""
        return f"lrnnkit theorems --check {self.id}"

    def to_json(self) -> dict:
        return {"id": self.id, "paper": self.paper, "kind": self.kind, "statement": self.statement,
                "hypotheses": self.hypotheses, "conclusion": self.conclusion, "verdict": self.verdict,
                "evidence": self.evidence, "counterexample": self.counterexample, "corrected": self.corrected,
                "tests": self.tests, "notes": self.notes, "flaw": self.flaw, "reproduce": self.reproduce}


def register(s: Statement) -> Statement:
    if s.id in _REGISTRY:
        raise ValueError(f"statement {s.id} registered twice")
    _REGISTRY[s.id] = s
    return s


def statement(**kw) -> Callable:
    """Decorator form: ``@statement(id=..., ...)`` on the check function registers the statement with every field
    given in code (for statements that are not a paper's, e.g. built from a results file)."""
    def deco(fn: Callable) -> Callable:
        register(Statement(check=fn, **kw))
        return fn
    return deco


_TEXTS: dict = {}


def statement_texts(paper: str) -> dict:
    """The words of paper ``paper``'s entries: ``paper_NNN/statements.json`` beside this module, one record per id
    (kind, statement as printed, hypotheses, conclusion, recorded verdict, evidence, counterexample, corrected,
    tests, notes), read once."""
    if paper not in _TEXTS:
        import json
        import os
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"paper_{paper}", "statements.json")
        with open(path, encoding="utf-8") as fh:
            _TEXTS[paper] = json.load(fh)
    return _TEXTS[paper]


def entry(sid: str, perturb: dict | None = None) -> Callable:
    """The one way a paper's statement is declared: ``@entry("000:theorem-2", perturb={...})`` on its check.

    The check function is the entry's mathematics (its keyword arguments default to the statement as printed);
    ``perturb`` names the arguments of a nearby false statement (see :func:`run_check`); the paper's words and the
    recorded verdict come from the paper's ``statements.json`` (:func:`statement_texts`)."""
    def deco(fn: Callable) -> Callable:
        paper = sid.split(":", 1)[0]
        register(Statement(id=sid, paper=paper, check=fn, perturb=perturb, **statement_texts(paper)[sid]))
        return fn
    return deco


#: where the learning experiments' judges come from: a callable returning {experiment name: experiment}, set by
#: the root package (lrnnkit/__init__.py), since this package and lrnnkit.learn are siblings
_JUDGE_SOURCE: list = []


def set_judge_source(source: Callable) -> None:
    """Name the callable that returns the experiments whose judges the empirical entries apply
    (:func:`lrnnkit.theorems.empirical.judge_of`); called once, by the root package."""
    _JUDGE_SOURCE[:] = [source]


def judge_source() -> Callable | None:
    return _JUDGE_SOURCE[0] if _JUDGE_SOURCE else None


def empirical_claim(sid: str) -> Statement:
    """Register a paper's number or claim that only training can decide (kind ``empirical``, verdict ``open``, no
    check): its words live in the paper's ``statements.json`` like every entry's, the evidence saying what a run
    would need. Entries made from stored runs are :mod:`.empirical`'s."""
    paper = sid.split(":", 1)[0]
    s = Statement(id=sid, paper=paper, check=None, **statement_texts(paper)[sid])
    if s.kind != "empirical" or s.verdict != "open":
        raise ValueError(f"{sid}: an empirical claim without runs is kind 'empirical', verdict 'open'")
    return register(s)


def _load_all() -> None:
    global _LOADED
    if not _LOADED:
        _LOADED = True
        import importlib
        import pkgutil
        # one subpackage per paper (paper_000/ .. paper_004/, one module per statement group), plus the
        # ``empirical`` module (entries of kind ``empirical``) when it is present
        for m in sorted(x.name for x in pkgutil.iter_modules(p)):
            if m.startswith("paper_") or m == "empirical":
                importlib.import_module(f"{__package__}.{m}")


def all_statements() -> list:
    _load_all()
    return sorted(_REGISTRY.values(), key=lambda s: (s.paper, s.id))


def paper_statements() -> list:
    """The five papers' statements only (lrnnkit's own claims, ``paper == OWN``, excluded): what tallies count."""
    return [s for s in all_statements() if s.paper != OWN]


def get(sid: str) -> Statement:
    _load_all()
    if sid not in _REGISTRY:
        raise InputError(f"unknown statement id {sid!r}; see `lrnnkit theorems`")
    return _REGISTRY[sid]


def perturbation_flips(recorded: str, derived: str) -> bool:
    """Whether a perturbation's derived verdict flips the recorded one, as a check with teeth must: a statement
    that holds (or holds as corrected, or with a wording slip) becomes ``falsified``; a ``falsified`` one (whose
    perturbation breaks the recorded counterexample) becomes anything else."""
    return derived != "falsified" if recorded == "falsified" else derived == "falsified"


def run_check(sid: str, profile: str = "quick", perturbed: bool = False) -> CheckResult:
    """Run the check of ``sid``. With ``perturbed``, run it on the entry's declared perturbation (``perturb``: a
    nearby statement that is false, e.g. a hypothesis dropped, a constant moved, a recorded instance altered): a check
    with teeth then derives ``falsified`` (for a ``falsified`` entry, whose perturbation breaks the counterexample,
    any other verdict)."""
    if profile not in PROFILES:
        raise InputError(f"unknown profile {profile!r} (quick or deep)")
    s = get(sid)
    if s.check is None:
        return CheckResult("open", "no executable check registered")
    if perturbed:
        if s.perturb is None:
            raise InputError(f"{sid} declares no perturbation")
        token = DETECT_ONLY.set(True)
        try:
            return s.check(profile, **s.perturb)
        finally:
            DETECT_ONLY.reset(token)
    return s.check(profile)
