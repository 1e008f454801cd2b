"""DEN learns for real: pre-training on generated tasks transfers to unseen tasks.

The generated tasks (den.data.synthetic) are Gaussian class-conditional distributions seen
through random monotone distortions of each feature, the setting of section 4.3.
"""

import numpy as np
import pytest

from den.data.synthetic import make_task, make_tasks
from den.model.config import ModelConfig
from den.model.task_model import TaskModel
from den.train.finetune import FinetuneConfig, finetune
from den.train.pretrain import PretrainConfig, pretrain

from helpers import auc, split

TRAIN = PretrainConfig(steps=600, query_rows=128, support_rows=128, support_rows_min=25, seed=0)


@pytest.fixture(scope="module")
def binary_training_tasks():
    # 2..10 features per task; the held-out tasks below have 13.
    return make_tasks(40, seed=1, features=(2, 10), rows=(400, 800), strength=1.0)


def _held_out(seed, n_classes=2, **kwargs):
    task = make_task(f"held_out_{seed}", 1050, 13 if n_classes == 2 else 8, n_classes, seed=seed,
                     strength=2.0, **kwargs)
    return split(task, 50 if n_classes == 2 else 60)


def test_den_transfers_to_a_wider_strongly_distorted_task_and_beats_den_without_calibration(
        binary_training_tasks):
    """DEN = quantile keypoints + PLFs fine-tuned on 50 rows; the comparison is DEN without a
    calibration block (features only scaled min-max onto [0, 1]). Stated AUC: >= 0.85."""
    den = pretrain(binary_training_tasks, ModelConfig(keypoint_placement="quantile"), TRAIN,
                   progress=None)
    no_calibration = pretrain(binary_training_tasks, ModelConfig(use_calibration=False), TRAIN,
                              progress=None)
    with_calibration, without = [], []
    for seed in (100, 101, 102, 103):
        (xs, ys), (xq, yq) = _held_out(seed)
        tm = TaskModel(den, xs, ys, x_unlabeled=xq)
        finetune(tm, FinetuneConfig(seed=seed))
        with_calibration.append(auc(yq, tm.predict_logits(xq)))
        without.append(auc(yq, TaskModel(no_calibration, xs, ys, x_unlabeled=xq).predict_logits(xq)))
    assert np.mean(with_calibration) >= 0.85, with_calibration
    assert np.mean(with_calibration) >= np.mean(without) + 0.03, (with_calibration, without)


def test_multiclass_head_predicts_unseen_numbers_of_classes():
    """Pre-trained on 2-4 class tasks; 3- and 5-class held-out tasks, 60 support rows."""
    tasks = make_tasks(40, seed=2, features=(2, 10), classes=(2, 4), rows=(400, 800), strength=1.0,
                       separation=2.0)
    model = pretrain(tasks, ModelConfig(head="multiclass", max_classes=6, keypoint_placement="quantile"),
                     TRAIN, progress=None)
    for n_classes, stated in ((3, 0.55), (5, 0.35)):
        accuracies = []
        for seed in (200, 201):
            (xs, ys), (xq, yq) = _held_out(seed, n_classes, separation=2.0)
            tm = TaskModel(model, xs, ys, n_classes, x_unlabeled=xq)
            finetune(tm, FinetuneConfig(seed=seed))
            accuracies.append(float(np.mean(tm.predict_proba(xq).argmax(axis=1) == yq)))
        chance = 1.0 / n_classes
        assert np.mean(accuracies) >= stated >= 1.5 * chance, (n_classes, accuracies)


def test_mirrored_covariates_teach_den_to_read_feature_direction():
    """Training tasks whose every feature rises with the positive class (like CNN scores);
    held-out tasks with features of random direction. With flip_rate 0.5 DEN reads each
    feature's direction from the class-conditional embedding (without: about chance)."""
    from den.data.tasks import Task

    rng = np.random.default_rng(0)
    tasks = []
    for i in range(30):
        n, d = 600, int(rng.integers(3, 10))
        y = rng.integers(0, 2, n)
        x = rng.normal(size=(n, d)) + y[:, None] * rng.uniform(0.3, 1.5, d)
        tasks.append(Task(f"rising{i}", x.astype(np.float32), y))
    config = PretrainConfig(steps=600, query_rows=128, support_rows=128, support_rows_min=25, flip_rate=0.5)
    model = pretrain(tasks, ModelConfig(keypoint_placement="quantile"), config, progress=None)
    aucs = []
    for seed in (300, 301, 302, 303):
        task = make_task("random_direction", 1050, 8, seed=seed, strength=1.0)
        (xs, ys), (xq, yq) = split(task)
        aucs.append(auc(yq, TaskModel(model, xs, ys, x_unlabeled=xq).predict_logits(xq)))
    assert np.mean(aucs) >= 0.8, aucs
