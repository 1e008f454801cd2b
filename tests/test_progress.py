"""Progress lines: the rate and ETA after a resume count only this run's steps."""

import io

import den.progress
from den.progress import Progress


def test_eta_after_a_resume_uses_this_runs_rate(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(den.progress.time, "monotonic", lambda: now[0])
    stream = io.StringIO()
    bar = Progress(10000, "pretrain", stream=stream, interval_s=0.0, start=9000)  # resumed at 9000
    now[0] = 90.0  # the first step here took 90 s (tracing), then 100 steps/s
    bar.update(9001, loss=0.5)
    now[0] = 91.0
    bar.update(9101, loss=0.5)
    now[0] = 100.0
    bar.update(10000, loss=0.5)
    first, second, last = stream.getvalue().splitlines()
    # before: 1 step in 90 s gave "ETA 24h58m", then 101 steps in 91 s gave "ETA 13m30s"
    assert first == "pretrain 9001/10000  90% | loss 0.5 | ? steps/s | ETA ?"
    assert second == "pretrain 9101/10000  91% | loss 0.5 | 100.0 steps/s | ETA 9s"
    assert last.startswith("pretrain 10000/10000 100% |") and last.endswith(" | ETA 0s")
