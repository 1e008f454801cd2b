"""Errors the den package raises for bad input, so callers (CLI, workflow) can report them."""

import dataclasses
import numbers
import re

import numpy as np


def name_settings(message: str, names: dict[str, str]) -> str:
    """``message`` with each whole-word occurrence of a key of ``names`` replaced by its value:
    a setting's name in a class's error (``learning_rate``) -> the keyword or option the user
    set it with (``--learning-rate``), so an error names what the user typed. Longer keys win
    where several match at one place (``network_learning_rate`` over ``learning_rate``)."""
    words = "|".join(re.escape(key) for key in sorted(names, key=len, reverse=True))
    return re.sub(rf"(?<![\w-])({words})(?![\w-])", lambda m: names[m[1]], message)


# A settings dataclass's annotation (postponed, so text) -> what its values must be.
_KINDS = {"int": "an integer", "int | None": "an integer or None", "float": "a number",
          "bool": "True or False", "str": "a string"}


def setting_type_problems(settings, prefix: str = "") -> list[str]:
    """Check each field of the frozen dataclass ``settings`` against its annotation (int,
    float, bool, str, optionally None) and store it as the plain Python type: a numpy integer
    becomes an int (JSON can save it), an int a float where a float is meant. Refused: a
    boolean for a number (Python counts True as 1), a float for an integer (5.5 steps), text
    for anything but text, a non-boolean for a switch ("no" would be true).

    Returns:
        one problem per bad field, ``"<prefix><name> must be <kind>, got <value!r>"``.
    """
    problems = []
    for field in dataclasses.fields(settings):
        kind, value = field.type, getattr(settings, field.name)
        if kind not in _KINDS or (value is None and kind == "int | None"):
            continue
        boolean = isinstance(value, (bool, np.bool_))
        if kind.startswith("int"):
            ok = isinstance(value, numbers.Integral) and not boolean
            plain = int(value) if ok else None
        elif kind == "float":
            ok = isinstance(value, numbers.Real) and not boolean
            plain = float(value) if ok else None
        elif kind == "bool":
            ok, plain = boolean, bool(value)
        else:
            ok, plain = isinstance(value, str), value
        if ok:
            object.__setattr__(settings, field.name, plain)
        else:
            problems.append(f"{prefix}{field.name} must be {_KINDS[kind]}, got {value!r}")
    return problems


class DENError(Exception):
    """Base class of every error the den package raises on purpose."""


class DENInputError(DENError, ValueError):
    """Input data that DEN cannot use; the message names the problem and what to do."""


class DENModelError(DENError, OSError):
    """A saved model that cannot be read or does not fit the request."""
