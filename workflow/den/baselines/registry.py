"""The meta-learning baselines by name: ``name`` -> ``MetaLearner`` subclass.

The method modules (``den.baselines.metric``, ``den.baselines.maml``) ``register`` their
classes here, and ``den/baselines/__init__.py`` imports them, so any import of the package
fills the registry. ``den.baselines.meta`` (the base class, ``make_baseline`` and
``MetaLearner.load``) looks classes up here and imports no method module: the method modules
import ``meta``, never the other way round. This module imports nothing of the package.
"""

from __future__ import annotations

_CLASSES: dict[str, type] = {}


def register(*classes: type) -> dict[str, type]:
    """Record each class under its ``name``; returns them as ``{name: class}``.

    Raises:
        ValueError: a name already taken by another class.
    """
    for cls in classes:
        if _CLASSES.get(cls.name, cls) is not cls:
            raise ValueError(f"baseline {cls.name!r} is registered twice ({_CLASSES[cls.name].__name__} "
                             f"and {cls.__name__})")
        _CLASSES[cls.name] = cls
    return {cls.name: cls for cls in classes}


def baseline_class(name: str) -> type | None:
    """The class registered under ``name``, or None."""
    return _CLASSES.get(name)


def registered() -> dict[str, type]:
    """Every registered class by name (a copy), in registration order."""
    return dict(_CLASSES)
