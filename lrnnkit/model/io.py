"""The model format on disk (docs/model_format.rst): one JSON document, ``{"format": "lrnnkit.model", "version": 1,
...}``, its float arrays inline or, when large, in a safetensors file beside it (``"arrays": "NAME.safetensors"``).

Exact values are JSON strings (``lrnnkit.exact.exact_to_json``). No pickle: loading never runs code. Reads are bounded
(``limits.MAX_MODEL_BYTES``, ``limits.MAX_ARRAYS_BYTES``); writes are atomic (a temporary file, then a rename). The
objects are :class:`lrnnkit.model.ir.Model` and the pieces of :mod:`lrnnkit.model.layer`; ``Model.save``,
``Model.load``, ``Model.to_json`` and ``Model.from_json`` call the functions here.
"""
from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from .. import limits
from ..errors import InputError
from ..exact import exact_from_json, exact_to_json, to_exact
from ..fileio import atomic_write_bytes, read_safetensors
from ..limits import read_bounded
from .layer import Decoder, GHFactor, Layer, TableMap, Transition, need_fields
from .linalg import short_value

__all__ = ["SCHEMA", "VERSION", "INLINE_LIMIT", "to_document", "document_fields", "save_model", "read_document"]

SCHEMA = "lrnnkit.model"
VERSION = 1
INLINE_LIMIT = 1_000_000  # float entries kept inline in the JSON; larger models put arrays in safetensors


def _float_array(x, name: str, shape: tuple | None = None) -> np.ndarray:
    """A finite float64 array of the given shape, or an InputError naming ``name``."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name}: not a numeric array") from None
    if shape is not None and arr.shape != shape:
        raise InputError(f"{name}: expected shape {shape}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name}: contains NaN or infinity")
    return arr


def _names(x, where: str):
    """An optional list of names (a layer's ``symbol_names`` / ``coords``): None, or a list of strings."""
    if x is None:
        return None
    if not isinstance(x, list) or not all(isinstance(v, str) for v in x):
        raise InputError(f"{where} must be a list of strings, got {str(x)[:60]!r}")
    return x


def _exact_vec(x, name: str, d: int | None = None) -> list | None:
    if x is None:
        return None
    if not isinstance(x, (list, tuple)):
        raise InputError(f"{name}: exact vector must be a list")
    out = [to_exact(v) for v in x]
    if d is not None and len(out) != d:
        raise InputError(f"{name}: exact vector of length {len(out)}, expected {d}")
    return out


def _exact_mat(x, name: str, shape: tuple | None = None) -> list | None:
    if x is None:
        return None
    if not isinstance(x, (list, tuple)) or not all(isinstance(r, (list, tuple)) for r in x):
        raise InputError(f"{name}: exact matrix must be a list of rows")
    out = [[to_exact(v) for v in r] for r in x]
    if shape is not None and (len(out) != shape[0] or any(len(r) != shape[1] for r in out)):
        raise InputError(f"{name}: exact matrix is not of shape {shape}")
    return out


def _tensor_names(doc: Any) -> set:
    """The names of the tensors a model document references (``{"tensor": NAME}`` anywhere in it): the only ones
    read from its safetensors file."""
    names, stack = set(), [doc]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if isinstance(x.get("tensor"), str):
                names.add(x["tensor"])
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return names


def to_document(model, arrays: dict | None = None) -> dict:
    """The JSON document of ``model``. If ``arrays`` is a dict, float arrays are put there (for safetensors) and
    referenced by name; otherwise they are inline."""
    def arr(name: str, a: np.ndarray):
        a = np.asarray(a, dtype=np.float64)
        if arrays is not None:
            arrays[name] = a
            return {"tensor": name}
        return a.tolist()

    def ex_list(x):
        return None if x is None else [exact_to_json(v) for v in x]

    def ex_mat(x):
        return None if x is None else [[exact_to_json(v) for v in r] for r in x]

    layers = []
    for i, L in enumerate(model.layers):
        trans = []
        for j, t in enumerate(L.transitions):
            p = f"l{i}.s{j}."
            td: dict = {"A": arr(p + "A", t.A), "B": arr(p + "B", t.B)}
            if t.factors is not None:
                td["factors"] = [{"beta": f.beta, "v": arr(p + f"f{k}.v", f.v),
                                  "beta_exact": None if f.beta_exact is None else exact_to_json(f.beta_exact),
                                  "u_exact": ex_list(f.u_exact)} for k, f in enumerate(t.factors)]
            if t.A_exact is not None:
                td["A_exact"] = ex_mat(t.A_exact)
            if t.B_exact is not None:
                td["B_exact"] = ex_list(t.B_exact)
            if t.diag is not None:
                td["diag"] = arr(p + "diag", t.diag)
            if t.blocks is not None:
                td["blocks"] = [arr(p + f"b{k}", b) for k, b in enumerate(t.blocks)]
            trans.append(td)
        D = L.decoder
        dec = {"kind": "argmax", "W": arr(f"l{i}.dec.W", D.W), "c": arr(f"l{i}.dec.c", D.c),
               "labels": list(D.labels), "per_symbol": D.per_symbol}
        if D.W_exact is not None:
            dec["W_exact"] = ([ex_mat(m) for m in D.W_exact] if D.per_symbol else ex_mat(D.W_exact))
            dec["c_exact"] = ([ex_list(v) for v in D.c_exact] if D.per_symbol else ex_list(D.c_exact))
        layers.append({
            "name": L.name, "kind": L.kind, "width": L.width, "H0": arr(f"l{i}.H0", L.H0),
            "H0_exact": ex_list(L.H0_exact), "input_map": L.input_map.to_json(), "decoder": dec,
            "symbol_names": L.symbol_names, "coords": L.coords, "transitions": trans,
        })
    return {"format": SCHEMA, "version": VERSION, "name": model.name, "alphabet": list(model.alphabet),
            "layers": layers, "readout": model.readout.to_json(), "output_labels": list(model.output_labels),
            "provenance": model.provenance, "notes": model.notes}


def save_model(model, path: str | os.PathLike, safetensors: bool | None = None) -> None:
    """Write ``model`` atomically (temporary file, then rename). Large float arrays go to
    ``<path stem>.safetensors`` beside the JSON when ``safetensors`` is true (default: when the model has more
    than INLINE_LIMIT float entries)."""
    path = os.fspath(path)
    if safetensors is None:
        n = sum(t.A.size for L in model.layers for t in L.transitions)
        safetensors = n > INLINE_LIMIT
    arrays: dict | None = {} if safetensors else None
    doc = to_document(model, arrays)
    d = os.path.dirname(os.path.abspath(path))
    if arrays is not None:
        from safetensors.numpy import save as st_save
        st_name = os.path.splitext(os.path.basename(path))[0] + ".safetensors"
        doc["arrays"] = st_name
        atomic_write_bytes(os.path.join(d, st_name), st_save({k: np.ascontiguousarray(v) for k, v in arrays.items()}))
    atomic_write_bytes(path, (json.dumps(doc, indent=1) + "\n").encode())


def read_document(path: str | os.PathLike) -> tuple:
    """``(document, arrays)`` of the model file ``path``: the JSON document (bounded read, InputError for a file
    that is not JSON) and the tensors it references from its safetensors file (None when it has none)."""
    path = os.fspath(path)
    raw = read_bounded(path, limits.MAX_MODEL_BYTES, "model", "MAX_MODEL_BYTES")
    if not raw.strip():
        raise InputError(f"model {path!r} is empty (expected a JSON object)")
    try:
        doc = json.loads(raw, parse_int=limits.json_int)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"model {path!r} is not valid JSON: {exc}") from None
    except RecursionError:
        raise InputError(f"model {path!r}: the JSON is nested too deeply") from None
    except ValueError as exc:   # an integer literal past limits.json_int's bound, or Python's own
        raise (type(exc) if isinstance(exc, InputError) else InputError)(f"model {path!r}: {exc}") from None
    arrays = None
    if isinstance(doc, dict) and doc.get("arrays"):
        st = doc["arrays"]
        if not isinstance(st, str) or os.sep in st or st.startswith("."):
            raise InputError(f"model {path!r}: bad arrays file name {st!r}")
        arrays = read_safetensors(os.path.join(os.path.dirname(os.path.abspath(path)), st),
                                  _tensor_names(doc), limits.MAX_ARRAYS_BYTES, f"arrays file of model {path!r}")
    return doc, arrays



def _objects(doc: dict, key: str, where: str, item_where, fields: tuple):
    """``(i, entry)`` for the entries of the list ``doc[key]``, each a JSON object with ``fields``; an InputError
    names ``where`` (not a list) or ``item_where(i)`` (an entry that is no object or lacks a field)."""
    if not isinstance(doc[key], list):
        raise InputError(f"{where}: {key} must be a list")
    for i, entry in enumerate(doc[key]):
        if not isinstance(entry, dict):
            raise InputError(f"{item_where(i)}: must be an object")
        need_fields(entry, fields, item_where(i))
        yield i, entry


def document_fields(doc: Any, where: str, arrays: dict | None) -> dict:
    """The fields of :class:`~lrnnkit.model.ir.Model` read from its JSON document (``arrays``: the tensors of its
    safetensors file). Every defect is an InputError naming ``where``."""
    if not isinstance(doc, dict):
        raise InputError(f"{where}: top level must be a JSON object")
    if doc.get("format") != SCHEMA:
        raise InputError(f"{where}: not an lrnnkit model (format {doc.get('format')!r}, expected {SCHEMA!r})")
    if doc.get("version") != VERSION:
        raise InputError(f"{where}: unsupported model version {doc.get('version')!r} (this lrnnkit reads {VERSION})")
    need_fields(doc, ("alphabet", "layers", "readout", "output_labels"), where)

    def arr(x, name, shape=None):
        if isinstance(x, dict) and "tensor" in x:
            if arrays is None or x["tensor"] not in arrays:
                raise InputError(f"{where}: {name}: tensor {x.get('tensor')!r} missing from the arrays file")
            x = arrays[x["tensor"]]
        return _float_array(x, f"{where}: {name}", shape)

    layers = []
    for i, ld in _objects(doc, "layers", where, lambda i: f"{where}: layer {i}",
                          ("kind", "width", "H0", "input_map", "decoder", "transitions")):
        w = f"{where}: layer {i}"
        d = ld["width"]
        if not isinstance(d, int) or isinstance(d, bool) or d < 1:
            raise InputError(f"{w}: width must be a positive integer, got {d!r}")
        trans = []
        for j, td in _objects(ld, "transitions", w, lambda j: f"{where}: layer {i} symbol {j}", ("A", "B")):
            tw = f"layer {i} symbol {j}"
            factors = None
            if td.get("factors") is not None:
                factors = []
                if not isinstance(td["factors"], list):
                    raise InputError(f"{where}: {tw}: factors must be a list of objects, got "
                                     f"{short_value(td['factors'])}")
                for k, fd in enumerate(td["factors"]):
                    need_fields(fd, ("beta", "v"), f"{where}: {tw} factor {k}")
                    be = fd.get("beta_exact")
                    if not isinstance(fd["beta"], (int, float)) or isinstance(fd["beta"], bool):
                        raise InputError(f"{where}: {tw} factor {k}: beta must be a number, got "
                                         f"{short_value(fd['beta'])}")
                    factors.append(GHFactor(float(fd["beta"]), arr(fd["v"], f"{tw} factor {k} v", (d,)),
                                            None if be is None else exact_from_json(be),
                                            _exact_vec(fd.get("u_exact"), f"{tw} factor {k} u_exact", d)))
            blocks = None
            if td.get("blocks") is not None:
                blocks = [arr(b, f"{tw} block {k}") for k, b in enumerate(td["blocks"])]
            trans.append(Transition(
                arr(td["A"], f"{tw} A", (d, d)), arr(td["B"], f"{tw} B", (d,)), factors,
                _exact_mat(td.get("A_exact"), f"{tw} A_exact", (d, d)),
                _exact_vec(td.get("B_exact"), f"{tw} B_exact", d),
                None if td.get("diag") is None else arr(td["diag"], f"{tw} diag", (d,)), blocks))
        dd = ld["decoder"]
        need_fields(dd, ("W", "c", "labels"), f"{w} decoder")
        per = bool(dd.get("per_symbol", False))
        W = arr(dd["W"], f"layer {i} decoder W")
        c = arr(dd["c"], f"layer {i} decoder c")
        We = ce = None
        if dd.get("W_exact") is not None:
            if per:
                We = [_exact_mat(m, f"{w} decoder W_exact") for m in dd["W_exact"]]
                ce = [_exact_vec(v, f"{w} decoder c_exact") for v in dd["c_exact"]]
            else:
                We = _exact_mat(dd["W_exact"], f"{w} decoder W_exact")
                ce = _exact_vec(dd.get("c_exact"), f"{w} decoder c_exact")
        dec = Decoder(W, c, [str(x) for x in dd["labels"]], We, ce, per)
        layers.append(Layer(ld["kind"], d, trans, arr(ld["H0"], f"layer {i} H0", (d,)),
                            TableMap.from_json(ld["input_map"], f"{w} input map"), dec,
                            _exact_vec(ld.get("H0_exact"), f"{w} H0_exact", d),
                            _names(ld.get("symbol_names"), f"{w} symbol_names"), _names(ld.get("coords"), f"{w} coords"),
                            ld.get("name", "")))
    for key in ("provenance", "notes"):      # read with .get() everywhere: a JSON object or absent
        if doc.get(key) is not None and not isinstance(doc[key], dict):
            raise InputError(f"{where}: {key} must be a JSON object, not {type(doc[key]).__name__} "
                             f"{json.dumps(doc[key])[:60]}")
    return {"alphabet": [str(s) for s in doc["alphabet"]], "layers": layers,
            "readout": TableMap.from_json(doc["readout"], f"{where}: readout"),
            "output_labels": [str(s) for s in doc["output_labels"]], "name": doc.get("name", ""),
            "provenance": doc.get("provenance") or {}, "notes": doc.get("notes") or {}}

