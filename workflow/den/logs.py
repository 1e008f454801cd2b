"""Sending a workflow step's output to its log file, and stopping cleanly on SIGTERM (``on_sigterm``)."""

from __future__ import annotations

import contextlib
import signal
import threading
import traceback
from pathlib import Path


@contextlib.contextmanager
def log_to(path: str | Path):
    """Redirect ``sys.stdout`` and ``sys.stderr`` (progress lines, messages) to ``path``.

    An exception that leaves the block is written to the log too (its traceback, after what
    the step printed) before it propagates: Snakemake points at the log when a job fails,
    and on a cluster the log is where a user looks. A ``SystemExit`` is a step's own way out
    (e.g. 130 after an interrupt, whose message it printed): only a text code is written.

    A SIGTERM (a scheduler's time limit or cancel, a ``kill``) that finds no handler of the
    step's own ends the step with exit code 143 and a line in the log that says so, instead of
    a silent death that leaves the log as it was (often empty)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", buffering=1) as handle, contextlib.redirect_stdout(handle), \
            contextlib.redirect_stderr(handle), _terminate_with_a_line(handle):
        try:
            yield handle
        except BaseException as err:
            if isinstance(err, SystemExit):
                if isinstance(err.code, str):
                    print(err.code, file=handle)
            elif not isinstance(err, GeneratorExit):
                traceback.print_exc(file=handle)
            raise


@contextlib.contextmanager
def on_sigterm(stop):
    """While the block runs, SIGTERM calls ``stop(signum)``, which raises (e.g. SystemExit(143)),
    so that the block's ``finally`` clauses run and an output written atomically is left neither
    half done nor as a temporary file, instead of the process dying at once. Only where SIGTERM
    has its default action and on the main thread. The handler is marked ``replaceable``: code
    that handles SIGTERM itself where nothing else does (pre-training, which checkpoints) treats
    it as the default."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def handler(signum, frame):
        stop(signum)

    handler.replaceable = True  # a handler of the step's own (pre-training's checkpoint) may take over
    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _terminate_with_a_line(handle):
    """``on_sigterm``: SIGTERM writes a line to ``handle`` and raises SystemExit(143)."""
    def stop(signum):
        print("stopped by SIGTERM (a scheduler's limit or cancel, or a kill): this step wrote no "
              "output; run it again", file=handle)
        raise SystemExit(128 + signum)

    return on_sigterm(stop)
