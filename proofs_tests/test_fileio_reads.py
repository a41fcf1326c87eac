"""What a run read, by content (lrnnkit.fileio.recording_reads / changed_reads / read_digests), and bounded reads
whose memory follows the file (read_regular, also for files whose size stat does not report)."""
from __future__ import annotations

import hashlib
import os

import pytest

from lrnnkit.errors import SizeLimitError
from lrnnkit.fileio import changed_reads, read_digests, read_regular, recording_reads


def test_recording_nests_and_hashes_what_was_returned(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"one")
    b.write_bytes(b"two")
    with recording_reads() as outer:
        read_regular(a, 10)
        with recording_reads() as inner:
            read_regular(b, 10)
    assert inner == {str(b): hashlib.sha256(b"two").hexdigest()}
    assert outer == {str(a): hashlib.sha256(b"one").hexdigest(), **inner}
    read_regular(a, 10)                     # outside any block: nothing recorded, nothing fails


def test_changed_reads_compares_contents_wherever_they_are(tmp_path):
    h1, h2 = "1" * 64, "2" * 64
    assert changed_reads({"/x/a": h1}, {"/y/a": h1}) is None                 # moved, same bytes
    assert "changed (sha256 111111111111... then, 222222222222... now)" in changed_reads({"/x/a": h1}, {"/x/a": h2})
    assert "was read then and is not now" in changed_reads({"/x/a": h1}, {})
    assert "is read now and was not then" in changed_reads({}, {"/x/a": h1})
    f = tmp_path / "f"
    f.write_bytes(b"abc")
    assert read_digests([str(f), str(tmp_path / "gone")], 10) == {str(f): hashlib.sha256(b"abc").hexdigest(),
                                                                  str(tmp_path / "gone"): None}


def test_reads_past_the_reported_size_stay_bounded():
    if not os.path.exists("/proc/self/status"):
        pytest.skip("no /proc")
    assert b"Name:" in read_regular("/proc/self/status", 1 << 20)       # stat reports 0 bytes for it
    with pytest.raises(SizeLimitError, match="larger than 16 bytes"):
        read_regular("/proc/self/status", 16)
