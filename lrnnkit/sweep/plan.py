"""The packing a sweep would get on ``G`` GPUs, without running it (``lrnnkit sweep SPEC --dry-run --gpus G``).

A model of the Ray executor's placement (:mod:`lrnnkit.sweep.executors`): tasks are taken in grid order; whenever
GPU memory frees, each waiting task in order starts on the first GPU whose free share holds its ``num_gpus``
(shares below one card share a card; a share of ``k >= 1`` whole cards takes ``k`` free cards), later tasks that fit
start beside an earlier one that does not (Ray places any task whose resources are free). A task with share 0
needs no GPU and starts at once. Shares are added exactly (:class:`fractions.Fraction`: the 1/16 grid of
``num_gpus = "auto"`` and any float share are exact in it).

With ``seconds`` (each task's run time, e.g. from a cost table) the plan is an event simulation whose ``makespan``
is the sweep's wall-clock; without it every task takes one unit and the start times count waves. It is a model:
Ray's scheduler may pick another free card, and its bounded queue (``window``) is not modelled; run times are what
the caller says.
"""
from __future__ import annotations

import heapq
from fractions import Fraction

from ..errors import MESSAGE_CHARS, InputError

__all__ = ["pack"]


def pack(shares: list, gpus: int, seconds: list | None = None) -> dict:
    """Simulate placing tasks of GPU ``shares`` (``num_gpus`` per task, in grid order) on ``gpus`` cards.

    Returns ``{"gpus", "makespan", "gpu_seconds", "utilisation", "placements"}``: ``placements[i] =
    {"index", "share", "gpus": [card indices], "start", "end"}``; ``gpu_seconds`` = sum of share x run time;
    ``utilisation`` = gpu_seconds / (gpus x makespan). Raises :class:`InputError` for a task no card set can hold
    (a share above ``gpus``, or a share above one card that is not a whole number of cards)."""
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 1:
        raise InputError(f"--gpus must be a positive integer, got {gpus!r}")
    n = len(shares)
    secs = [1.0] * n if seconds is None else [float(s) for s in seconds]
    if len(secs) != n or any(not s >= 0 for s in secs):
        raise InputError(f"need one non-negative run time per task ({n}), got {seconds!r}"[:MESSAGE_CHARS])
    need = []
    for i, s in enumerate(shares):
        f = Fraction(s)
        if f < 0 or f > gpus or (f > 1 and f.denominator != 1):
            raise InputError(f"task {i} asks num_gpus = {s}, which {gpus} GPU(s) cannot hold "
                             "(a share of at most one card, or a whole number of cards up to --gpus)")
        need.append(f)
    free = [Fraction(1)] * gpus
    waiting = list(range(n))
    running: list = []        # heap of (end, index)
    place: dict = {}
    t = 0.0
    while waiting or running:
        still = []
        for i in waiting:
            cards = _fit(need[i], free)
            if cards is None:
                still.append(i)
                continue
            for g in cards:
                free[g] -= need[i] if need[i] <= 1 else 1
            place[i] = {"index": i, "share": float(need[i]), "gpus": cards, "start": t, "end": t + secs[i]}
            heapq.heappush(running, (t + secs[i], i))
        waiting = still
        if not running:
            break
        t, i = heapq.heappop(running)
        for g in place[i]["gpus"]:
            free[g] += need[i] if need[i] <= 1 else 1
        while running and running[0][0] == t:      # everything ending now frees its cards before the next start
            _, j = heapq.heappop(running)
            for g in place[j]["gpus"]:
                free[g] += need[j] if need[j] <= 1 else 1
    makespan = max((p["end"] for p in place.values()), default=0.0)
    busy = sum(float(need[i]) * secs[i] for i in range(n))
    return {"gpus": gpus, "makespan": makespan, "gpu_seconds": busy,
            "utilisation": busy / (gpus * makespan) if makespan else 0.0,
            "placements": [place[i] for i in range(n)]}


def _fit(share: Fraction, free: list):
    """The cards a task of ``share`` starts on now, or None: a share of at most one card on the first card with
    that much free (share 0: no card); ``k`` whole cards on the first ``k`` entirely free ones."""
    if share == 0:
        return []
    if share <= 1:
        return next(([g] for g, f in enumerate(free) if f >= share), None)
    whole = [g for g, f in enumerate(free) if f == 1]
    return whole[:int(share)] if len(whole) >= share else None
