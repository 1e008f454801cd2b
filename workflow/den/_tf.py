"""The one place that imports TensorFlow.

TensorFlow Lattice 2.1 builds its layers on ``tf_keras`` (Keras 2); TensorFlow 2.21 ships
Keras 3. ``TF_USE_LEGACY_KERAS=1`` must be set before TensorFlow is first imported so that
every model in this package is a ``tf_keras`` model. Import ``tf``, ``tf_keras`` and
``tfl`` from here, never from elsewhere.
"""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402
import tensorflow_lattice as tfl  # noqa: E402
import tf_keras  # noqa: E402

__all__ = ["tf", "tf_keras", "tfl"]
