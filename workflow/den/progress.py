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


class Progress:
    """Prints ``label done/total pct | key value | rate | ETA`` at most every ``interval_s``.

    On a terminal the line is redrawn in place; elsewhere (log files) each update is a
    new line. ``stream=None`` silences it; the default "stderr" means ``sys.stderr`` at the
    time of the call (so a redirection of stderr, e.g. to a log file, is followed).
    """

    def __init__(self, total: int, label: str, *, unit: str = "steps",
                 stream: TextIO | None | str = "stderr", interval_s: float = 2.0, start: int = 0):
        if stream == "stderr":
            stream = sys.stderr
        self.total, self.label, self.unit = int(total), label, unit
        self.stream, self.interval_s = stream, interval_s
        self._start_count = start
        self._t0 = time.monotonic()
        self._last = -float("inf")
        self._tty = bool(stream is not None and getattr(stream, "isatty", lambda: False)())

    def update(self, done: int, force: bool = False, **metrics: float) -> None:
        if self.stream is None:
            return
        now = time.monotonic()
        if not force and now - self._last < self.interval_s and done < self.total:
            return
        self._last = now
        elapsed = now - self._t0
        rate = (done - self._start_count) / elapsed if elapsed > 0 else 0.0
        eta = (self.total - done) / rate if rate > 0 else float("nan")
        parts = [f"{self.label} {done}/{self.total} {100.0 * done / max(1, self.total):3.0f}%"]
        parts += [f"{key} {value:.4g}" for key, value in metrics.items()]
        parts.append(f"{rate:.1f} {self.unit}/s")
        parts.append("ETA " + (format_duration(eta) if eta == eta else "?"))
        line = " | ".join(parts)
        if self._tty:
            self.stream.write("\r" + line + ("\n" if done >= self.total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
