"""``lrnnkit extract CHECKPOINT`` (docs/cli.rst, docs/interop.rst); hooked into :mod:`lrnnkit.cli`."""
from __future__ import annotations

import json
import os
from ..automata.bridges import FORMATS, save
from .convert import add_complete_flags, complete_of
from ..automata.sources import load_source
from .. import limits
from ..errors import InputError
from ..limits import check_int
from ._common import device_arg, seed_arg
from ..learn.extract import EQ_ORACLES, extract_checkpoint

ORDER = 130

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    s = sub.add_parser("extract", help="the automaton a trained model implements (L*), compared with its target")
    s.add_argument("checkpoint", help="a `lrnnkit train --out` directory or its checkpoint.json, or a compiled "
                   "model JSON")
    s.add_argument("--target", help="automaton to compare with (any SOURCE; default: the checkpoint's task, or the "
                   "automaton recorded in the model)")
    add_complete_flags(s)
    s.add_argument("--eq-oracle", choices=EQ_ORACLES, default="target",
                   help="L*'s equivalence oracle: target (lrnnkit's exact product search against the target, then "
                   "random words; default), random-walk or w-method (AALpy's)")
    s.add_argument("--max-states", type=int, default=None, help="stop L* once a hypothesis has more states "
                   "(default: 4 x the target's minimal states)")
    s.add_argument("--max-rounds", type=int, default=None, help="at most this many L* rounds (default: no bound)")
    s.add_argument("--random-steps", type=int, default=500, help="letters of the random search (default 500)")
    s.add_argument("--seed", type=seed_arg, default=0, help="seed of the random search (default 0)")
    s.add_argument("--max-words", type=int, default=2 ** 16, help="words the exhaustive model-vs-target check may "
                   "run (all words of length 1, 2, ... while they fit; default 65536)")
    s.add_argument("--max-length", type=int, default=64, help="longest words of the exhaustive check (default 64)")
    s.add_argument("-o", "--output", help="write the extracted automaton here (format: --to, else from the "
                   "extension: .dot/.gv DOT, otherwise lrnnkit JSON)")
    s.add_argument("--to", choices=FORMATS, default=None, dest="fmt", help="format of -o")
    s.add_argument("--dot", metavar="FILE", help="also write the extracted automaton as Graphviz DOT")
    s.add_argument("--device", type=device_arg, default="cpu", help="cpu (default), cuda or cuda:N")
    s.add_argument("--json", action="store_true", help="print machine-readable JSON instead of text")


def run(a) -> int:
    for flag, v, hi in (("--max-words", a.max_words, 2 ** 24), ("--max-length", a.max_length, 10_000),
                        ("--random-steps", a.random_steps, 10 ** 7)):
        check_int(flag, v, 1 if flag != "--random-steps" else 0, hi)
    if a.max_states is not None:
        check_int("--max-states", a.max_states, 1, limits.MAX_STATES, "MAX_STATES")
    if a.max_rounds is not None:
        check_int("--max-rounds", a.max_rounds, 1, 10_000)
    if a.output and a.dot and os.path.realpath(a.output) == os.path.realpath(a.dot):
        raise InputError(f"-o and --dot name the same file {a.output!r}: the second write would replace the first, "
                         "and both would be reported written; give two paths")
    complete = complete_of(a)
    target = load_source(a.target, complete=complete) if a.target else None
    ext = extract_checkpoint(a.checkpoint, target, eq_oracle=a.eq_oracle, max_rounds=a.max_rounds,
                             max_states=a.max_states, random_steps=a.random_steps, seed=a.seed,
                             max_words=a.max_words, max_length=a.max_length, device=a.device)
    written = {}
    if a.output:
        written[a.output] = save(ext.automaton, a.output, a.fmt)
    if a.dot:
        written[a.dot] = save(ext.automaton, a.dot, "dot")
    c = ext.comparison
    if a.json:
        print(json.dumps({**ext.to_json(), "written": written}, indent=2))
        return 0
    t = ext.target
    print(f"extracted automaton: {ext.automaton.n_states} states; target {t.name or a.target or 'automaton'}: "
          f"{t.n_states} states (minimal); isomorphic: {'yes' if ext.isomorphic else 'no'}")
    st = ext.stats
    stop = (f", stopped once a hypothesis had more than {st['stopped_at_state_bound']} states (--max-states)"
            if "stopped_at_state_bound" in st else "")
    rounds = f"{st['rounds']} round{'' if st['rounds'] == 1 else 's'}"
    print(f"  L*: {rounds}, {st['membership_queries']} membership queries, equivalence oracle {ext.eq_oracle}{stop}")
    if ext.distinguishing_word is not None:
        w = " ".join(ext.distinguishing_symbols) or "(empty word)"
        print(f"  extracted vs target (every length): shortest difference {w!r}; the model outputs "
              f"{ext.model_output!r}, the target {ext.target_output!r}")
    print(f"  model vs target: {c.statement()}")
    for path, fmt in written.items():
        print(f"  wrote {path} ({fmt})")
    return 0


VERBS = {"extract": run}
