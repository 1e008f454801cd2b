"""Image datasets for the CNN zoo: ``load_images(name, spec, cache_dir) -> ImageData``.

    sklearn  {source: sklearn, name: digits}          8x8 digits, bundled (no network)
    idx      {source: idx, path: dir}                 MNIST-format files, gzip or not
    tfds     {source: tfds, name: mnist}              tensorflow-datasets, cached in cache_dir

Images are float32 in [0, 1] with a channel axis: (n, height, width, channels).
"""

from __future__ import annotations

import dataclasses
import gzip
from pathlib import Path

import numpy as np

from den.data.sources import DENDataError, retry

IMAGE_SOURCES = ("sklearn", "idx", "tfds")
IDX_FILES = {"train_images": "train-images-idx3-ubyte", "train_labels": "train-labels-idx1-ubyte",
             "test_images": "t10k-images-idx3-ubyte", "test_labels": "t10k-labels-idx1-ubyte"}


@dataclasses.dataclass
class ImageData:
    """A train/test split of labelled images.

    Attributes:
        x_train, x_test: (n, h, w, c) float32 in [0, 1].
        y_train, y_test: (n,) int class ids 0..L-1.
    """

    name: str
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray

    @property
    def n_classes(self) -> int:
        return int(max(self.y_train.max(), self.y_test.max())) + 1

    def save(self, path) -> None:
        """One ``.npz`` file (atomic)."""
        from den.io import atomic_write

        with atomic_write(path) as handle:
            np.savez(handle, x_train=self.x_train, y_train=self.y_train, x_test=self.x_test,
                     y_test=self.y_test, name=np.array(self.name))

    @classmethod
    def load(cls, path) -> ImageData:
        with np.load(path, allow_pickle=False) as data:
            return cls(str(data["name"]), data["x_train"], data["y_train"], data["x_test"], data["y_test"])


def read_idx(path: str | Path) -> np.ndarray:
    """Read one IDX file (the MNIST format: magic, dims, big-endian data), gzip or not."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as handle:
        data = handle.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0:
        raise DENDataError(f"{str(path)!r} is not an IDX file (bad magic number)")
    dtypes = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}
    if data[2] not in dtypes:
        raise DENDataError(f"{str(path)!r}: unknown IDX element type 0x{data[2]:02x}")
    ndim = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim))
    array = np.frombuffer(data, dtype=dtypes[data[2]], offset=4 + 4 * ndim)
    if array.size != int(np.prod(shape)):
        raise DENDataError(f"{str(path)!r}: header says {shape} but holds {array.size} values")
    return array.reshape(shape)


def _candidates(directory: Path, stem: str) -> tuple[Path, Path]:
    """Where an IDX file may lie, in the order they are tried: gzipped, then plain."""
    return directory / f"{stem}.gz", directory / stem


def _find(directory: Path, stem: str) -> Path:
    for candidate in _candidates(directory, stem):
        if candidate.is_file():
            return candidate
    raise DENDataError(f"{str(directory)!r} has no {stem}(.gz)")


def local_files(spec: dict) -> list[str]:
    """The local files that loading ``spec`` reads, for the workflow to declare as inputs: an
    idx entry's four files, each the one ``_idx`` would read (gzipped if present, else plain;
    a missing one is named plain, so a dry run reports it). sklearn and tfds entries read none
    (bundled, or fetched into the cache)."""
    if spec.get("source") != "idx" or not spec.get("path"):
        return []
    files = []
    for stem in IDX_FILES.values():
        gzipped, plain = _candidates(Path(spec["path"]), stem)
        files.append(str(gzipped if gzipped.is_file() else plain))
    return files


def _idx(name: str, spec: dict) -> ImageData:
    directory = Path(spec.get("path", ""))
    if not directory.is_dir():
        raise DENDataError(f"image dataset {name!r} (idx): directory {str(directory)!r} does not exist")
    parts = {key: read_idx(_find(directory, stem)) for key, stem in IDX_FILES.items()}
    scale = lambda images: (images.astype(np.float32) / 255.0)[..., None]  # noqa: E731
    return ImageData(name, scale(parts["train_images"]), parts["train_labels"].astype(np.int64),
                     scale(parts["test_images"]), parts["test_labels"].astype(np.int64))


def _sklearn(name: str, spec: dict) -> ImageData:
    from sklearn.datasets import load_digits

    if spec.get("name", "digits") != "digits":
        raise DENDataError(f"image dataset {name!r}: the only bundled image set is 'digits'")
    digits = load_digits()
    x = (digits.images.astype(np.float32) / 16.0)[..., None]
    order = np.random.default_rng(0).permutation(len(x))  # a fixed split: 2/3 train, 1/3 test
    cut = 2 * len(x) // 3
    train, test = order[:cut], order[cut:]
    return ImageData(name, x[train], digits.target[train], x[test], digits.target[test])


def _tfds(name: str, spec: dict, cache_dir: Path) -> ImageData:
    def fetch():
        import tensorflow_datasets as tfds

        splits = tfds.load(spec.get("name", name), split=["train", "test"], as_supervised=True,
                           batch_size=-1, data_dir=str(cache_dir / "tfds"))
        return [tfds.as_numpy(s) for s in splits]

    (x_train, y_train), (x_test, y_test) = retry(
        fetch, f"image dataset {name!r}: loading {spec.get('name', name)!r} from tensorflow-datasets",
        attempts=int(spec.get("attempts", 2)))
    scale = lambda images: images.astype(np.float32) / 255.0  # noqa: E731
    return ImageData(name, scale(x_train), y_train.astype(np.int64), scale(x_test), y_test.astype(np.int64))


def load_images(name: str, spec: dict, cache_dir: str | Path = "resources") -> ImageData:
    """Load an image dataset described by ``spec`` (see the module docstring)."""
    source = spec.get("source")
    if source == "sklearn":
        return _sklearn(name, spec)
    if source == "idx":
        return _idx(name, spec)
    if source == "tfds":
        return _tfds(name, spec, Path(cache_dir))
    raise DENDataError(f"image dataset {name!r}: source must be one of {IMAGE_SOURCES}, got {source!r}")
