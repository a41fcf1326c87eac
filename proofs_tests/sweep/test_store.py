"""The record store of a sweep (lrnnkit.sweep.store): one JSON line per finished point, a torn last line (a crash
mid-write) ignored and repaired by the next append, the last record of a point winning."""
from hypothesis import given
from hypothesis import strategies as st

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


@given(ops=st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from(["ok", "failed"]), st.booleans()),
                    max_size=12))
def test_store_keeps_the_last_complete_record_of_each_key(tmp_path_factory, ops):
    """Appends, some followed by a torn fragment (a crash mid-write): load() = the last complete record per key."""
    d = tmp_path_factory.mktemp("store")
    store = RecordStore(str(d))
    want = {}
    for i, (k, status, torn) in enumerate(ops):
        store.append({"point_key": k, "status": status, "i": i})
        want[k] = {"point_key": k, "status": status, "i": i}
        if torn:
            with open(store.path, "ab") as fh:
                fh.write(b'{"point_key": "' + k.encode() + b'", "sta')
    assert store.load() == want
    assert store.done_keys() == {k for k, r in want.items() if r["status"] == "ok"}
