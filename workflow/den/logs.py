"""Sending a workflow step's output to its log file."""

from __future__ import annotations

import contextlib
import traceback
from pathlib import Path


@contextlib.contextmanager
def log_to(path: str | Path):
    """Redirect ``sys.stdout`` and ``sys.stderr`` (progress lines, messages) to ``path``.

    An exception that leaves the block is written to the log too (its traceback, after what
    the step printed) before it propagates: Snakemake points at the log when a job fails,
    and on a cluster the log is where a user looks. A ``SystemExit`` is a step's own way out
    (e.g. 130 after an interrupt, whose message it printed): only a text code is written."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", buffering=1) as handle, contextlib.redirect_stdout(handle), \
            contextlib.redirect_stderr(handle):
        try:
            yield handle
        except BaseException as err:
            if isinstance(err, SystemExit):
                if isinstance(err.code, str):
                    print(err.code, file=handle)
            elif not isinstance(err, GeneratorExit):
                traceback.print_exc(file=handle)
            raise
