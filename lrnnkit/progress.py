"""Progress of long work, one mechanism for every verb: a tqdm bar on a terminal, a plain status line every few
seconds otherwise (a log, a CI job, ``2> file``), nothing for work that ends quickly.

:class:`Progress` counts (``update``, ``n``, ``set_postfix``) and decides how to show it: on a terminal (stderr is
a tty) a tqdm bar that appears after ``delay`` seconds and is removed when done; elsewhere one line
``"<desc>: <n>/<total> <unit> (<postfix>), <elapsed> s"`` on stderr every ``interval`` seconds, the first after
``interval`` seconds (so work shorter than that prints nothing) and, for work with a known total that printed a
line (or with ``final=True``), one when the last item is done. :func:`busy` is the same for a step whose own
loop reports nothing (elapsed time only). Ctrl-C still stops the work: nothing here catches KeyboardInterrupt.
"""
from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager

__all__ = ["Progress", "busy", "STATUS_INTERVAL"]

STATUS_INTERVAL = 10.0      # seconds between status lines when stderr is not a terminal


def _terminal() -> bool:
    return bool(getattr(sys.stderr, "isatty", None) and sys.stderr.isatty())


class Progress:
    """``Progress(desc, total=None, unit="", initial=0, delay=2.0, interval=STATUS_INTERVAL, enabled=True,
    final=False)``; use
    ``update(k)`` (``k`` more done), ``n`` (done so far), ``set_postfix(text)``, ``close()`` (or ``with``)."""

    def __init__(self, desc: str, total: int | None = None, unit: str = "", *, initial: int = 0,
                 delay: float = 2.0, interval: float = STATUS_INTERVAL, enabled: bool = True, final: bool = False):
        self.desc, self.total, self.unit, self.n = desc, total, unit, initial
        self._final, self._printed = final, False
        self.interval, self.postfix = interval, ""
        self._t0 = self._last = time.monotonic()
        self._bar = None
        self._lines = enabled and not _terminal()
        if enabled and not self._lines:
            from tqdm import tqdm
            self._bar = tqdm(total=total, initial=initial, desc=desc, unit=f" {unit}" if unit else "it",
                             delay=delay, leave=False, mininterval=0.5, file=sys.stderr, dynamic_ncols=True)

    def update(self, k: int = 1) -> None:
        self.n += k
        if self._bar is not None:
            self._bar.update(k)
        elif self._lines:
            self._status(force=bool(self.total) and self.n >= self.total and (self._final or self._printed))

    def set_postfix(self, text: str) -> None:
        self.postfix = text
        if self._bar is not None:
            self._bar.set_postfix_str(text, refresh=False)
        elif self._lines:
            self._status()

    def line(self) -> str:
        """The status line as it would print now."""
        el = time.monotonic() - self._t0
        done = f"{self.n:,}" + (f"/{self.total:,}" if self.total else "") + (f" {self.unit}" if self.unit else "")
        return f"{self.desc}: {done}" + (f" ({self.postfix})" if self.postfix else "") + f", {el:.0f} s"

    def _status(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._last >= self.interval:
            self._last, self._printed = now, True
            print(self.line(), file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        self._lines = False

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@contextmanager
def busy(desc: str, after: float = 2.0, interval: float = STATUS_INTERVAL):
    """Show ``"<desc>: <elapsed>"`` while a step runs whose own loops report nothing (``info``'s monoid and
    holonomy, ``compile``): on a terminal from ``after`` seconds on (removed when done), elsewhere a status line
    every ``interval`` seconds. A daemon thread only draws; Ctrl-C raises KeyboardInterrupt in the main thread."""
    stop = threading.Event()
    terminal = _terminal()
    t0 = time.monotonic()

    def tick():
        if terminal:
            if stop.wait(after):
                return
            from tqdm import tqdm
            bar = tqdm(total=None, desc=desc, bar_format="{desc}: {elapsed}", leave=False, file=sys.stderr)
            try:
                while not stop.wait(0.5):
                    bar.refresh()
            finally:
                bar.close()
        else:
            while not stop.wait(interval):
                print(f"{desc}: {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)

    th = threading.Thread(target=tick, daemon=True)
    th.start()
    try:
        yield
    finally:
        stop.set()
        th.join(timeout=1.0)
