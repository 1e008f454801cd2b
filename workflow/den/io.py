"""Writing files so that a failure never leaves a half-written output behind."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "wb"):
    """Open a temporary file beside ``path``; on success rename it onto ``path``.

    On any exception the temporary file is removed and ``path`` is untouched.

    Yields:
        the open file object.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode) as handle:
            yield handle
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
