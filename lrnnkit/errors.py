"""Error types.

Every error caused by bad user input is an :class:`InputError`: the command line prints its message on one line
and exits with status 2 (no traceback unless ``--debug``). Messages name the problem *and* the offending input.

The command line's exit statuses are one convention across its verbs (:data:`EXIT_STATUSES`; docs/cli.rst).
"""
import re


#: the most characters of a message that quotes a user's input (the input may be huge; one line stays readable)
MESSAGE_CHARS = 200

OVERRIDABLE: set = set()      # the limits an LRNNKIT_LIMIT_<NAME> variable moves (filled by lrnnkit.limits)

EXIT_OK = 0          # success (for a verb that answers a question: the answer is yes)
EXIT_NEGATIVE = 1    # a negative answer: not certified, a falsified or disagreeing check, a failed sweep point
EXIT_INPUT = 2       # bad input: one line on stderr naming the problem and the input
EXIT_INTERNAL = 3    # an internal error (a bug in lrnnkit): one line, the traceback with --debug
#: every exit status of ``lrnnkit``, with its meaning (130 / 143 / 129: stopped by SIGINT / SIGTERM / SIGHUP; 141:
#: the reader closed the pipe)
EXIT_STATUSES = {EXIT_OK: "success", EXIT_NEGATIVE: "a negative answer", EXIT_INPUT: "bad input",
                 EXIT_INTERNAL: "internal error", 130: "interrupted (SIGINT)", 143: "terminated (SIGTERM)",
                 129: "hung up (SIGHUP)", 141: "the reader closed the pipe"}


class LrnnkitError(Exception):
    """Base class of lrnnkit's own errors."""


class InputError(LrnnkitError, ValueError):
    """Bad input from a user: malformed file, unknown symbol, unknown preset, a size past a cap, ..."""


class SizeLimitError(InputError):
    """An input whose exact treatment would exceed a documented cap; the message gives the numbers and, for a cap of
    :mod:`lrnnkit.limits` it names (``lrnnkit.limits.MAX_STATES``), the environment variable that lifts it."""

    def __str__(self) -> str:
        text = super().__str__()
        m = re.search(r"lrnnkit\.limits\.([A-Z][A-Z0-9_]*)", text)
        if m is None or "LRNNKIT_LIMIT_" in text or m.group(1) not in OVERRIDABLE:
            return text
        return f"{text}; LRNNKIT_LIMIT_{m.group(1)}=N lifts it"


class OutOfMemory(InputError, MemoryError):
    """A legal size whose memory this machine (CPU or GPU) cannot give: the message names the size asked for and
    the settings to lower. An InputError (one line, exit 2) and a MemoryError (a sweep records the point ``oom``)."""


class Interrupted(KeyboardInterrupt):
    """A run ended by a signal (SIGINT, SIGTERM, SIGHUP) after saving what it had (:mod:`lrnnkit.signals`):
    ``signum``, ``exit_status`` = 128 + signum (130, 143, 129: the command line's exit status), and ``message``,
    one line saying what was saved (empty when the run already said it)."""

    def __init__(self, signum: int, message: str = ""):
        super().__init__(message)
        self.signum, self.exit_status, self.message = int(signum), 128 + int(signum), message


class CertificationError(LrnnkitError):
    """A model failed certification (raised only where the caller asked for an exception)."""
