"""Sending a workflow step's output to its log file."""

from __future__ import annotations

import contextlib
from pathlib import Path


@contextlib.contextmanager
def log_to(path: str | Path):
    """Redirect ``sys.stdout`` and ``sys.stderr`` (progress lines, messages) to ``path``."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", buffering=1) as handle, contextlib.redirect_stdout(handle), \
            contextlib.redirect_stderr(handle):
        yield handle
