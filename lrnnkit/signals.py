"""Signals that end a run: SIGINT (Ctrl-C), SIGTERM (``kill``, ``timeout``, a batch system's end of job) and SIGHUP
(a closed terminal). Each ends a run as :class:`~lrnnkit.errors.Interrupted` -- a ``KeyboardInterrupt`` carrying
the signal -- after what the run had is saved, and the command line exits with 128 + the signal's number (130,
143, 129) and one line saying what was saved. A signal the process was started with ignored (``nohup`` ignores
SIGHUP) stays ignored.

:func:`stopping` turns these signals into that exception for a block (at once, where the program is);
:func:`deferred` holds them while a block that must not be cut short runs (a checkpoint's writes) and delivers
them when it ends, so a second Ctrl-C during a save no longer loses the save or leaves half of it behind.
Both act only in the main thread (Python runs signal handlers there).
"""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

from .errors import Interrupted

__all__ = ["STOP_SIGNALS", "signal_name", "stopping", "deferred"]

STOP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _install(handler) -> dict:
    old = {}
    if threading.current_thread() is threading.main_thread():
        for sig in STOP_SIGNALS:
            if signal.getsignal(sig) is not signal.SIG_IGN:
                old[sig] = signal.signal(sig, handler)
    return old


def _restore(old: dict) -> None:
    for sig, h in old.items():
        signal.signal(sig, h)


@contextmanager
def stopping(message: str = ""):
    """While the block runs, SIGINT, SIGTERM and SIGHUP raise :class:`Interrupted` (``message``: what was saved,
    ``{signal}`` in it replaced by the signal's name; empty for the caller to say)."""
    def handler(signum, frame):
        raise Interrupted(signum, message.replace("{signal}", signal_name(signum)))
    old = _install(handler)
    try:
        yield
    finally:
        _restore(old)


@contextmanager
def deferred():
    """Hold SIGINT, SIGTERM and SIGHUP until the block ends, then deliver the first one held to the handler that
    was in place before (``signal.raise_signal``)."""
    held: list = []

    def handler(signum, frame):
        held.append(signum)
    old = _install(handler)
    try:
        yield
    finally:
        _restore(old)
        if held:
            signal.raise_signal(held[0])
