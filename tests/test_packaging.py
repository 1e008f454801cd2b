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


def test_the_source_distribution_holds_every_tracked_file(tmp_path):
    """The sdist is the whole project (MANIFEST.in): the workflow, configs, docs, tests with
    their helpers, and the licence, so that it runs its workflow and its tests."""
    import shutil
    import subprocess
    import sys
    import tarfile

    import pytest

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: no list of tracked files to compare with")
    tracked = set(subprocess.run(["git", "ls-files"], cwd=ROOT, check=True, capture_output=True,
                                 text=True).stdout.split())
    # (a file deleted but not yet committed is not there; .gitignore is git's, not the project's)
    tracked = {name for name in tracked if (ROOT / name).is_file() and name != ".gitignore"}
    # build_sdist writes its egg-info beside the package: build from a copy of the tracked files
    source = tmp_path / "source"
    for name in tracked:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    out = tmp_path / "dist"
    build = ("import sys; from setuptools.build_meta import build_sdist; "
             "print(build_sdist(sys.argv[1]))")
    done = subprocess.run([sys.executable, "-c", build, str(out)], cwd=source, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    with tarfile.open(out / done.stdout.split()[-1]) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    missing = sorted(tracked - names)
    assert not missing, f"tracked files missing from the sdist (add them to MANIFEST.in): {missing}"
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]
