"""The structural prior of pre-training tasks (den.data.prior)."""

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import roc_auc_score

from den.data.prior import MECHANISMS, make_prior_task, make_prior_tasks


def test_a_seed_gives_the_same_task_and_every_class_has_rows():
    a = make_prior_task("a", 300, 6, 3, seed=5)
    b = make_prior_task("a", 300, 6, 3, seed=5)
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_array_equal(a.y, b.y)
    assert a.x.shape == (300, 6) and a.x.dtype == np.float32
    assert set(np.unique(a.y)) == {0, 1, 2}
    assert not np.array_equal(make_prior_task("a", 300, 6, 3, seed=6).y, a.y)


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_labels_are_learnable_from_the_features(mechanism):
    """Each mechanism's labels follow from the features: a forest trained on half of the
    rows ranks the other half well above chance, averaged over a few tasks."""
    aucs = []
    for seed in range(4):
        task = make_prior_task("t", 1200, 5, seed=seed, mechanism=mechanism, missing_rate=0.0)
        x, y = task.x, task.y
        forest = RandomForestClassifier(100, random_state=0).fit(x[:600], y[:600])
        aucs.append(roc_auc_score(y[600:], forest.predict_proba(x[600:])[:, 1]))
    assert np.mean(aucs) > 0.7


def test_make_prior_tasks_draws_sizes_in_range_and_names_them():
    tasks = make_prior_tasks(6, seed=1, rows=(100, 150), features=(2, 4), classes=(2, 3))
    assert [t.name for t in tasks] == [f"prior-{i:04d}" for i in range(6)]
    assert all(100 <= t.n_rows <= 150 and 2 <= t.n_features <= 4 and t.n_classes in (2, 3) for t in tasks)
    shares = [t.y.mean() for t in tasks if t.n_classes == 2]
    assert all(0.02 < s < 0.98 for s in shares)
    with pytest.raises(ValueError, match="mechanism"):
        make_prior_task("t", 100, 3, seed=0, mechanism="nope")
