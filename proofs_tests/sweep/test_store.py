"""The record store of a sweep (lrnnkit.sweep.store): one JSON line per finished point, a torn last line (a crash
mid-write) ignored and repaired by the next append, the last record of a point winning."""
from lrnnkit.sweep.store import RecordStore


def test_store_ignores_a_torn_line_and_repairs_it(tmp_path):
    st_ = RecordStore(str(tmp_path))
    st_.append({"point_key": "a", "status": "ok"})
    with open(st_.path, "ab") as fh:
        fh.write(b'{"point_key": "b", "stat')          # a crash mid-write
    assert set(st_.load()) == {"a"}
    st_.append({"point_key": "c", "status": "failed"})
    st_.append({"point_key": "c", "status": "ok"})      # the last record of a key wins
    assert st_.load()["c"]["status"] == "ok" and set(st_.load()) == {"a", "c"}
    assert st_.done_keys() == {"a", "c"}
    assert open(st_.path, "rb").read().count(b"\n") == 4
