"""Shared fixtures: small generated tasks and small pre-trained models (seconds to build)."""

import numpy as np
import pandas as pd
import pytest

from den.data.synthetic import make_task, make_tasks
from den.model.config import ModelConfig
from den.train.pretrain import PretrainConfig, pretrain

from helpers import SMALL


@pytest.fixture(scope="session")
def binary_tasks():
    return make_tasks(6, seed=11, rows=(120, 200), features=(2, 6))


@pytest.fixture(scope="session")
def small_binary_model(binary_tasks):
    config = PretrainConfig(steps=40, query_rows=32, support_rows=32, seed=1)
    return pretrain(binary_tasks, ModelConfig(**SMALL), config, progress=None)


@pytest.fixture(scope="session")
def small_multiclass_model():
    tasks = make_tasks(6, seed=12, rows=(150, 200), features=(2, 6), classes=(2, 4))
    config = PretrainConfig(steps=40, query_rows=32, support_rows=32, seed=1)
    return pretrain(tasks, ModelConfig(head="multiclass", max_classes=6, **SMALL), config,
                    progress=None)


@pytest.fixture()
def binary_task():
    """A held-out binary task: 50 support rows then 250 query rows."""
    return make_task("held_out", 300, 5, seed=99)


@pytest.fixture()
def rng():
    return np.random.default_rng(0)


@pytest.fixture()
def csv_tasks(tmp_path):
    """Three small binary tasks as CSV files (label column `target`, "yes"/"no") in tmp_path/tasks."""
    directory = tmp_path / "tasks"
    directory.mkdir()
    for task in make_tasks(3, seed=5, rows=(80, 120), features=(2, 4)):
        frame = pd.DataFrame(task.x, columns=[f"c{j}" for j in range(task.n_features)])
        frame["target"] = np.where(task.y == 1, "yes", "no")
        frame.to_csv(directory / f"{task.name}.csv", index=False)
    return directory
