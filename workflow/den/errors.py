"""Errors the den package raises for bad input, so callers (CLI, workflow) can report them."""

import re


def name_settings(message: str, names: dict[str, str]) -> str:
    """``message`` with each whole-word occurrence of a key of ``names`` replaced by its value:
    a setting's name in a class's error (``learning_rate``) -> the keyword or option the user
    set it with (``--learning-rate``), so an error names what the user typed. Longer keys win
    where several match at one place (``network_learning_rate`` over ``learning_rate``)."""
    words = "|".join(re.escape(key) for key in sorted(names, key=len, reverse=True))
    return re.sub(rf"(?<![\w-])({words})(?![\w-])", lambda m: names[m[1]], message)


class DENError(Exception):
    """Base class of every error the den package raises on purpose."""


class DENInputError(DENError, ValueError):
    """Input data that DEN cannot use; the message names the problem and what to do."""


class DENModelError(DENError, OSError):
    """A saved model that cannot be read or does not fit the request."""
