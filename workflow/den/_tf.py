"""The one place that imports TensorFlow.

TensorFlow Lattice 2.1 builds its layers on ``tf_keras`` (Keras 2); TensorFlow 2.21 ships
Keras 3. ``TF_USE_LEGACY_KERAS=1`` must be set before TensorFlow is first imported so that
every model in this package is a ``tf_keras`` model. Import ``tf``, ``tf_keras`` and
``tfl`` from here, never from elsewhere.

TensorFlow's C++ start-up chatter (no CUDA driver, CPU features) would drown progress
lines and logs; unless ``TF_CPP_MIN_LOG_LEVEL`` is set by the user (not inherited from a
parent process of den's), it is silenced while TensorFlow loads (set ``TF_CPP_MIN_LOG_LEVEL=0``
to see it).

TensorFlow sizes its two thread pools (intra-op and inter-op) to every core of the machine
unless ``TF_NUM_INTRAOP_THREADS`` / ``TF_NUM_INTEROP_THREADS`` say otherwise, and ignores
``OMP_NUM_THREADS``, the variable that numpy's BLAS reads and that Snakemake sets to each job's
``threads`` (as many cluster setups do). Where ``OMP_NUM_THREADS`` is a positive whole number and
a pool's own variable is not set, the pool takes that many threads (``threads_from_environment``),
so that a workflow job declared with one thread uses one, on a cluster as on 2 cores where two
jobs otherwise ran four pool threads, and a job's numbers do not change with the machine's
number of cores (more threads split TensorFlow's sums differently; session 51,
``docs/benchmarks/speed.md``: up to 1.9 points on a default-config table mean, and 3% less job
time).
"""

import contextlib
import os
import sys

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

THREAD_VARIABLES = ("TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS")


def threads_from_environment(environ=os.environ) -> dict[str, str]:
    """Set each of TensorFlow's ``THREAD_VARIABLES`` that ``environ`` lacks to
    ``OMP_NUM_THREADS`` where that is a positive whole number; return what was set (read by
    TensorFlow when its runtime starts, so call it before the first TensorFlow operation)."""
    threads = environ.get("OMP_NUM_THREADS", "").strip()
    if not (threads.isascii() and threads.isdigit() and int(threads) > 0):  # not "²", "1.5", "-2"
        return {}
    added = {name: str(int(threads)) for name in THREAD_VARIABLES if name not in environ}
    environ.update(added)
    return added


threads_from_environment()


@contextlib.contextmanager
def _quiet_native_stderr(enabled: bool):
    """Point file descriptor 2 at /dev/null (native libraries write there directly)."""
    if not enabled:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


# den's own choice of the level is marked, so that a child process (joblib's workers, a
# subprocess), which inherits the environment, still reads it as den's and stays quiet too
_OWN_LEVEL = "_DEN_TF_CPP_MIN_LOG_LEVEL"
_quiet = "TF_CPP_MIN_LOG_LEVEL" not in os.environ or \
    os.environ.get(_OWN_LEVEL) == os.environ["TF_CPP_MIN_LOG_LEVEL"]
if "TF_CPP_MIN_LOG_LEVEL" not in os.environ:
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = os.environ[_OWN_LEVEL] = "3"
with _quiet_native_stderr(_quiet):
    import tensorflow as tf
    import tensorflow_lattice as tfl
    import tf_keras

# TensorFlow's thread pools do not survive a fork: a child forked (multiprocessing's "fork"
# start method, the default on Linux before Python 3.14) after its parent ran TensorFlow hangs
# in its first TensorFlow work. A DEN marks the process when it first runs TensorFlow
# (``mark_tensorflow_used``), and den's entry points then stop in such a child with advice
# (``check_not_forked``) instead of hanging.
_used = False
_forked_after_use = False


def mark_tensorflow_used() -> None:
    """Record that this process has run TensorFlow (a DEN built its variables)."""
    global _used
    _used = True


def _after_fork_in_child() -> None:
    global _forked_after_use
    _forked_after_use = _forked_after_use or _used


os.register_at_fork(after_in_child=_after_fork_in_child)


def check_not_forked() -> None:
    """Raise where this process was forked after its parent had run TensorFlow.

    Raises:
        DENError: naming the start methods that work.
    """
    if _forked_after_use:
        from den.errors import DENError

        raise DENError("this process was forked after its parent ran TensorFlow (multiprocessing's "
                       "'fork' start method), and TensorFlow's thread pools do not survive a fork: "
                       "its work would hang here. Start workers with "
                       "multiprocessing.get_context('spawn') or 'forkserver', or through joblib's "
                       "default backend (e.g. scikit-learn's n_jobs), or use den in the parent "
                       "only after the fork")


__all__ = ["tf", "tf_keras", "tfl", "check_not_forked", "mark_tensorflow_used"]
