"""Dataset sources and preprocessing (no network: openml is replaced by a local fake)."""

import gzip

import numpy as np
import pandas as pd
import pytest

from den.data.sources import DENDataError, load_tabular
from den.data.tasks import Task


def test_csv_with_separator_missing_markers_categories_and_gzip(tmp_path):
    path = tmp_path / "data.csv.gz"
    text = "a;b;colour;flag;const;label\n1.5;?;red;true;7;yes\n2.5;3;blue;false;7;no\n?;4;red;true;7;yes\n"
    with gzip.open(path, "wt") as handle:
        handle.write(text)
    task = load_tabular("mine", {"source": "csv", "path": str(path), "target": "label", "sep": ";",
                                 "na_values": ["?"]})
    assert task.feature_names == ["a", "b", "colour", "flag"]  # constant column dropped
    assert np.isnan(task.x[0, 1]) and np.isnan(task.x[2, 0])
    assert task.x[:, 2].tolist() == [1.0, 0.0, 1.0]  # categories in sorted order: blue, red
    assert task.x[:, 3].tolist() == [1.0, 0.0, 1.0]
    assert task.classes == ["no", "yes"] and task.y.tolist() == [1, 0, 1]


def test_csv_errors_name_dataset_and_file(tmp_path):
    with pytest.raises(DENDataError, match="dataset 'x' \\(csv\\).*does not exist"):
        load_tabular("x", {"source": "csv", "path": str(tmp_path / "nope.csv")})
    (tmp_path / "t.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="no column 'target'"):
        load_tabular("x", {"source": "csv", "path": str(tmp_path / "t.csv")})
    with pytest.raises(DENDataError, match="source must be one of"):
        load_tabular("x", {"source": "ftp"})


def test_sklearn_and_synthetic_sources():
    wine = load_tabular("wine", {"source": "sklearn"})
    assert wine.x.shape == (178, 13) and wine.n_classes == 3
    task = load_tabular("gen", {"source": "synthetic", "rows": 120, "features": 4, "classes": 3, "seed": 1})
    again = load_tabular("gen", {"source": "synthetic", "rows": 120, "features": 4, "classes": 3, "seed": 1})
    assert task.x.shape == (120, 4) and np.array_equal(task.x, again.x)


def test_openml_source_preprocesses_and_retries(monkeypatch, tmp_path):
    import openml

    calls = []

    class FakeDataset:
        default_target_attribute = "class"

        def get_data(self, target, dataset_format):
            assert target == "class"
            x = pd.DataFrame({"num": [1.0, 2.0, np.nan, 4.0], "cat": pd.Categorical(["a", "b", "a", "b"])})
            return x, pd.Series(pd.Categorical(["p", "n", "p", "n"])), None, None

    def get_dataset(dataset_id, **kwargs):
        calls.append(dataset_id)
        if len(calls) == 1:
            raise ConnectionError("temporary failure")
        return FakeDataset()

    monkeypatch.setattr(openml.datasets, "get_dataset", get_dataset)
    monkeypatch.setattr("den.data.sources.time.sleep", lambda s: None)
    task = load_tabular("kc1", {"source": "openml", "id": 1067}, cache_dir=tmp_path)
    assert calls == [1067, 1067]
    assert task.x.shape == (4, 2) and task.classes == ["n", "p"]

    def always_down(dataset_id, **kwargs):
        raise ConnectionError("no route to host")

    monkeypatch.setattr(openml.datasets, "get_dataset", always_down)
    with pytest.raises(DENDataError, match="dataset 'kc1'.*OpenML dataset 1067.*3 attempts.*no route"):
        load_tabular("kc1", {"source": "openml", "id": 1067}, cache_dir=tmp_path)


def test_task_file_round_trip(tmp_path):
    task = Task("t", np.array([[1.0, np.nan], [2.0, 3.0]]), np.array([0, 1]), ["a", "b"], ["no", "yes"])
    task.save(tmp_path / "t.npz")
    back = Task.load(tmp_path / "t.npz")
    assert back.name == "t" and back.feature_names == ["a", "b"] and back.classes == ["no", "yes"]
    np.testing.assert_array_equal(back.x, task.x)
    np.testing.assert_array_equal(back.y, task.y)
