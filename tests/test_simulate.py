"""Image sources (IDX files, bundled digits) and the CNN zoo."""

import gzip

import numpy as np
import pytest

from den.data.sources import DENDataError
from den.simulate.cnn_zoo import (
    binary_labels,
    class_cutoffs,
    cnn_rng,
    sample_architecture,
    save_shard,
    score_shard,
    share_cutoff,
    share_percent,
    simulated_task,
    task_name,
    task_summary,
)
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
    with pytest.raises(ValueError, match=r"kernel: \[5, 2\] has its low end above"):
        sample_architecture(np.random.default_rng(0), {"kernel": (5, 2)})
    with pytest.raises(ValueError, match="unknown range 'kernels'"):
        sample_architecture(np.random.default_rng(0), {"kernels": (2, 3)})
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


SHARES = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
# SVHN's training class counts (digit 0 .. 9): imbalanced, so 0.2 and 0.3 are both closest to cutoff 2
SVHN_COUNTS = [4948, 13861, 10585, 8497, 7458, 6882, 5727, 5595, 5045, 4659]


def _labels(counts, seed=0):
    """Shuffled class ids with ``counts[k]`` images of class k."""
    return np.random.default_rng(seed).permutation(np.repeat(np.arange(len(counts)), counts))


def _share_below(class_ids, cutoffs):
    return np.array([np.mean(class_ids < c) for c in cutoffs])


def test_shares_of_a_10_class_set_give_class_cutoffs_1_to_9():
    balanced = _labels([120] * 10)
    assert class_cutoffs(balanced, SHARES) == list(range(1, 10))
    svhn = _labels(SVHN_COUNTS)
    assert class_cutoffs(svhn, SHARES) == list(range(1, 10))  # distinct tasks, though imbalanced
    assert class_cutoffs(svhn, [0.3]) == [2]  # alone, a share takes its closest cutoff
    assert class_cutoffs(balanced, [0.7, 0.2, 0.5]) == [7, 2, 5]  # in the order of the shares
    digits = load_images("digits", {"source": "sklearn", "name": "digits"})
    assert [share_cutoff(digits, SHARES, p) for p in (10, 30, 90)] == [1, 3, 9]


def test_shares_of_a_100_class_set_are_the_targets_not_hundredths():
    rng = np.random.default_rng(1)
    class_ids = _labels(rng.integers(450, 550, 100))  # CIFAR-100-like: about balanced
    cutoffs = class_cutoffs(class_ids, SHARES)
    assert all(abs(c - 100 * s) <= 2 for c, s in zip(cutoffs, SHARES)), cutoffs
    np.testing.assert_allclose(_share_below(class_ids, cutoffs), SHARES, atol=0.01)
    assert _share_below(class_ids, range(1, 10)).max() < 0.1  # the old class-id cutoffs 1..9


def test_an_imbalanced_62_class_set_gets_shares_close_to_the_targets():
    """EMNIST (byclass, the TFDS default) has 62 classes: 10 digits holding about half of the
    images, then 52 letters of very different sizes."""
    rng = np.random.default_rng(2)
    counts = np.concatenate([rng.integers(3000, 4000, 10), rng.integers(200, 2500, 52)])
    class_ids = _labels(counts)
    cutoffs = class_cutoffs(class_ids, SHARES)
    assert cutoffs == sorted(set(cutoffs)) and 1 <= cutoffs[0] and cutoffs[-1] <= 61
    realized = _share_below(class_ids, cutoffs)
    # no cutoff could do better than half the largest class's share
    assert np.abs(realized - SHARES).max() <= counts.max() / counts.sum() / 2 + 1e-9, realized
    spaced = [round(62 * s) for s in SHARES]  # equally spaced class ids miss the targets badly
    assert np.abs(_share_below(class_ids, spaced) - SHARES).max() > 0.1
    assert class_cutoffs(class_ids, SHARES) == cutoffs  # deterministic


def test_shares_name_tasks_and_bad_shares_are_refused():
    from den.workflow_config import ConfigError, experiments, simulated_datasets

    assert share_percent(0.3) == 30 and task_name("fashion_mnist", 0.07) == "sim-fashion_mnist-p7"
    for bad in (0, 1, 3, 0.125):
        with pytest.raises(ValueError, match="whole percent"):
            share_percent(bad)
    with pytest.raises(ValueError, match="need 10 classes or more"):
        class_cutoffs(np.arange(5), SHARES)
    with pytest.raises(ValueError, match="distinct"):
        class_cutoffs(np.arange(10), [0.3, 0.3])
    config = {"datasets": {}, "image_datasets": {"digits": {"source": "sklearn"}},
              "cnn_zoo": {"images": ["digits"], "cutoffs": [0.1, 0.5]}, "methods": {}, "experiments": {}}
    assert simulated_datasets(config) == ["sim-digits-p10", "sim-digits-p50"]
    config["cnn_zoo"]["cutoffs"] = [1, 2, 3]  # the old class-id cutoffs
    with pytest.raises(ConfigError, match="cnn_zoo.cutoffs"):
        experiments(config)
    config["cnn_zoo"]["cutoffs"] = [0.3, 0.30000001]
    with pytest.raises(ConfigError, match="repeats a positive share"):
        experiments(config)
    # ranges that cannot build a CNN stop the plan, not the zoo's jobs
    config["cnn_zoo"]["cutoffs"] = [0.3]
    for ranges, message in (({"conv_layers": [3, 1]}, r"conv_layers: \[3, 1\] has its low end above"),
                            ({"kernel": [0, 2]}, r"kernel: \[0, 2\] goes below 1"),
                            ({"dense_layers": [0, 2]}, r"dense_layers: \[0, 2\] goes below 1")):
        config["cnn_zoo"]["ranges"] = ranges
        with pytest.raises(ConfigError, match="^cnn_zoo.ranges: " + message):
            experiments(config)
        with pytest.raises(ValueError, match=message):
            sample_architecture(np.random.default_rng(0), ranges)
    config["cnn_zoo"]["ranges"] = {"conv_layers": [0, 0], "pool": [1, 1]}
    experiments(config)


TINY_RANGES = {"conv_layers": (0, 1), "dense_layers": (1, 2), "filters": (2, 3), "units": (2, 4),
               "epochs": (1, 1)}


def _tiny_images(name):
    rng = np.random.default_rng(4)
    y_train, y_test = rng.integers(0, 10, 40), rng.integers(0, 10, 15)
    x = lambda n: rng.uniform(0, 1, (n, 4, 4, 1)).astype(np.float32)  # noqa: E731
    return ImageData(name, x(40), y_train, x(15), y_test)


def test_image_sets_get_different_architectures_for_the_same_cutoff_and_cnn():
    archs = {name: tuple(sample_architecture(cnn_rng(7, name, 3, i)) for i in range(6))
             for name in ("mnist", "kmnist", "cifar10")}
    assert len(set(archs.values())) == 3  # the paper's ranges: three different zoos
    assert archs["mnist"] == tuple(sample_architecture(cnn_rng(7, "mnist", 3, i)) for i in range(6))
    # the CNNs a shard trains: same pixels and labels, another name, other CNNs
    _, first = score_shard(_tiny_images("mnist"), cutoff=3, cnn_ids=[0, 1, 2], seed=7, ranges=TINY_RANGES)
    _, second = score_shard(_tiny_images("kmnist"), cutoff=3, cnn_ids=[0, 1, 2], seed=7, ranges=TINY_RANGES)
    assert [a["cnn"] for a in first] == [a["cnn"] for a in second] == [0, 1, 2] and first != second


def test_shards_compose_to_the_same_task_whatever_the_shard_size(tmp_path):
    images = _tiny_images("toy")
    cutoff = share_cutoff(images, SHARES, 40)

    def task(shards, label):
        paths = []
        for k, ids in enumerate(shards):
            scores, archs = score_shard(images, cutoff, ids, seed=11, ranges=TINY_RANGES)
            paths.append(tmp_path / f"{label}-{k}.npz")
            save_shard(paths[-1], scores, archs)
        return simulated_task("sim-toy-p40", images, cutoff, paths, target_share=0.4)

    whole, split = task([[0, 1, 2]], "whole"), task([[2], [0, 1]], "split")
    assert whole.feature_names == split.feature_names == ["cnn0", "cnn1", "cnn2"]
    np.testing.assert_allclose(whole.x, split.x, atol=1e-5)
    np.testing.assert_array_equal(whole.y, binary_labels(images.y_test, cutoff))
    meta = whole.metadata
    assert meta["class_cutoff"] == cutoff and meta["target_share"] == 0.4 and meta["images"] == "toy"
    assert meta["train_share"] == round(float(np.mean(images.y_train < cutoff)), 6)
    assert meta["test_share"] == round(float(whole.y.mean()), 6)
    whole.save(tmp_path / "task.npz")
    from den.data.tasks import Task

    assert Task.load(tmp_path / "task.npz").metadata == meta  # saved with the task


def test_task_summary_reports_shares_and_each_cnns_accuracy_and_auc():
    from den.data.tasks import Task
    from den.report.tables import markdown_simulated_tasks

    y = np.array([1, 1, 0, 0, 0])
    x = np.array([[0.9, 0.2, 0.5],     # cnn0 perfect; cnn1 ranks backwards; cnn2 constant 0.5
                  [0.6, 0.1, 0.5],
                  [0.4, 0.8, 0.5],
                  [0.1, 0.7, 0.5],
                  [0.3, 0.9, 0.5]])
    meta = {"images": "toy", "n_classes": 10, "class_cutoff": 4, "target_share": 0.4,
            "train_share": 0.41, "test_share": 0.4}
    summary = task_summary(Task(name="sim-toy-p40", x=x, y=y, feature_names=["cnn0", "cnn1", "cnn2"],
                                classes=["a", "b"], metadata=meta))
    # accuracy at 0.5: cnn0 5/5, cnn1 0/5, cnn2 (all positive) 2/5; AUC 1, 0, 0.5
    assert summary["accuracy_min"] == 0.0 and summary["accuracy_median"] == 0.4
    assert summary["accuracy_max"] == 1.0
    assert (summary["auc_min"], summary["auc_median"], summary["auc_max"]) == (0.0, 0.5, 1.0)
    assert summary["task"] == "sim-toy-p40" and summary["cnns"] == 3 and summary["rows"] == 5
    assert summary["class_cutoff"] == 4 and summary["test_share"] == 0.4
    import pandas as pd

    table = markdown_simulated_tasks(pd.DataFrame([summary]))
    assert ("| sim-toy-p40 | 4 of 10 | 0.40 | 0.410 | 0.400 | 3 | 0.0 / 40.0 / 100.0 | "
            "0.0 / 50.0 / 100.0 |") in table


def test_the_cnn_zoo_report_is_a_target_where_an_experiment_uses_a_simulated_task():
    from den.workflow_config import simulated_report_targets

    config = {"datasets": {"g": {"source": "synthetic"}, "h": {"source": "synthetic"}},
              "image_datasets": {"digits": {"source": "sklearn", "name": "digits"}},
              "cnn_zoo": {"images": ["digits"], "cutoffs": [0.3, 0.6]},
              "methods": {"lr": {"kind": "direct", "model": "logistic_regression"}},
              "experiments": {"t": {"datasets": ["g", "h"], "methods": ["lr"]}}}
    assert simulated_report_targets(config) == []
    config["experiments"]["t"]["datasets"] = ["g", "sim-digits-p30"]
    assert simulated_report_targets(config) == ["results/tables/simulated_tasks.md"]
    config["experiments"]["t"] |= {"datasets": ["g", "h"], "pretrain_on": ["simulated"]}
    assert simulated_report_targets(config) == ["results/tables/simulated_tasks.md"]
