"""Size limits on every input, in one place: every input is bounded.

Each limit is checked *before* the work it protects starts, and a refusal is a
:class:`~lrnnkit.errors.SizeLimitError` (an InputError: one line, exit status 2 at the command line) whose message
gives the offending size, the limit and the constant's name, e.g.::

    lrnnkit: error: info: 'counter:100000' has 100000 states x 1 letters = 100000 transitions; info analyses
    automata of at most 2000 states and 100000 transitions (lrnnkit.limits.INFO_MAX_STATES / INFO_MAX_TRANSITIONS)

The numbers are chosen so that allowed work ends within about a minute on one CPU core (the measurements behind
them: benchmarks/RESULTS.md, section "limits"). Caps that live inside an algorithm (the transition monoid, holonomy, Krohn-Rhodes, the certifier's
``--max-pairs``) are listed in the docs page "Limits and errors" (docs/limits.rst) next to these.
"""
from __future__ import annotations

import os
from typing import Any

from .errors import MESSAGE_CHARS, OVERRIDABLE, InputError, SizeLimitError
from .fileio import read_regular

__all__ = ["MAX_FILE_BYTES", "MAX_MODEL_BYTES", "MAX_STATES", "MAX_LETTERS", "MAX_TRANSITIONS", "INFO_MAX_STATES",
           "INFO_MAX_TRANSITIONS", "COMPILE_MAX_STATES", "COMPILE_MAX_TRANSITIONS", "MAX_PAIRS_LIMIT",
           "RUN_MAX_LENGTH", "MAX_SEED", "MAX_NUMBER_CHARS", "MAX_NAME_CHARS", "MAX_DECIMAL_EXPONENT",
           "MAX_CAST_VALUES",
           "COLLAPSE_MAX_STEPS", "MAX_REGEX_CHARS", "MAX_REGEX_SIZE", "MAX_ARRAYS_BYTES", "MAX_SPEC_BYTES",
           "EXPORT_MAX_TOKEN_VALUES", "FLOAT_CHECK_MAX_STEPS", "SWEEP_MAX_CPUS", "MAX_CYCLOTOMIC_ORDER",
           "TRAIN_MAX_WIDTH", "TRAIN_MAX_HEADS",
           "TRAIN_MAX_HEAD_DIM", "TRAIN_MAX_N_H", "TRAIN_MAX_FP_ITERS", "TRAIN_MAX_LAYERS", "TRAIN_MAX_PARAMETERS",
           "TRAIN_MAX_STEPS",
           "TRAIN_MAX_BATCH", "TRAIN_MAX_LENGTH", "TRAIN_MAX_BATCH_TOKENS", "TRAIN_MAX_TEST_LENGTHS",
           "TRAIN_MAX_EVAL_WORDS", "TRAIN_MAX_EVAL_TOKENS", "CHECKPOINT_MAX_JSON_BYTES", "CHECKPOINT_MAX_BYTES",
           "TRAIN_MAX_SET_BYTES",
           "read_bounded", "shorten", "json_int", "check_name",
           "check_automaton", "check_int", "check_number_text"]

# ---------------------------------------------------------------- files
MAX_FILE_BYTES = 64 * 2 ** 20       # an FSA JSON file (64 MiB: ~10^7 transitions written out)
MAX_MODEL_BYTES = 256 * 2 ** 20     # a model JSON file (large float arrays go to a safetensors file beside it)
MAX_ARRAYS_BYTES = 2 ** 30          # the tensors a model (or an fla export) uses from its safetensors file
MAX_SPEC_BYTES = 2 ** 20            # a sweep spec (TOML)

# ---------------------------------------------------------------- automata, whatever their source
MAX_STATES = 100_000                # states of an automaton from a file or a preset
MAX_LETTERS = 10_000                # letters of its alphabet
MAX_TRANSITIONS = 2_000_000         # states x letters (group:D500, the largest group preset, has 10^6)
MAX_REGEX_CHARS = 1_000             # characters of a regex: pattern
MAX_REGEX_SIZE = 300                # positions of a regex once counted repetition is written out (a{300}: 300)

# ---------------------------------------------------------------- per verb (checked on the automaton, before the work)
INFO_MAX_STATES = 2_000             # info: monoid, group structure, holonomy of the automaton
INFO_MAX_TRANSITIONS = 100_000
COMPILE_MAX_STATES = 2_000          # compile: constructions + their exact bookkeeping
COMPILE_MAX_TRANSITIONS = 600_000   # (group:S6, 720 x 720 = 518400, compiles; RESULTS.md "limits")
MAX_PAIRS_LIMIT = 50_000_000        # verify --max-pairs: reachable pairs of the exact search (each kept in memory)
RUN_MAX_LENGTH = 1_000_000          # run: length of --word / --random N
MAX_SEED = 2 ** 63 - 1              # run --seed: 0 .. MAX_SEED
COLLAPSE_MAX_STEPS = 1_000_000      # precision collapse --steps (S5 in fp32: states rarely repeat)
EXPORT_MAX_TOKEN_VALUES = 2 ** 27   # export --word/--random: entries of one per-token tensor (q or k), 512 MiB fp32
FLOAT_CHECK_MAX_STEPS = 1_000_000   # certify's float64 cross-check: steps per random word (sweep float_steps)
SWEEP_MAX_CPUS = 4_096              # sweep --num-cpus (a local Ray); a spec's num_cpus / num_gpus per task

# ---------------------------------------------------------------- training (train, experiment, sweeps of kind train)
TRAIN_MAX_WIDTH = 8192              # --width (and block_size); the papers use 16 .. 384
TRAIN_MAX_HEADS = 256               # --heads
TRAIN_MAX_HEAD_DIM = 1024           # --head-dim
TRAIN_MAX_N_H = 64                  # --n-h, Householder factors per token (001 uses 1 .. 4)
TRAIN_MAX_LAYERS = 64               # --layers
TRAIN_MAX_FP_ITERS = 1000           # the fixed-point layer's iteration cap in training (003: 16 or 100)
TRAIN_MAX_PARAMETERS = 1_000_000_000  # parameters of the model (counted before any memory is taken: 16 GB with AdamW)
TRAIN_MAX_STEPS = 10_000_000        # --steps (001's longest runs: 2 * 10^5)
TRAIN_MAX_BATCH = 65_536            # --batch (words per step)
TRAIN_MAX_LENGTH = 100_000          # a training or test word length (--train-len B, --test-len)
TRAIN_MAX_BATCH_TOKENS = 2 ** 24    # --batch x the longest training length (tokens of one step)
TRAIN_MAX_TEST_LENGTHS = 100        # how many --test-len values
TRAIN_MAX_EVAL_WORDS = 1_000_000    # words per test length (eval_n; 001's paper scale: 500000)
TRAIN_MAX_EVAL_TOKENS = 2 ** 28     # eval_n x the longest test length (the test words are drawn at once)
TRAIN_MAX_SET_BYTES = 2 ** 32       # a fixed training set (train_words): its tokens and labels, all runs of a process
CHECKPOINT_MAX_JSON_BYTES = 16 * 2 ** 20   # a training checkpoint's JSON
CHECKPOINT_MAX_BYTES = 16 * 2 ** 30        # its tensor file (>= TRAIN_MAX_PARAMETERS x 3 float32: weights, 2 moments)

# ---------------------------------------------------------------- numbers written as text (model files, precision cast)
MAX_NUMBER_CHARS = 1_000            # characters of one exact number ("p/q", decimal, "1e-5")
MAX_NAME_CHARS = 4_096              # characters of a symbol, state name, label or automaton name
MAX_DECIMAL_EXPONENT = 10_000       # |e| in a decimal "...e<e>": 1e10000 is far past every float format (fp64: 1.8e308)
MAX_CAST_VALUES = 10_000            # values given to one precision cast
MAX_CYCLOTOMIC_ORDER = 1_000        # N of Q(zeta_N) for cos(2*pi*k/m) (N = m) and sin (N = 4m) in precision cast


def _name(*names: str) -> str:
    return "lrnnkit.limits." + " / ".join(names)


def shorten(text: Any, width: int = 60) -> str:
    """``repr`` of an input for a message, cut to ``width`` characters (a 100 kB source is not echoed whole)."""
    r = repr(text)
    return r if len(r) <= width else r[:width - 12] + f"... ({len(str(text))} characters)"


def read_bounded(path: str, limit: int, what: str, const: str) -> bytes:
    """Read at most ``limit`` bytes of the regular file ``path``; SizeLimitError past it, InputError for anything
    that is not a regular file (a FIFO, /dev/zero, a directory) before it is opened
    (:func:`lrnnkit.fileio.read_regular`)."""
    return read_regular(path, limit, what, const)


def check_automaton(fsa: Any, verb: str, source: str = "") -> None:
    """Refuse an automaton too large for ``verb`` ("info", "compile"; anything else: the general caps)."""
    n, k = int(fsa.n_states), int(fsa.n_letters)
    caps = {"info": (INFO_MAX_STATES, INFO_MAX_TRANSITIONS, "INFO_MAX_STATES", "INFO_MAX_TRANSITIONS",
                     "analyses"),
            "compile": (COMPILE_MAX_STATES, COMPILE_MAX_TRANSITIONS, "COMPILE_MAX_STATES",
                        "COMPILE_MAX_TRANSITIONS", "compiles")}
    ms, mt, cs, ct, does = caps.get(verb, (MAX_STATES, MAX_TRANSITIONS, "MAX_STATES", "MAX_TRANSITIONS", "takes"))
    if n > ms or n * k > mt or k > MAX_LETTERS:
        what = shorten(source) if source else (shorten(fsa.name) if getattr(fsa, "name", "") else "the automaton")
        raise SizeLimitError(f"{verb}: {what} has {n} states x {k} letters = {n * k} transitions; {verb} {does} "
                             f"automata of at most {ms} states, {mt} transitions and {MAX_LETTERS} letters "
                             f"({_name(cs, ct)})")


def check_int(flag: str, value: Any, lo: int, hi: int | None = None, const: str = "") -> int:
    """``value`` must be an int in [lo, hi]; InputError (SizeLimitError above ``hi``) naming the flag otherwise."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise InputError(f"{flag} must be an integer, got {value!r}")
    if value < lo:
        raise InputError(f"{flag} must be >= {lo}, got {value}")
    if hi is not None and value > hi:
        shown = str(value) if len(str(value)) <= 30 else f"a number of {len(str(value))} digits"
        raise SizeLimitError(f"{flag} must be <= {hi}, got {shown}" + (f" ({_name(const)})" if const else ""))
    return value


def check_number_text(s: str, what: str = "number") -> None:
    """Bound a number written as text before it is parsed: at most MAX_NUMBER_CHARS characters and a decimal
    exponent of at most MAX_DECIMAL_EXPONENT ("1e999999999" would make a 10^9-digit integer)."""
    if len(s) > MAX_NUMBER_CHARS:
        raise SizeLimitError(f"{what} of {len(s)} characters {s[:20]!r}...: at most {MAX_NUMBER_CHARS} "
                             f"({_name('MAX_NUMBER_CHARS')})")
    t = s.strip().lower()
    if "e" in t and not t.startswith(("inf", "+inf", "-inf", "nan", "+nan", "-nan")):
        exp = t.rsplit("e", 1)[1]
        digits = exp.lstrip("+-").lstrip("0")
        if digits.isdigit() and (len(digits) > 6 or int(digits) > MAX_DECIMAL_EXPONENT):
            raise SizeLimitError(f"{what} {s if len(s) <= 40 else s[:37] + '...'!r}: decimal exponent beyond "
                                 f"+-{MAX_DECIMAL_EXPONENT} ({_name('MAX_DECIMAL_EXPONENT')})")


def json_int(text: str) -> int:
    """``json.loads(..., parse_int=json_int)``: an integer literal of at most MAX_NUMBER_CHARS characters (a longer
    one is a SizeLimitError naming its length, not Python's advice on ``sys.set_int_max_str_digits``)."""
    if len(text) > MAX_NUMBER_CHARS:
        raise SizeLimitError(f"an integer literal of {len(text)} digits {text[:12]!r}...: at most {MAX_NUMBER_CHARS} "
                             f"characters ({_name('MAX_NUMBER_CHARS')})")
    return int(text)


def check_name(text, what: str) -> None:
    """A name from an input (a symbol, a state name or label, an automaton's name, a format field) of at most
    MAX_NAME_CHARS characters; a longer one is refused without being echoed whole."""
    if isinstance(text, str) and len(text) > MAX_NAME_CHARS:
        raise SizeLimitError(f"{what} {shorten(text, 40)} is longer than {MAX_NAME_CHARS} characters "
                             f"({_name('MAX_NAME_CHARS')})")


def _env_override(environ=None) -> list:
    """``LRNNKIT_LIMIT_<NAME>=<int>`` raises (or lowers) one limit for a session, e.g. on a large machine. A value
    that is not a non-negative decimal integer of at most 30 digits (``-1``, ``abc``, ``1e9``), or a name that is
    no limit, is refused: the limit keeps its default and one warning line on stderr says why. Returns the
    warnings."""
    import sys
    g = globals()
    said = []
    for key, val in sorted((os.environ if environ is None else environ).items()):
        if not key.startswith("LRNNKIT_LIMIT_"):
            continue
        name = key[14:]
        if not (name in __all__ and isinstance(g.get(name), int)):
            said.append(f"lrnnkit: warning: {key} ignored: lrnnkit.limits has no limit {name!r}"[:MESSAGE_CHARS])
        elif not (val.strip().isascii() and val.strip().isdigit() and len(val.strip()) <= 30):
            said.append(f"lrnnkit: warning: {key}={shorten(val, 30)} ignored: a limit is a non-negative integer; "
                        f"{name} stays {g[name]}")
        else:
            g[name] = int(val.strip())
    for line in said:
        print(line, file=sys.stderr)
    return said


_env_override()
OVERRIDABLE.update(n for n in __all__ if isinstance(globals().get(n), int))
