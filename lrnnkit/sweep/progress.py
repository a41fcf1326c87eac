"""The progress bar of a sweep: points done / failed / running and an ETA, on stderr.

tqdm draws it when installed (it is in the ``ray`` extra); without tqdm a plain line is printed every few seconds.
Off by default when stderr is not a terminal (``progress=True`` forces it on).
"""
from __future__ import annotations

import sys
import time

__all__ = ["Progress"]


class Progress:
    def __init__(self, total: int, already: int = 0, enabled: bool | None = None, desc: str = "sweep"):
        self.total, self.done, self.failed, self.running = total, already, 0, 0
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._bar = None
        self._t0 = time.monotonic()
        self._computed = 0
        self._last = 0.0
        if self.enabled:
            try:
                from tqdm import tqdm
                self._bar = tqdm(total=total, initial=already, desc=desc, unit="pt", file=sys.stderr,
                                 dynamic_ncols=True, smoothing=0.1)
            except ImportError:
                self._bar = None

    def _postfix(self) -> str:
        return f"done {self.done} failed {self.failed} running {self.running}"

    def update(self, status: str | None = None, running: int = 0) -> None:
        """One point finished (``status`` ok/failed), or only the running count changed (``status=None``)."""
        self.running = running
        if status is not None:
            self._computed += 1
            if status == "ok":
                self.done += 1
            else:
                self.failed += 1
        if not self.enabled:
            return
        if self._bar is not None:
            if status is not None:
                self._bar.update(1)
            self._bar.set_postfix_str(self._postfix(), refresh=status is not None)
            return
        now = time.monotonic()
        if now - self._last >= 2.0 or self.done + self.failed == self.total:
            self._last = now
            rate = self._computed / max(now - self._t0, 1e-9)
            left = self.total - self.done - self.failed
            eta = f"{left / rate:.0f} s" if rate > 0 else "?"
            print(f"sweep: {self.done + self.failed}/{self.total} ({self._postfix()}), ETA {eta}", file=sys.stderr)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
