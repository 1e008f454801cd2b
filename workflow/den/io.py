"""Writing files so that a failure never leaves a half-written output behind, and holding a
large array on disk instead of in memory while it is read back block by block."""

from __future__ import annotations

import contextlib
import os
import stat
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

    On any exception the temporary file is removed and ``path`` is untouched. A new file gets
    the permissions ``open()`` would give it (0666 less the umask), not the owner-only 0600 of
    a temporary file; a file written over keeps its own. A symbolic link is followed: its
    target is written, the link stays. A path that exists but is not a regular file (a
    device such as /dev/stdout, a named pipe) cannot be renamed onto, so it is opened and
    written in place.

    Yields:
        the open file object.
    """
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{str(path)!r} is a directory; give the path of a file to write "
                                f"(e.g. {str(path / 'out')!r} with its extension)")
    if _is_special(path):
        with open(path, mode) as handle:
            yield handle
        return
    path = Path(os.path.realpath(path)) if path.is_symlink() else path
    path.parent.mkdir(parents=True, exist_ok=True)
    permissions = (stat.S_IMODE(path.stat().st_mode) if path.is_file()
                   else 0o666 & ~current_umask())
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode) as handle:
            os.chmod(tmp, permissions)
            yield handle
            handle.flush()
            os.fsync(handle.fileno())  # the data reaches the disk before the name does: after a
            # crash the path holds the old file or the new one, never an empty new one
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _is_special(path: Path) -> bool:
    """Whether ``path`` exists (links followed) and is neither a regular file nor a directory:
    a device (/dev/stdout, /dev/null) or a named pipe."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _nearest_existing(path: Path) -> Path:
    """``path`` or its nearest ancestor that exists (``.`` or ``/`` at the latest)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_output_path(path: str | os.PathLike, what: str, directory: bool = False) -> None:
    """Check, before any work, that ``path`` can be written: a file (``directory=False``) that
    is not an existing directory, or a directory that is not an existing file, under folders
    that are folders (missing ones are created on writing) and writable. Writes nothing.

    Args:
        what: how to name the path in an error, e.g. "--out".

    Raises:
        DENInputError: naming ``what``, the path and what is wrong with it.
    """
    from den.errors import DENInputError

    if not os.fspath(path).strip():  # Path("") is ".", the working directory
        raise DENInputError(f"{what} is empty; give the path of a "
                            f"{'directory' if directory else 'file'} to write")
    path = Path(path)
    if not directory and _is_special(path):  # written in place (atomic_write)
        if not os.access(path, os.W_OK):
            raise DENInputError(f"{what} {str(path)!r} is not writable; choose another path")
        return
    if not directory and path.is_symlink():  # its target is written (atomic_write)
        path = Path(os.path.realpath(path))
    if not directory and path.is_file() and not path.stat().st_mode & 0o222:
        raise DENInputError(f"{what} {str(path)!r} exists and is read-only; make it writable "
                            f"(chmod u+w) or choose another path")
    if not directory and path.is_dir():
        raise DENInputError(f"{what} {str(path)!r} is a directory; give the path of a file to write")
    if directory and path.exists() and not path.is_dir():
        raise DENInputError(f"{what} {str(path)!r} is a file; give the path of a directory")
    existing = _nearest_existing(path if directory else path.parent)
    if not existing.is_dir():
        raise DENInputError(f"{what} {str(path)!r} lies under {str(existing)!r}, which is a file, not "
                            f"a directory; choose another path")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise DENInputError(f"{what} {str(path)!r}: directory {str(existing)!r} is not writable; "
                            f"choose another path")


class SpooledRows:
    """An (m, ...) array kept in a temporary file without a name and read back by rows.

    A large query's encoded features are held here while they are scored block by block
    (``den.train.finetune.FittedTask.proba``). Then the whole array does not add to the
    process's memory beside TensorFlow; ``den predict`` does this for a query of millions of
    rows. ``rows[start:stop]`` reads those rows as an array, equal to the array's own slice.
    ``len`` and ``shape`` are the array's. The file has no name, so the system frees it when it
    is closed (``close``, or the end of a ``with`` block) or when the process ends, however it
    ends.

    Args:
        array: the rows to hold; their bytes are copied to the file at once.
        directory: where the file lies (None: the system's temporary directory). Give one on
            a disk, not in memory (a tmpfs /tmp holds the file in RAM).
    """

    def __init__(self, array, directory: str | os.PathLike | None = None):
        import numpy as np

        array = np.ascontiguousarray(array)
        self.shape, self.dtype = array.shape, array.dtype
        self._row_bytes = int(array.dtype.itemsize * np.prod(array.shape[1:], dtype=np.int64))
        self._file = tempfile.TemporaryFile(dir=directory)
        try:
            self._file.write(memoryview(array.reshape(-1)).cast("B"))
            self._file.flush()
        except BaseException:
            self._file.close()
            raise

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, rows: slice):
        import numpy as np

        if not isinstance(rows, slice) or rows.step not in (None, 1):
            raise TypeError(f"SpooledRows reads a slice of consecutive rows, not {rows!r}")
        start, stop, _ = rows.indices(self.shape[0])
        block = np.empty((max(0, stop - start), *self.shape[1:]), self.dtype)
        self._file.seek(start * self._row_bytes)
        read = self._file.readinto(memoryview(block.reshape(-1)).cast("B"))
        if read != block.nbytes:
            raise OSError(f"reading rows {start}:{stop} back from a temporary file gave {read} "
                          f"bytes, not {block.nbytes}")
        return block

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> SpooledRows:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
