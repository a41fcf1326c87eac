"""Step machinery shared by the showcase's demo and docgen: a time limit for one step, and one-line reasons.

A showcase step (compile, certify, a plot, a precision run) must not hang the whole run: :func:`time_limit` raises
:class:`StepTimeout` after a number of seconds, and :func:`one_line` turns any exception into the one-line reason
the report and the generated pages print.
"""
from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager

__all__ = ["StepTimeout", "time_limit", "one_line"]


class StepTimeout(Exception):
    """A step ran past its budget (``seconds``)."""

    def __init__(self, seconds: float):
        super().__init__(f"timed out after {seconds:g} s")
        self.seconds = seconds


@contextmanager
def time_limit(seconds: float | None):
    """Raise StepTimeout in the main thread after ``seconds`` (SIGALRM; a no-op elsewhere, e.g. on Windows or in a
    worker thread, and for ``seconds`` None or 0). Nests: an inner limit never outlives an enclosing one, and the
    enclosing timer resumes after."""
    usable = (seconds and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread())
    if not usable:
        yield
        return
    outer_left = signal.getitimer(signal.ITIMER_REAL)[0]
    limit = min(seconds, outer_left) if outer_left > 0 else seconds
    own = limit == seconds

    def handler(signum, frame):
        raise StepTimeout(seconds)

    old = signal.signal(signal.SIGALRM, handler if own else _enclosing_handler(signal.getsignal(signal.SIGALRM)))
    t0 = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        if outer_left > 0:
            signal.setitimer(signal.ITIMER_REAL, max(outer_left - (time.monotonic() - t0), 1e-3))


def _enclosing_handler(h):
    """The handler to use when the enclosing limit expires first: the enclosing one."""
    return h if callable(h) else signal.SIG_DFL


def one_line(exc: BaseException) -> str:
    """``"TypeName: first line of the message"`` (just the type name when the message is empty)."""
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    name = type(exc).__name__
    return f"{name}: {msg}" if msg else name
