"""Writing files so that a failure never leaves a half-written output behind."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def current_umask() -> int:
    """The process's umask (read from /proc on Linux; elsewhere set and restored at once)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "wb"):
    """Open a temporary file beside ``path``; on success rename it onto ``path``.

    On any exception the temporary file is removed and ``path`` is untouched. The file gets
    the permissions ``open()`` would give a new file (0666 less the umask), not the owner-only
    0600 of a temporary file.

    Yields:
        the open file object.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode) as handle:
            os.chmod(tmp, 0o666 & ~current_umask())
            yield handle
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
