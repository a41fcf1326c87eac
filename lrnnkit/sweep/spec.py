"""Sweep specs: a TOML file naming a job kind and a grid; the grid's points, the spec's hash, per-point seeds.

A spec (docs/cli.rst)::

    kind = "collapse"              # collapse | certify | theorems | train
    seed = 0                       # optional base seed (default 0)
    max_retries = 3                # optional: times a task is re-run after its worker died (Ray)
    num_cpus = 1                   # optional: Ray resources per task (fractions allowed)
    num_gpus = 0.25                # optional (train: several small runs share one GPU; "auto": by measured memory)
    gpu_memory_gb = 80             # optional, with num_gpus = "auto": one GPU's memory (GiB; default: the driver's)

    [params]                       # optional: fixed parameters of every point
    rounding = "nearest-even"

    [grid]                         # each key a non-empty list; the grid is their Cartesian product
    source = ["group:S5", "group:A5"]
    format = ["bf16", "fp8-e4m3-ieee"]
    policy = ["matvec"]
    steps = [10000]
    # a list of tables zips parameters together (one grid axis whose values set several keys):
    case = [{source = "parity", construction = "parity-sign"}, {source = "counter:5", construction = "cyclic-rotation"}]

The points are enumerated in the order the keys appear (the first key varies slowest), as ``itertools.product``.
A point is the dict of its parameters (fixed ``params`` merged with the grid's values, tables flattened).

Hashes (SHA-256 of canonical JSON: sorted keys, no whitespace):

* ``spec_hash``: of ``kind``, ``seed``, ``params`` and ``grid`` (not the scheduling keys ``max_retries``,
  ``num_cpus``, ``num_gpus``, ``gpu_memory_gb``, which cannot change a result);
* ``point_key`` of a point: of ``kind``, ``seed`` and the point's parameters. The store keys records by it, so a
  grid extended with new values reuses every point already computed;
* ``point_seed``: the first 32 bits of the SHA-256 of ``(seed, kind, point)``. Every random choice of a job
  (random words, initialisations) derives from it: records do not depend on the executor, the worker or the order
  in which points finish.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import math
import sys
from dataclasses import dataclass, field

from ..errors import InputError
from ..errors import SizeLimitError
from .. import limits
from ..limits import read_bounded
from .jobs import JOB_KINDS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["SweepSpec", "load_spec", "parse_spec", "canonical_json", "SCHEDULING_KEYS"]

SCHEDULING_KEYS = ("max_retries", "num_cpus", "num_gpus", "gpu_memory_gb")
_TOP_KEYS = ("kind", "seed", "params", "grid", "name", "description") + SCHEDULING_KEYS
MAX_POINTS = 1_000_000
MAX_GPU_MEMORY_GB = 65_536     # gpu_memory_gb: above any card


def canonical_json(obj) -> str:
    """Canonical JSON (sorted keys, no whitespace, UTF-8 kept): equal data gives equal strings."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _sha(obj) -> str:
    return hashlib.sha256(canonical_json(obj).encode()).hexdigest()


@dataclass
class SweepSpec:
    """A parsed sweep spec (see the module docstring). ``grid`` maps axis name -> list of values; a value that is a
    dict sets several parameters at once."""

    kind: str
    grid: dict
    params: dict = field(default_factory=dict)
    seed: int = 0
    max_retries: int = 3
    num_cpus: float = 1.0
    num_gpus: float | str = 0.0       # or "auto" (train): per point, by its measured memory (sweep.packing)
    gpu_memory_gb: float | None = None
    name: str = ""
    source: str = ""                  # where it was read from (for messages)

    @property
    def spec_hash(self) -> str:
        return _sha({"kind": self.kind, "seed": self.seed, "params": self.params, "grid": self.grid})[:16]

    def n_points(self) -> int:
        return math.prod(len(v) for v in self.grid.values()) if self.grid else 1

    def points(self) -> list:
        """Every grid point, in grid order: fixed params updated with the values of each axis (tables flattened)."""
        axes = list(self.grid.items())
        out = []
        for combo in itertools.product(*[vals for _, vals in axes]):
            p = dict(self.params)
            for (axis, _), v in zip(axes, combo):
                if isinstance(v, dict):
                    p.update(v)
                else:
                    p[axis] = v
            out.append(p)
        return out

    def point_key(self, point: dict) -> str:
        return _sha({"kind": self.kind, "seed": self.seed, "point": point})[:20]

    def point_seed(self, point: dict) -> int:
        """The seed of a point's randomness: a function of the spec's base seed, kind and the point only."""
        return int(_sha(["seed", self.seed, self.kind, point])[:8], 16)

    def to_json(self) -> dict:
        return {"kind": self.kind, "seed": self.seed, "params": self.params, "grid": self.grid,
                "max_retries": self.max_retries, "num_cpus": self.num_cpus, "num_gpus": self.num_gpus,
                "gpu_memory_gb": self.gpu_memory_gb, "name": self.name, "spec_hash": self.spec_hash,
                "points": self.n_points()}


def load_spec(path: str, kinds=None) -> SweepSpec:
    """Read and validate a TOML spec file; every problem is one :class:`InputError` naming the file. ``kinds``: as
    in :func:`parse_spec`."""
    raw = read_bounded(path, limits.MAX_SPEC_BYTES, "sweep spec", "MAX_SPEC_BYTES")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(f"sweep spec {path!r} is not UTF-8 text: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"sweep spec {path!r} is not valid TOML: {exc}") from None
    except RecursionError:
        raise InputError(f"sweep spec {path!r}: the TOML is nested too deeply") from None
    return parse_spec(data, source=path, kinds=kinds)


def _scalar_ok(v) -> bool:
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, (bool, int, str)):
        return True
    if isinstance(v, list):
        return all(_scalar_ok(x) for x in v)
    if isinstance(v, dict):
        return all(isinstance(k, str) and _scalar_ok(x) for k, x in v.items())
    return False   # TOML dates/times: not JSON-able, not a job parameter


def parse_spec(data: dict, source: str = "<spec>", kinds=None) -> SweepSpec:
    """Validate a spec given as a dict (the parsed TOML). ``kinds``: the allowed job kinds (default: the built-in
    ones of :mod:`lrnnkit.sweep.jobs`; ``None`` there means "any", for custom job functions)."""
    where = f"sweep spec {source!r}"
    if not isinstance(data, dict):
        raise InputError(f"{where}: expected a TOML table at the top level")
    unknown = sorted(set(data) - set(_TOP_KEYS))
    if unknown:
        raise InputError(f"{where}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(_TOP_KEYS)})")
    kind = data.get("kind")
    if not isinstance(kind, str) or not kind:
        raise InputError(f"{where}: missing or empty 'kind' (one of collapse, certify, theorems, train)")
    if kinds is None:
        kinds = tuple(JOB_KINDS)
    if kinds and kind not in kinds:
        raise InputError(f"{where}: unknown kind {kind!r} (one of {', '.join(kinds)})")
    seed = data.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise InputError(f"{where}: 'seed' must be a non-negative integer, got {seed!r}")
    params = data.get("params", {})
    if not isinstance(params, dict):
        raise InputError(f"{where}: 'params' must be a table, got {params!r}")
    grid = data.get("grid")
    if not isinstance(grid, dict) or not grid:
        raise InputError(f"{where}: missing or empty [grid] table (each key a list of values)")
    for k, v in params.items():
        if not _scalar_ok(v):
            raise InputError(f"{where}: params.{k} has a value that is not a JSON value: {v!r}")
    set_by = {k: "params" for k in params}
    for axis, vals in grid.items():
        if not isinstance(vals, list) or not vals:
            raise InputError(f"{where}: grid.{axis} must be a non-empty list, got {vals!r}")
        if not _scalar_ok(vals):
            raise InputError(f"{where}: grid.{axis} has a value that is not a JSON value: {vals!r}")
        tables = [isinstance(v, dict) for v in vals]
        if any(tables) and not all(tables):
            raise InputError(f"{where}: grid.{axis} mixes tables and plain values: {vals!r}")
        keys = {axis} if not tables[0] else set().union(*(set(v) for v in vals))
        if tables[0] and any(not v for v in vals):
            raise InputError(f"{where}: grid.{axis} has an empty table")
        for k in sorted(keys):
            if k in set_by:
                raise InputError(f"{where}: parameter {k!r} is set twice (by {set_by[k]} and grid.{axis})")
            set_by[k] = f"grid.{axis}"
        if len({canonical_json(v) for v in vals}) != len(vals):
            raise InputError(f"{where}: grid.{axis} lists a value twice: {vals!r}")
    spec = SweepSpec(kind=kind, grid=grid, params=params, seed=seed, name=str(data.get("name", "")), source=source)
    mr = data.get("max_retries", 3)
    if not isinstance(mr, int) or isinstance(mr, bool) or not 0 <= mr <= 100:
        raise InputError(f"{where}: 'max_retries' must be an integer in 0..100, got {mr!r}")
    spec.max_retries = mr
    auto = data.get("num_gpus") == "auto"
    if auto and kind != "train":
        raise InputError(f"{where}: num_gpus = \"auto\" is for train sweeps (kind = \"train\"), not {kind!r}")
    for key in ("num_cpus",) + (() if auto else ("num_gpus",)):
        v = data.get(key, spec.num_cpus if key == "num_cpus" else spec.num_gpus)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0 \
                or (key == "num_cpus" and v == 0 and data.get("num_gpus", 0) == 0):
            alt = ' or "auto" (train)' if key == "num_gpus" else ""
            raise InputError(f"{where}: {key!r} must be a non-negative number (num_cpus > 0 unless num_gpus > 0)"
                             f"{alt}, got {v!r}")
        if v > limits.SWEEP_MAX_CPUS:     # a task no node can hold would wait for resources forever
            raise SizeLimitError(f"{where}: {key!r} must be <= {limits.SWEEP_MAX_CPUS}, got {v!r} "
                                 "(lrnnkit.limits.SWEEP_MAX_CPUS)")
        setattr(spec, key, float(v))
    if auto:
        spec.num_gpus = "auto"
    gb = data.get("gpu_memory_gb")
    if gb is not None:
        if not auto:
            raise InputError(f"{where}: gpu_memory_gb is used only with num_gpus = \"auto\"")
        if isinstance(gb, bool) or not isinstance(gb, (int, float)) or not 0 < gb <= MAX_GPU_MEMORY_GB:
            raise InputError(f"{where}: 'gpu_memory_gb' must be a number of GiB in (0, "
                             f"{MAX_GPU_MEMORY_GB}], got {gb!r}")
        spec.gpu_memory_gb = float(gb)
    n = spec.n_points()
    if n > MAX_POINTS:
        raise InputError(f"{where}: the grid has {n} points, over the cap of {MAX_POINTS}")
    return spec
