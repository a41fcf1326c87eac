"""The progress of a sweep (lrnnkit.sweep.progress): counts of done / failed / running points, a plain line on
stderr off a terminal (at the latest when the last point finishes), nothing at all when switched off."""
from lrnnkit.sweep.progress import Progress


def test_counts_and_silence_when_off(capsys):
    p = Progress(total=4, already=1, enabled=False)
    p.update(running=2)
    p.update("ok", running=1)
    p.update("failed", running=0)
    assert (p.done, p.failed, p.running) == (2, 1, 0)
    p.close()
    assert capsys.readouterr().err == ""


def test_a_status_line_off_a_terminal(capsys):
    p = Progress(total=2, enabled=True)                     # pytest's capture is not a terminal
    p.update("ok")
    p.update("failed")                                      # the last point: a line whatever the clock says
    p.close()
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("sweep: 2/2 points (done 1 failed 1 running 0), ")
