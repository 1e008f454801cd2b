"""The installed versions of the libraries whose behaviour ``den`` relies on, checked against
the lower bounds the package declares (pyproject.toml, read from the installed package's
metadata, so the bounds live in one place).

Older versions install without complaint where pip does not resolve them (``--no-deps``, a
conda environment, a package pinned by something else) and then misbehave silently: pandas
before 3.1 reads far dates (9999-12-31) as categories and a column of unreadable dates as a
traceback; scikit-learn before 1.6 ignores ``DENClassifier``'s estimator tags. ``import den``
refuses them instead, naming the package, both versions and the command that fixes it.
"""

from __future__ import annotations

import importlib.metadata
import re

DISTRIBUTION = "den-workflow"
CHECKED = ("numpy", "pandas", "scikit-learn", "scipy", "matplotlib")


def _version_tuple(text: str) -> tuple[int, ...]:
    """(2, 4, 5) for "2.4.5", "2.4.5rc1" or "2.4.5+local": the leading numeric release parts."""
    parts = []
    for part in text.split("."):
        digits = re.match(r"\d+", part)
        if digits is None:
            break
        parts.append(int(digits.group()))
        if digits.end() < len(part):
            break
    return tuple(parts)


def lower_bounds(requirements: list[str] | None = None) -> dict[str, str]:
    """{package: lowest version} from ``requirements`` (default: the installed den-workflow's
    declared dependencies; {} where den runs from a source tree without being installed), for
    the packages in ``CHECKED`` that declare ``>=`` bounds."""
    if requirements is None:
        try:
            requirements = importlib.metadata.requires(DISTRIBUTION) or []
        except importlib.metadata.PackageNotFoundError:
            return {}
    bounds = {}
    for requirement in requirements:
        if ";" in requirement:  # environment markers (extras): not a runtime dependency
            continue
        name = re.match(r"[A-Za-z0-9_.-]+", requirement.strip())
        if name is None:
            continue
        package = name.group().lower().replace("_", "-")
        minimum = re.search(r">=\s*([0-9][^,;\s]*)", requirement)
        if package in CHECKED and minimum:
            bounds[package] = minimum.group(1)
    return bounds


def check_versions(bounds: dict[str, str] | None = None) -> None:
    """Raise ImportError if an installed package in ``bounds`` (default ``lower_bounds()``) is
    older than its bound; a package that is not installed is left to its import to report."""
    bounds = lower_bounds() if bounds is None else bounds
    old = []
    for package, minimum in bounds.items():
        try:
            installed = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            continue
        if _version_tuple(installed) < _version_tuple(minimum):
            old.append((package, installed, minimum))
    if old:
        found = ", ".join(f"{package} {installed} (den needs >= {minimum})"
                          for package, installed, minimum in old)
        upgrade = " ".join(f"'{package}>={minimum}'" for package, _, minimum in old)
        raise ImportError(f"den: too old: {found}. Older versions read some inputs differently without an "
                          f"error. Upgrade them: pip install -U {upgrade}")
