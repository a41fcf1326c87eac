"""The progress of a sweep: points done / failed / running, on stderr, through :class:`lrnnkit.progress.Progress`
(a tqdm bar on a terminal, a status line every few seconds elsewhere). ``enabled=False`` silences it.
"""
from __future__ import annotations

from ..progress import Progress as _Progress

__all__ = ["Progress"]


class Progress:
    def __init__(self, total: int, already: int = 0, enabled: bool | None = None, desc: str = "sweep"):
        self.total, self.done, self.failed, self.running = total, already, 0, 0
        self.enabled = True if enabled is None else enabled
        self._p = _Progress(desc, total, "points", initial=already, delay=0.0, enabled=self.enabled,
                            final=True)

    def _postfix(self) -> str:
        return f"done {self.done} failed {self.failed} running {self.running}"

    def update(self, status: str | None = None, running: int = 0) -> None:
        """One point finished (``status`` ok/failed), or only the running count changed (``status=None``)."""
        self.running = running
        if status is not None:
            if status == "ok":
                self.done += 1
            else:
                self.failed += 1
        self._p.set_postfix(self._postfix())
        if status is not None:
            self._p.update(1)

    def close(self) -> None:
        self._p.close()
