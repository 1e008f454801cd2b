"""Errors the den package raises for bad input, so callers (CLI, workflow) can report them."""


class DENError(Exception):
    """Base class of every error the den package raises on purpose."""


class DENInputError(DENError, ValueError):
    """Input data that DEN cannot use; the message names the problem and what to do."""


class DENModelError(DENError, OSError):
    """A saved model that cannot be read or does not fit the request."""
