"""Errors the den package raises for bad input, so callers (CLI, workflow) can report them."""

import dataclasses
import numbers
import re

import numpy as np


def name_settings(message: str, names: dict[str, str]) -> str:
    """``message`` with each whole-word occurrence of a key of ``names`` replaced by its value:
    a setting's name in a class's error (``learning_rate``) -> the keyword or option the user
    set it with (``--learning-rate``), so an error names what the user typed. Longer keys win
    where several match at one place (``network_learning_rate`` over ``learning_rate``); a key
    inside a path ('runs/learning_rate/ckpt', 'learning_rate.csv') is left as it is."""
    words = "|".join(re.escape(key) for key in sorted(names, key=len, reverse=True))
    return re.sub(rf"(?<![\w/\\-])(?<!\w\.)({words})(?![\w/\\-]|\.\w)", lambda m: names[m[1]], message)


# A settings dataclass's annotation (postponed, so text) -> what its values must be.
_KINDS = {"int": "an integer", "int | None": "an integer or None", "float": "a number",
          "bool": "True or False", "str": "a string", "tuple[int, ...]": "a list of integers",
          "tuple[float, ...]": "a list of numbers"}


def plain_value(value, kind: str):
    """``value`` as the plain Python ``kind`` ("int", "float" or "bool"), or None where it is
    not one: a boolean is no number, a float no integer, text nothing but text; 0 and 1 are
    booleans."""
    boolean = isinstance(value, (bool, np.bool_))
    if kind == "bool":
        if boolean or (isinstance(value, numbers.Integral) and value in (0, 1)):
            return bool(value)
        return None
    if boolean or not isinstance(value, numbers.Integral if kind == "int" else numbers.Real):
        return None
    return int(value) if kind == "int" else float(value)


def setting_type_problems(settings, prefix: str = "") -> list[str]:
    """Check each field of the frozen dataclass ``settings`` against its annotation (int,
    float, bool, str, optionally None) and store it as the plain Python type: a numpy integer
    becomes an int (JSON can save it), an int a float where a float is meant. Refused: a
    boolean for a number (Python counts True as 1), a float for an integer (5.5 steps), text
    for anything but text, a non-boolean for a switch ("no" would be true; 0 and 1 are read as
    False and True, as scikit-learn grids write them); in a list, each item as a single value.

    Returns:
        one problem per bad field, ``"<prefix><name> must be <kind>, got <value!r>"``.
    """
    problems = []
    for field in dataclasses.fields(settings):
        kind, value = field.type, getattr(settings, field.name)
        if kind not in _KINDS or (value is None and kind == "int | None"):
            continue
        if kind.startswith("tuple"):
            item = "int" if kind == "tuple[int, ...]" else "float"
            listed = hasattr(value, "__iter__") and not isinstance(value, (str, bytes, dict))
            items = [plain_value(v, item) for v in value] if listed else [None]
            ok, plain = None not in items, tuple(items)
        elif kind != "str":
            plain = plain_value(value, kind.split(" ")[0])
            ok = plain is not None
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


class DENWarning(UserWarning):
    """Base class of every warning the den package gives on purpose; its message says what
    happened and what to do, so ``den``'s command line prints it as one line, without the
    file and line of den's code that gave it."""


class DENModelWarning(DENWarning):
    """A saved model that loads, but whose predictions here may differ from the ones it gave
    the den that saved it (a change to how den computes them); the message names the change."""


class DENInputWarning(DENWarning):
    """Input data DEN can use, but not as the user may have meant (text among numbers read as
    missing, query categories the support set did not have); the message names the column."""
