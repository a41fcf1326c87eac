"""Every file lrnnkit reads or writes goes through here: bounded reads of regular files, atomic writes that never
follow a link, appends that refuse a link.

**Writes.** :func:`atomic_write_bytes` / :func:`atomic_write_text` write ``data`` to ``path`` so that a reader
never sees a half-written file:

* a **regular file** (or a path that does not exist yet) is written to a temporary file in the same directory,
  flushed to disk, then renamed over the target (``os.replace``: atomic on POSIX; a rename replaces the name, it
  never writes through whatever the name pointed to). The result gets the permissions an ordinary
  ``open(path, "w")`` would give: an existing file keeps its mode, a new one gets ``0o666 & ~umask`` (usually
  0644) -- not the 0600 of :func:`tempfile.mkstemp`;
* a **symbolic link** as the last component is refused (``ln -s ~/victim out/fla_export.json`` cannot make an
  export overwrite ``~/victim``), unless it points to a character device or FIFO (``/dev/stdout`` is a link to
  ``/proc/self/fd/1``): those are written through, like the devices themselves. Links in the directories above the
  file are the user's own layout and are followed;
* a **character device or FIFO** (``/dev/stdout``, ``/dev/null``, a named pipe) is written *through*, in place: it
  is never replaced by a regular file (``-o /dev/full`` as root used to turn the device node into a file);
* a **directory, block device or socket** is refused.

:func:`open_append` opens a log (``records.jsonl``) for appending with ``O_NOFOLLOW``: a planted link is refused,
and so is anything that is not a regular file.

**Reads.** :func:`open_regular` checks with ``stat`` that the path is a regular file *before* opening it (a FIFO
would block ``open`` until a writer comes, and Ctrl-C could not stop it), opens it with ``O_NONBLOCK`` and checks
the opened descriptor again (a swap between the two is caught). :func:`read_regular` reads at most ``limit`` bytes
of such a file, in pieces, so memory grows with what the file holds, never with the limit; :func:`read_safetensors`
reads chosen tensors of a safetensors file without touching the others.

**What was read.** Inside ``with recording_reads() as seen:``, every :func:`read_regular` adds the file's absolute
path and the SHA-256 of the bytes it returned to ``seen``: a run records the content of each input it read, and
:func:`changed_reads` later says, in one line, which of them now hold something else (a task file edited between
two runs into the same output).

Every failure is an :class:`~lrnnkit.errors.InputError` (a size: :class:`~lrnnkit.errors.SizeLimitError`) naming
the path, never a temporary file; the command line prints it on one line with exit status 2.
"""
from __future__ import annotations

import contextvars
import hashlib
import io
import os
import stat
import tempfile
from contextlib import contextmanager

from .errors import InputError, SizeLimitError

__all__ = ["atomic_write_bytes", "atomic_write_chunks", "atomic_write_text", "save_figure", "open_append",
           "open_regular", "read_regular",
           "read_safetensors", "exclusive_lock", "recording_reads", "read_digests", "changed_reads"]

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def _umask() -> int:
    """The process umask. Linux shows it in /proc/self/status (a race-free read); elsewhere os.umask can only be
    read by setting it, so it is set back at once (a thread creating a file in between would see 0o022)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def _cannot(path: str, exc: OSError) -> InputError:
    return InputError(f"cannot write {path!r}: {exc.strerror or exc}")


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISLNK, "a symbolic link"))


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _link_refused(path: str) -> InputError:
    return InputError(f"cannot write {path!r}: it is a symbolic link (lrnnkit does not write through a link it did "
                      "not create; remove the link or name its target)")


def _write_through(path: str, chunks) -> None:
    """Write into a character device or FIFO in place (no O_CREAT: nothing is created; a path swapped for a regular
    file in the meantime is refused, not truncated)."""
    try:
        fd = os.open(path, os.O_WRONLY | _CLOEXEC)
    except OSError as exc:
        raise _cannot(path, exc) from None
    try:
        st = os.fstat(fd)
        if not (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
            raise InputError(f"cannot write {path!r}: it changed while being opened")
        for data in chunks:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
    except OSError as exc:
        raise _cannot(path, exc) from None
    finally:
        os.close(fd)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see the module docstring for links, non-regular targets and
    permissions)."""
    atomic_write_chunks(path, (data,))


def atomic_write_chunks(path: str | os.PathLike, chunks) -> None:
    """Write the bytes of the iterable ``chunks``, one after another, to ``path`` atomically, as
    :func:`atomic_write_bytes` does (a file rewritten piece by piece never needs to be whole in memory)."""
    path = os.fspath(path)
    try:
        lst = os.lstat(path)
    except FileNotFoundError:
        lst = None
    except OSError as exc:
        raise _cannot(path, exc) from None
    if lst is not None and stat.S_ISLNK(lst.st_mode):
        try:
            target = os.stat(path)
        except OSError:
            target = None
        if target is not None and (stat.S_ISCHR(target.st_mode) or stat.S_ISFIFO(target.st_mode)):
            return _write_through(path, chunks)
        raise _link_refused(path)
    if lst is not None and not stat.S_ISREG(lst.st_mode):
        if stat.S_ISCHR(lst.st_mode) or stat.S_ISFIFO(lst.st_mode):
            return _write_through(path, chunks)
        raise InputError(f"cannot write to {path!r}: it is {_kind(lst.st_mode)}")
    mode = stat.S_IMODE(lst.st_mode) if lst is not None else (0o666 & ~_umask())
    d = os.path.dirname(path) or "."
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=d)
    except OSError as exc:
        raise _cannot(path, exc) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            for data in chunks:
                fh.write(data)
            fh.flush()
            os.fchmod(fh.fileno(), mode)
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise _cannot(path, exc) from None
        raise


def atomic_write_text(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` (encoded with ``encoding``) to ``path`` atomically; see :func:`atomic_write_bytes`."""
    atomic_write_bytes(path, text.encode(encoding))


def save_figure(fig, path: str | os.PathLike, **kwargs) -> None:
    """``fig.savefig(path, **kwargs)`` through :func:`atomic_write_bytes` (matplotlib itself would open the path
    and follow a planted link); the format is the path's extension unless ``format`` is given."""
    path = os.fspath(path)
    kwargs.setdefault("format", os.path.splitext(path)[1].lstrip(".").lower() or "png")
    buf = io.BytesIO()
    fig.savefig(buf, **kwargs)
    atomic_write_bytes(path, buf.getvalue())


def open_append(path: str | os.PathLike) -> int:
    """A descriptor open for reading and appending (``O_RDWR | O_APPEND | O_CREAT``) on the regular file ``path``;
    a symbolic link (``O_NOFOLLOW``), FIFO, device or directory there is refused. The caller closes it."""
    path = os.fspath(path)
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _NONBLOCK | _CLOEXEC, 0o666)
    except OSError as exc:
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                raise _link_refused(path) from None
        except OSError:
            pass
        raise _cannot(path, exc) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise InputError(f"cannot append to {path!r}: it is {_kind(st.st_mode)}")
    os.set_blocking(fd, True)
    return fd


@contextmanager
def exclusive_lock(path: str | os.PathLike, what: str = "output"):
    """Hold an exclusive advisory lock (``flock``) on the lock file ``path`` (created if missing, never through a
    link) while the block runs: a second lrnnkit process writing the same output is refused at once with the pid
    of the first, instead of interleaving its writes. The kernel drops the lock when the holder exits, however it
    exits (``kill -9`` included), so a stale lock file never blocks a rerun; the file itself stays.

    Kept rather than ``filelock.FileLock(path, timeout=0)`` (the same ``flock`` underneath): filelock opens the
    lock file following a symbolic link and truncating it, would open a FIFO planted there, and its Timeout names
    no holder; here a link or a non-regular file is refused and the message gives the holder's pid."""
    import fcntl
    path = os.fspath(path)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _NONBLOCK | _CLOEXEC, 0o666)
    except OSError as exc:
        if os.path.islink(path):
            raise _link_refused(path) from None
        raise _cannot(path, exc) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputError(f"cannot lock {path!r}: it is {_kind(os.fstat(fd).st_mode)}")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
            raise InputError(f"{what} {os.path.dirname(path) or '.'!r} is in use by another lrnnkit process (pid "
                             f"{holder}); wait for it to finish or choose another output") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)                  # closing drops the lock


def _cannot_read(path: str, what: str, why: str) -> InputError:
    return InputError(f"cannot read {what} {path!r}: {why}")


def _not_regular(mode: int) -> str:
    why = f"it is {_kind(mode)}, not a regular file"
    if stat.S_ISFIFO(mode):      # `cat f | lrnnkit info /dev/stdin`: a file redirected with `<` is a regular file
        why += " (a pipe is not read: give the file's path, or redirect it with `< FILE`)"
    return why


def open_regular(path: str | os.PathLike, what: str = "file", follow: bool = True):
    """The regular file ``path`` opened for binary reading; anything else (FIFO, device, directory, socket, and
    with ``follow=False`` a symbolic link) is refused at once, before ``open`` could block (see the module
    docstring)."""
    path = os.fspath(path)
    try:
        st = os.stat(path) if follow else os.lstat(path)
    except OSError as exc:
        raise _cannot_read(path, what, exc.strerror or str(exc)) from None
    except ValueError:   # an embedded NUL byte: no file can have that name
        raise _cannot_read(path, what, "the name contains a NUL byte") from None
    if not stat.S_ISREG(st.st_mode):
        raise _cannot_read(path, what, _not_regular(st.st_mode))
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | _CLOEXEC | (0 if follow else _NOFOLLOW))
    except OSError as exc:
        raise _cannot_read(path, what, exc.strerror or str(exc)) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise _cannot_read(path, what, _not_regular(st.st_mode))
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def _too_large(path: str, what: str, limit: int, const: str, size: int | None = None) -> SizeLimitError:
    has = f"has {size} bytes, more than {limit}" if size is not None else f"is larger than {limit} bytes"
    return SizeLimitError(f"{what} {path!r} {has} (lrnnkit.limits.{const})")


_CHUNK = 1 << 20
_reads: contextvars.ContextVar = contextvars.ContextVar("lrnnkit_reads", default=None)


def read_regular(path: str | os.PathLike, limit: int, what: str = "file", const: str = "MAX_FILE_BYTES",
                 follow: bool = True) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them (:class:`SizeLimitError` past it, naming
    ``lrnnkit.limits.<const>``); ``follow=False`` refuses a symbolic link (:func:`open_regular`). The memory taken
    is what the file holds, whatever ``limit`` is: one read of the size ``stat`` reports, then (a file that grew,
    or a ``/proc`` file that reports 0) pieces of at most 1 MiB up to the limit."""
    path = os.fspath(path)
    with open_regular(path, what, follow) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limit:
            raise _too_large(path, what, limit, const, size)
        try:
            data = fh.read(size + 1)
            if len(data) > size:
                buf = bytearray(data)
                while len(buf) <= limit:
                    piece = fh.read(min(_CHUNK, limit + 1 - len(buf)))
                    if not piece:
                        break
                    buf += piece
                data = bytes(buf)
        except OSError as exc:
            raise _cannot_read(path, what, exc.strerror or str(exc)) from None
    if len(data) > limit:
        raise _too_large(path, what, limit, const)
    seen = _reads.get()
    if seen is not None:
        seen[os.path.abspath(path)] = hashlib.sha256(data).hexdigest()
    return data


@contextmanager
def recording_reads():
    """``with recording_reads() as seen:`` -- ``seen`` maps the absolute path of every file :func:`read_regular`
    returned inside the block to the SHA-256 (hex) of its bytes (the last read of a path wins). Blocks nest: an
    outer block also sees what an inner one read. Per thread and task (a context variable)."""
    outer = _reads.get()
    seen: dict = {}
    token = _reads.set(seen)
    try:
        yield seen
    finally:
        _reads.reset(token)
        if outer is not None:
            outer.update(seen)


def read_digests(paths, limit: int) -> dict:
    """``{path: SHA-256 hex of its bytes now}`` for each of ``paths``, ``None`` for one that cannot be read now
    (gone, not a regular file, larger than ``limit``)."""
    out = {}
    for path in paths:
        try:
            out[path] = hashlib.sha256(read_regular(path, limit, "input")).hexdigest()
        except InputError:
            out[path] = None
    return out


def changed_reads(then: dict, now: dict) -> str | None:
    """``None`` when the two records of reads (``{absolute path: sha256 hex or None}``, as :func:`recording_reads`
    or :func:`read_digests` give) name the same contents -- the same multiset of digests, wherever the files are
    now (a store copied elsewhere, another working directory); else one phrase naming the first file (in sorted
    order) that differs: ``'/data/a.dot' changed (sha256 3f2a9c1b0d4e... then, 9e8d7c6b5a4f... now)``,
    ``... was not read then`` or ``... is not read now (gone, unreadable, or no longer an input)``."""
    def digests(rec):
        return sorted(str(v) for v in rec.values())
    if digests(then) == digests(now):
        return None
    for path in sorted(set(then) | set(now)):
        a, b = then.get(path), now.get(path)
        if a == b:
            continue
        if a is None:
            return f"{path!r} is read now and was not then"
        if b is None:
            return f"{path!r} was read then and is not now (gone, unreadable, or no longer an input)"
        return f"{path!r} changed (sha256 {str(a)[:12]}... then, {str(b)[:12]}... now)"
    return "the files read differ"


# safetensors: u64 little-endian header length N, N bytes of JSON {name: {dtype, shape, data_offsets: [b, e]}},
# then the data; offsets count from the end of the header.
#: the safetensors library's own cap on a header (its MAX_HEADER_SIZE; ``safe_open`` refuses a larger one: "header too
#: large")
MAX_SAFETENSORS_HEADER = 100_000_000
#: the safetensors dtypes lrnnkit's arrays use (numpy has no bfloat16: a BF16 tensor is refused by name)
_ST_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "i1",
              "U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "u1", "BOOL": "?"}


def read_safetensors(path: str | os.PathLike, names, limit: int, what: str = "arrays file",
                     const: str = "MAX_ARRAYS_BYTES") -> dict:
    """``{name: numpy array}`` for those of ``names`` present in the safetensors file ``path``, read with the
    safetensors library's own reader (``safetensors.safe_open``: it validates the whole header -- offsets, shapes,
    dtypes, overlaps, its 100 MB header cap -- and maps the file, so an unreferenced tensor of any size costs
    nothing). The file is opened here first and must be a regular file (a FIFO or a device is refused before
    anything could block; safetensors then reads that same open file through ``/proc/self/fd`` where it exists).
    The named tensors' total size must be at most ``limit`` bytes, checked from the header before any data is
    read. Every defect is an InputError naming the file."""
    import numpy as np
    from safetensors import SafetensorError, safe_open
    path = os.fspath(path)
    with open_regular(path, what) as fh:
        proc = f"/proc/self/fd/{fh.fileno()}"
        src = proc if os.path.exists(proc) else path
        try:
            with safe_open(src, framework="numpy") as st:
                present = sorted(set(names) & set(st.keys()) - {"__metadata__"})
                total = 0
                for name in present:
                    sl = st.get_slice(name)
                    dt = sl.get_dtype()
                    if dt not in _ST_DTYPES:
                        raise _cannot_read(path, what, f"tensor {name!r} has dtype {dt}, not one of "
                                           f"{', '.join(_ST_DTYPES)}")
                    count = 1
                    for n in sl.get_shape():
                        count *= int(n)
                    total += count * np.dtype(_ST_DTYPES[dt]).itemsize
                if total > limit:
                    raise SizeLimitError(f"{what} {path!r}: the tensors the model uses take {total} bytes, more than "
                                         f"{limit} (lrnnkit.limits.{const})")
                return {name: np.array(st.get_tensor(name), copy=True) for name in present}
        except SafetensorError as exc:
            raise _cannot_read(path, what, f"not a valid safetensors file ({str(exc)[:160]})") from None
        except OSError as exc:
            raise _cannot_read(path, what, exc.strerror or str(exc)) from None


def make_dir(out: str, what: str = "output directory") -> str:
    """Create the directory ``out`` (and its parents) if needed; InputError (one line) if it is something else or
    cannot be made."""
    if os.path.lexists(out) and not os.path.isdir(out):
        raise InputError(f"{what} {out!r} exists and is not a directory")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create {what} {out!r}: {exc.strerror or exc}") from None
    return out
