"""Progress lines for long work (pre-training, evaluation loops) on stderr."""

from __future__ import annotations

import sys
import time
from typing import TextIO


def format_duration(seconds: float) -> str:
    """3725 -> '1h02m', 125 -> '2m05s', 7.3 -> '7s'."""
    seconds = max(0, int(round(seconds)))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


def progress_stream(stream: TextIO | None | str) -> TextIO | None:
    """The stream ``stream`` names: "stderr" and "stdout" are ``sys.stderr`` and ``sys.stdout``
    now (a redirection, e.g. to a job's log, is followed); None stays None (silent); any other
    text is an error, as an object without ``write`` is."""
    if isinstance(stream, str):
        if stream not in ("stderr", "stdout"):
            raise ValueError(f"progress must be a stream, None (silent), 'stderr' or 'stdout', "
                             f"got {stream!r}")
        return getattr(sys, stream)
    if stream is not None and not callable(getattr(stream, "write", None)):
        raise ValueError(f"progress must be a stream (with a write method), None (silent), 'stderr' or "
                         f"'stdout', got a {type(stream).__name__}")
    return stream


class Progress:
    """Prints ``label done/total pct | key value | rate | ETA`` at most every ``interval_s``.

    On a terminal the line is redrawn in place; elsewhere (log files) each update is a
    new line. ``stream=None`` silences it; the default "stderr" means ``sys.stderr`` at the
    time of the call (so a redirection of stderr, e.g. to a log file, is followed).

    The rate (and the ETA from it) counts only work done in this process, timed from the
    first update on: never the ``start`` units an earlier run already did (a resumed
    pre-training), nor the units before the first update here, which carry one-off costs
    (tracing, loading) that would make the first ETAs far too long. Until a second update
    the rate and ETA print as "?".
    """

    def __init__(self, total: int, label: str, *, unit: str = "steps",
                 stream: TextIO | None | str = "stderr", interval_s: float = 2.0, start: int = 0):
        stream = progress_stream(stream)
        self.total, self.label, self.unit = int(total), label, unit
        self.stream, self.interval_s = stream, interval_s
        self.start = int(start)  # done before this process; the rate never counts it
        self._first = None  # (done, time) at the first update: where the rate is timed from
        self._last = -float("inf")
        self._tty = bool(stream is not None and getattr(stream, "isatty", lambda: False)())

    def update(self, done: int, force: bool = False, **metrics: float) -> None:
        """Report ``done`` of ``total`` (counting the ``start`` done before), with ``metrics``;
        prints at most every ``interval_s`` unless ``force`` or finished."""
        if self.stream is None:
            return
        now = time.monotonic()
        if self._first is None:
            self._first = (done, now)
        if not force and now - self._last < self.interval_s and done < self.total:
            return
        self._last = now
        first_done, first_time = self._first
        elapsed = now - first_time
        rate = (done - first_done) / elapsed if elapsed > 0 and done > first_done else None
        if done >= self.total:
            eta = "0s"
        else:
            eta = format_duration((self.total - done) / rate) if rate else "?"
        parts = [f"{self.label} {done}/{self.total} {100.0 * done / max(1, self.total):3.0f}%"]
        parts += [f"{key} {value:.4g}" for key, value in metrics.items()]
        parts.append(f"{rate:.1f} {self.unit}/s" if rate is not None else f"? {self.unit}/s")
        parts.append("ETA " + eta)
        line = " | ".join(parts)
        if self._tty:
            self.stream.write("\r" + line + ("\n" if done >= self.total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
