"""den's check of the installed library versions against its declared lower bounds."""

import importlib.metadata
import tomllib
from pathlib import Path

import pytest

from den import _dependencies
from den._dependencies import _version_tuple, check_versions, lower_bounds

ROOT = Path(__file__).resolve().parents[1]


def test_versions_compare_by_their_release_numbers():
    assert _version_tuple("2.4.5") == (2, 4, 5)
    assert _version_tuple("2.4.5rc1") == (2, 4, 5)
    assert _version_tuple("3.1.0+local.1") == (3, 1, 0)
    assert _version_tuple("1.26.4") < _version_tuple("2.4.5") < _version_tuple("2.10")
    assert _version_tuple("3.1") <= _version_tuple("3.1.0")


def test_lower_bounds_read_the_declared_ge_bounds_of_the_checked_packages():
    requirements = ["tensorflow~=2.21.0", "pandas<4,>=3.1", "numpy>=2.4.5,<3", "scikit_learn>=1.8",
                    "pyyaml>=6", "pytest>=8; extra == 'test'"]
    assert lower_bounds(requirements) == {"pandas": "3.1", "numpy": "2.4.5", "scikit-learn": "1.8"}


def test_the_bounds_are_pyprojects_and_this_environment_meets_them():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    bounds = lower_bounds(declared)
    assert set(bounds) == set(_dependencies.CHECKED)
    check_versions(bounds)  # the test environment itself is new enough
    installed = lower_bounds()  # the installed package's metadata, where it is installed
    assert installed in ({}, bounds)


def test_an_old_pandas_is_refused_with_the_versions_and_the_fix(monkeypatch):
    real_version = importlib.metadata.version

    def version(package):
        return "2.3.3" if package == "pandas" else real_version(package)

    monkeypatch.setattr(importlib.metadata, "version", version)
    with pytest.raises(ImportError) as caught:
        check_versions({"pandas": "3.1", "numpy": "2.4.5"})
    message = str(caught.value)
    assert "pandas 2.3.3 (den needs >= 3.1)" in message
    assert "pip install -U 'pandas>=3.1'" in message
    assert "numpy" not in message  # only the old one is named


def test_a_package_that_is_not_installed_is_left_to_its_import():
    check_versions({"no-such-package-den-test": "1.0"})
