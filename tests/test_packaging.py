"""pyproject.toml and environment.yml list the same packages."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _name(spec: str) -> str:
    return re.split(r"[<>=~!\s\[]", spec.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_pyproject_and_environment_list_the_same_packages():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pip_specs = project["dependencies"] + project["optional-dependencies"]["test"]
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda_specs = []
    for entry in env["dependencies"]:
        if isinstance(entry, dict):
            conda_specs += entry["pip"]
        else:
            conda_specs.append(entry.replace("=", "==", 1) if re.match(r"^[\w-]+=[^=]", entry) else entry)
    conda = {_name(s): s for s in conda_specs if _name(s) not in {"python", "pip"}}
    pip = {_name(s): s for s in pip_specs}
    assert set(conda) == set(pip)
    for name, spec in pip.items():  # the same version constraints too
        assert re.sub(r"\s", "", spec[len(name):]) == re.sub(r"\s", "", conda[name][len(name):]), name


def test_the_shipped_model_is_package_data():
    """A non-editable install carries den/pretrained/den-binary-*.npz (DENClassifier()'s models)."""
    import tomllib
    from fnmatch import fnmatch

    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    patterns = setuptools["package-data"]["den"]
    for name in ("den-binary-no-plf.npz", "den-binary-plf.npz"):
        assert (ROOT / "workflow" / "den" / "pretrained" / name).is_file()
        assert any(fnmatch(f"pretrained/{name}", pattern) for pattern in patterns)
