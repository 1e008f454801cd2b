"""The one place that imports TensorFlow.

TensorFlow Lattice 2.1 builds its layers on ``tf_keras`` (Keras 2); TensorFlow 2.21 ships
Keras 3. ``TF_USE_LEGACY_KERAS=1`` must be set before TensorFlow is first imported so that
every model in this package is a ``tf_keras`` model. Import ``tf``, ``tf_keras`` and
``tfl`` from here, never from elsewhere.

TensorFlow's C++ start-up chatter (no CUDA driver, CPU features) would drown progress
lines and logs; unless ``TF_CPP_MIN_LOG_LEVEL`` is set by the user, it is silenced while
TensorFlow loads (set ``TF_CPP_MIN_LOG_LEVEL=0`` to see it).
"""

import contextlib
import os
import sys

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")


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


_quiet = "TF_CPP_MIN_LOG_LEVEL" not in os.environ
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
with _quiet_native_stderr(_quiet):
    import tensorflow as tf
    import tensorflow_lattice as tfl
    import tf_keras

__all__ = ["tf", "tf_keras", "tfl"]
