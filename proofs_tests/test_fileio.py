"""lrnnkit.fileio: atomic writes, usual permissions, no harm to non-regular targets."""
import os
import stat
import subprocess
import sys

import pytest

from lrnnkit.errors import InputError
from lrnnkit.fileio import atomic_write_bytes, atomic_write_text


def _umask():
    old = os.umask(0o022)
    os.umask(old)
    return old


def test_new_file_gets_umask_permissions(tmp_path):
    p = tmp_path / "a.json"
    atomic_write_text(p, "x")
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o666 & ~_umask()
    assert p.read_text() == "x"


def test_existing_file_keeps_its_mode(tmp_path):
    p = tmp_path / "a.json"
    p.write_text("old")
    os.chmod(p, 0o640)
    atomic_write_bytes(p, b"new")
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o640
    assert p.read_bytes() == b"new"


def test_planted_symlink_refused_and_target_untouched(tmp_path):
    """A link planted as the output name is not followed: the write is refused, the file it points to keeps its
    contents, the link stays, and no temporary file is left behind."""
    target = tmp_path / "t.txt"
    target.write_text("old")
    link = tmp_path / "l.txt"
    link.symlink_to(target)
    with pytest.raises(InputError, match="symbolic link"):
        atomic_write_text(link, "new")
    assert link.is_symlink() and target.read_text() == "old"
    dangling = tmp_path / "d.txt"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(InputError, match="symbolic link"):
        atomic_write_text(dangling, "new")
    assert not (tmp_path / "nowhere").exists()
    assert sorted(x.name for x in tmp_path.iterdir()) == ["d.txt", "l.txt", "t.txt"]


def test_link_to_a_device_is_written_through(tmp_path):
    """``-o /dev/stdout`` is a link to a device: written through, like the device itself."""
    link = tmp_path / "out"
    link.symlink_to("/dev/null")
    atomic_write_text(link, "x")
    assert link.is_symlink()


def test_no_temporary_left(tmp_path):
    p = tmp_path / "a.json"
    atomic_write_text(p, "one")
    atomic_write_text(p, "two")
    assert p.read_text() == "two" and [x.name for x in tmp_path.iterdir()] == ["a.json"]


def test_directory_refused(tmp_path):
    with pytest.raises(InputError, match="directory"):
        atomic_write_text(tmp_path, "x")


def test_char_device_written_through_not_replaced():
    before = os.stat("/dev/null")
    atomic_write_text("/dev/null", "x")
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_dev_full_stays_a_device_and_error_names_target():
    with pytest.raises(InputError, match="cannot write") as ei:
        atomic_write_text("/dev/full", "x")
    assert "/dev/full" in str(ei.value) and ".tmp-" not in str(ei.value)
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_error_names_target_not_temporary(tmp_path):
    with pytest.raises(InputError, match="cannot write") as ei:
        atomic_write_text(tmp_path / "no" / "such" / "f.json", "x")
    assert "f.json" in str(ei.value) and ".tmp-" not in str(ei.value)


def test_fifo_written_through(tmp_path):
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    reader = subprocess.Popen([sys.executable, "-c", f"print(open({str(fifo)!r}).read())"], stdout=subprocess.PIPE,
                              text=True)
    atomic_write_text(fifo, "through")
    out, _ = reader.communicate(timeout=30)
    assert out.strip() == "through"
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_umask_read_matches_os_umask():
    from lrnnkit.fileio import _umask
    old = os.umask(0o027)
    try:
        assert _umask() == 0o027
    finally:
        os.umask(old)
