"""Image sources (IDX files, bundled digits) and the CNN zoo."""

import gzip

import numpy as np
import pytest

from den.data.sources import DENDataError
from den.simulate.cnn_zoo import binary_labels, sample_architecture, score_shard
from den.simulate.images import IDX_FILES, ImageData, load_images, read_idx


def _write_idx(path, array, gz):
    codes = {np.dtype(np.uint8): 0x08}
    header = bytes([0, 0, codes[array.dtype], array.ndim]) + b"".join(
        int(n).to_bytes(4, "big") for n in array.shape)
    opener = gzip.open if gz else open
    with opener(path, "wb") as handle:
        handle.write(header + array.tobytes())


@pytest.mark.parametrize("gz", [True, False])
def test_idx_directory_in_the_mnist_format(tmp_path, gz):
    rng = np.random.default_rng(0)
    arrays = {"train_images": rng.integers(0, 256, (12, 6, 6), dtype=np.uint8),
              "train_labels": rng.integers(0, 10, 12, dtype=np.uint8),
              "test_images": rng.integers(0, 256, (5, 6, 6), dtype=np.uint8),
              "test_labels": rng.integers(0, 10, 5, dtype=np.uint8)}
    for key, stem in IDX_FILES.items():
        _write_idx(tmp_path / (stem + (".gz" if gz else "")), arrays[key], gz)
    images = load_images("tiny", {"source": "idx", "path": str(tmp_path)})
    assert images.x_train.shape == (12, 6, 6, 1) and images.x_test.shape == (5, 6, 6, 1)
    np.testing.assert_allclose(images.x_train[..., 0], arrays["train_images"] / 255.0, atol=1e-6)
    np.testing.assert_array_equal(images.y_test, arrays["test_labels"])


def test_idx_errors(tmp_path):
    bad = tmp_path / "x.idx"
    bad.write_bytes(b"\x01\x02\x03\x04")
    with pytest.raises(DENDataError, match="bad magic"):
        read_idx(bad)
    with pytest.raises(DENDataError, match="does not exist"):
        load_images("m", {"source": "idx", "path": str(tmp_path / "none")})


def test_bundled_digits_split():
    images = load_images("digits", {"source": "sklearn", "name": "digits"})
    assert images.x_train.shape[1:] == (8, 8, 1) and len(images.x_train) + len(images.x_test) == 1797
    assert 0.0 <= images.x_train.min() and images.x_train.max() <= 1.0 and images.n_classes == 10


def test_architectures_follow_the_ranges_and_the_seed():
    ranges = {"filters": (2, 4), "epochs": (1, 1)}
    archs = [sample_architecture(np.random.default_rng([1, i]), ranges) for i in range(50)]
    assert all(2 <= a.filters <= 4 and a.epochs == 1 and 0 <= a.conv_layers <= 3 for a in archs)
    assert archs[3] == sample_architecture(np.random.default_rng([1, 3]), ranges)
    with pytest.raises(ValueError, match="'kernel'"):
        sample_architecture(np.random.default_rng(0), {"kernel": (5, 2)})
    assert binary_labels(np.arange(10), 3).tolist() == [1, 1, 1, 0, 0, 0, 0, 0, 0, 0]


def test_cnn_scores_separate_the_classes():
    rng = np.random.default_rng(0)
    y_train, y_test = rng.integers(0, 4, 300), rng.integers(0, 4, 100)

    def draw(y):  # class < 2 images are bright in the top half
        x = rng.uniform(0, 0.3, (len(y), 6, 6, 1)).astype(np.float32)
        x[y < 2, :3] += 0.6
        return x

    images = ImageData("toy", draw(y_train), y_train, draw(y_test), y_test)
    ranges = {"conv_layers": (0, 1), "dense_layers": (1, 2), "filters": (2, 4), "units": (4, 8),
              "epochs": (40, 40)}
    scores, archs = score_shard(images, cutoff=2, cnn_ids=[0, 1], seed=3, ranges=ranges)
    assert scores.shape == (100, 2) and [a["cnn"] for a in archs] == [0, 1]
    from sklearn.metrics import roc_auc_score

    aucs = [roc_auc_score(y_test < 2, scores[:, j]) for j in range(2)]
    assert min(aucs) > 0.6 and max(aucs) > 0.95, aucs  # weak and strong CNNs, all learned something
    again, _ = score_shard(images, cutoff=2, cnn_ids=[1], seed=3, ranges=ranges)
    np.testing.assert_allclose(again[:, 0], scores[:, 1], atol=1e-5)  # a shard is reproducible alone


def test_tfds_source_reads_a_prepared_dataset_offline(tmp_path):
    """A dataset written in tensorflow-datasets' own on-disk format (dataset_info.json, features,
    TFRecord shards) under the cache directory is loaded without any download."""
    import tensorflow_datasets as tfds

    from den._tf import tf

    rng = np.random.default_rng(0)
    arrays = {s: (rng.integers(0, 256, (n, 28, 28, 1), dtype=np.uint8), rng.integers(0, 10, n))
              for s, n in (("train", 12), ("test", 5))}
    features = tfds.features.FeaturesDict({"image": tfds.features.Image(shape=(28, 28, 1)),
                                           "label": tfds.features.ClassLabel(num_classes=10)})
    splits = {s: tf.data.Dataset.from_tensor_slices({"image": x, "label": y})
              for s, (x, y) in arrays.items()}
    tfds.dataset_builders.store_as_tfds_dataset(
        name="mnist", version=str(tfds.builder_cls("mnist").VERSION), features=features,
        split_datasets=splits, data_dir=str(tmp_path / "tfds"), disable_shuffling=True)
    images = load_images("mnist", {"source": "tfds", "name": "mnist", "attempts": 1}, cache_dir=tmp_path)
    assert images.x_train.shape == (12, 28, 28, 1) and images.x_test.shape == (5, 28, 28, 1)
    np.testing.assert_allclose(images.x_test, arrays["test"][0] / 255.0, atol=1e-6)
    np.testing.assert_array_equal(images.y_train, arrays["train"][1])
