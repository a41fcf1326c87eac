"""Small, safe file output: atomic writes with the usual permissions, and no harm to things that are not files.

:func:`atomic_write_bytes` / :func:`atomic_write_text` write ``data`` to ``path`` so that a reader never sees a
half-written file:

* a **regular file** (or a path that does not exist yet) is written to a temporary file in the same directory, which
  is then renamed over the target (``os.replace``: atomic on POSIX). The result gets the permissions an ordinary
  ``open(path, "w")`` would give: an existing file keeps its mode, a new one gets ``0o666 & ~umask`` (usually
  0644) -- not the 0600 of :func:`tempfile.mkstemp`;
* a **symbolic link** is followed: the file it points to is replaced, the link stays;
* a **character device or FIFO** (``/dev/stdout``, ``/dev/null``, a named pipe) is written *through*, in place: it
  is never replaced by a regular file (``-o /dev/full`` as root used to turn the device node into a file);
* a **directory, block device or socket** is refused with an :class:`~lrnnkit.errors.InputError` naming the path.

Every failure is an :class:`~lrnnkit.errors.InputError` ``cannot write 'PATH': REASON`` (``/dev/full``: "No space
left on device"; a missing directory: "No such file or directory"): it names the target path, never the temporary
file, and the command line prints it on one line with exit status 2.
"""
from __future__ import annotations

import os
import stat
import tempfile

from .errors import InputError

__all__ = ["atomic_write_bytes", "atomic_write_text"]


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


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see the module docstring for non-regular targets and permissions)."""
    path = os.fspath(path)
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise _cannot(path, exc) from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            try:
                with open(real, "wb") as fh:  # write through: the device node stays what it is
                    fh.write(data)
            except OSError as exc:
                raise _cannot(path, exc) from None
            return
        raise InputError(f"cannot write to {path!r}: it is {_kind(st.st_mode)}")
    mode = stat.S_IMODE(st.st_mode) if st is not None else (0o666 & ~_umask())
    d = os.path.dirname(real) or "."
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=d)
    except OSError as exc:
        raise _cannot(path, exc) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fchmod(fh.fileno(), mode)
        os.replace(tmp, real)
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
