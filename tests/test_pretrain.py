"""Pre-training: episodes, checkpoint/resume, bad tasks."""

import dataclasses

import numpy as np
import pytest

from den.data.synthetic import make_tasks
from den.data.tasks import Task, binary_cuts, one_vs_rest_cuts
from den.errors import DENError, DENInputError
from den.model.config import ModelConfig
from den.train.episodes import halve_support, split_rows
from den.train.pretrain import PretrainConfig, pretrain

from helpers import SMALL


def test_split_rows_is_disjoint_and_covers_every_class():
    y = np.r_[np.zeros(95, int), np.ones(5, int)]
    rng = np.random.default_rng(0)
    for _ in range(20):
        support, query = split_rows(y, 8, 30, rng)
        assert len(support) == 8 and len(query) == 30
        assert not set(support) & set(query)
        assert set(y[support]) == {0, 1}
    support, query = split_rows(y[:10], 256, 256, rng)  # small task: sizes shrink
    assert len(support) + len(query) == 10 and not set(support) & set(query)


def test_halve_support_is_stratified():
    y = np.r_[np.zeros(40, int), np.ones(10, int)]
    a, b = halve_support(y, np.random.default_rng(1))
    assert sorted(np.r_[a, b].tolist()) == list(range(50))
    assert set(y[a]) == set(y[b]) == {0, 1}


def test_resumed_run_matches_an_uninterrupted_one(tmp_path):
    tasks = make_tasks(3, seed=2, rows=(60, 80), features=(2, 4))
    model_config = ModelConfig(**SMALL)
    settings = dict(query_rows=16, support_rows=16, checkpoint_every=5, seed=4)
    first = pretrain(tasks, model_config, PretrainConfig(steps=10, **settings),
                     checkpoint_dir=tmp_path / "ckpt", progress=None)
    assert first.metadata["pretrained_on"] == [t.name for t in tasks]
    resumed = pretrain(tasks, model_config, PretrainConfig(steps=20, **settings),
                       checkpoint_dir=tmp_path / "ckpt", progress=None)
    straight = pretrain(tasks, model_config, PretrainConfig(steps=20, **settings), progress=None)
    a, b = resumed.network.weights_dict(), straight.network.weights_dict()
    for key in a:
        np.testing.assert_allclose(a[key], b[key], atol=1e-5, err_msg=key)
    assert not np.allclose(a["den/h_z"], first.network.weights_dict()["den/h_z"])


def test_checkpoint_of_another_run_is_refused(tmp_path):
    tasks = make_tasks(2, seed=2, rows=(60, 80), features=(2, 4))
    config = PretrainConfig(steps=2, query_rows=8, support_rows=8)
    pretrain(tasks, ModelConfig(**SMALL), config, checkpoint_dir=tmp_path, progress=None)
    gone = tasks[1].name
    with pytest.raises(DENError, match=rf"holds a pre-training run with other tasks \(task '{gone}' gone\); "
                                       r"delete it or choose another directory to start over "
                                       r"\(restart_other_run=True"):
        pretrain(tasks[:1], ModelConfig(**SMALL), config, checkpoint_dir=tmp_path, progress=None)
    # a task with a row less is named with both counts
    from den.data.tasks import Task

    shorter = [tasks[0], Task(tasks[1].name, tasks[1].x[:-1], tasks[1].y[:-1])]
    with pytest.raises(DENError, match=rf"other tasks \(task '{gone}': {tasks[1].n_rows} rows there, "
                                       rf"{tasks[1].n_rows - 1} here\)"):
        pretrain(shorter, ModelConfig(**SMALL), config, checkpoint_dir=tmp_path, progress=None)
    faster = PretrainConfig(steps=2, query_rows=8, support_rows=8, learning_rate=0.01)
    with pytest.raises(DENError, match=r"with other settings \(order 2 there, 3 here; learning_rate 0.001 "
                                       r"there, 0.01 here\)"):
        pretrain(tasks, ModelConfig(**{**SMALL, "order": 3}), faster, checkpoint_dir=tmp_path, progress=None)


def test_a_checkpoint_directory_in_use_by_another_run_is_refused_at_once(tmp_path):
    """Two runs on one checkpoint directory (another terminal, a requeued job) would each save
    checkpoints that the other's checkpoint manager deletes: the second stops before any step,
    naming the process that holds it; once that run ends, the directory is free again."""
    import os
    import socket
    import threading

    from den.train import pretrain as module

    tasks = make_tasks(2, seed=2, rows=(60, 80), features=(2, 4))
    config = PretrainConfig(steps=2, query_rows=8, support_rows=8)
    held, release = threading.Event(), threading.Event()

    def other_run():  # another thread's lock, as another process's (a block within a block of
        with module.checkpoint_lock(tmp_path / "ck"):  # one thread is let in: den pretrain's save)
            held.set()
            release.wait(timeout=60)

    holder = threading.Thread(target=other_run, daemon=True)
    holder.start()
    assert held.wait(timeout=60)
    try:
        in_use = (rf"is in use by another pre-training run \(process {socket.gethostname()}:{os.getpid()}\): "
                  "wait for it to end")
        with pytest.raises(DENError, match=in_use):
            pretrain(tasks, ModelConfig(**SMALL), config, checkpoint_dir=tmp_path / "ck", progress=None)
    finally:
        release.set()
        holder.join(timeout=60)
    with module.checkpoint_lock(tmp_path / "ck"):  # this thread's own block: pre-training runs in it
        pretrain(tasks, ModelConfig(**SMALL), config, checkpoint_dir=tmp_path / "ck", progress=None,
                 restart_other_run=True)
        assert (tmp_path / "ck" / module.CHECKPOINT_LOCK).exists()
    pretrain(tasks, ModelConfig(**SMALL), config, checkpoint_dir=tmp_path / "ck", progress=None)
    assert sorted(p.name for p in (tmp_path / "ck").iterdir() if p.name.endswith(".json")) == \
        ["fingerprint.json", "history.json"]
    with pytest.raises(DENInputError):  # refused before any step: no directory of a lock alone
        pretrain(tasks[:1] * 0, ModelConfig(**SMALL), config, checkpoint_dir=tmp_path / "refused",
                 progress=None)
    assert not (tmp_path / "refused").exists()
    with pytest.raises(DENInputError, match="is a file, not a directory"):
        pretrain(tasks, ModelConfig(**SMALL), config, checkpoint_dir=tmp_path / "ck" / "history.json",
                 progress=None)


def test_a_workflow_restarts_over_a_checkpoint_of_another_run(tmp_path):
    """restart_other_run (the workflow's pretrain job, after a run interrupted before its
    settings changed): the stale checkpoint is deleted, a line says so, and the run is the
    one a fresh directory gives, weight for weight."""
    import io

    tasks = make_tasks(2, seed=2, rows=(60, 80), features=(2, 4))
    config = PretrainConfig(steps=2, query_rows=8, support_rows=8)
    pretrain(tasks, ModelConfig(**SMALL), config, checkpoint_dir=tmp_path / "job", progress=None)
    stream = io.StringIO()
    restarted = pretrain(tasks[:1], ModelConfig(**SMALL), config, checkpoint_dir=tmp_path / "job",
                         progress=stream, restart_other_run=True)
    assert f"holds a pre-training run with other tasks (task {tasks[1].name!r} gone): starting over" \
        in stream.getvalue()
    fresh = pretrain(tasks[:1], ModelConfig(**SMALL), config, checkpoint_dir=tmp_path / "new", progress=None)
    for a, b in zip(restarted.network.trainable_variables, fresh.network.trainable_variables, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    # the directory now holds this run's checkpoint: the same call resumes from it, no restart
    stream = io.StringIO()
    pretrain(tasks[:1], ModelConfig(**SMALL), config, checkpoint_dir=tmp_path / "job", progress=stream,
             restart_other_run=True)
    assert "starting over" not in stream.getvalue()
    # fewer steps than the checkpoint has (a long run interrupted, then the default config):
    # the workflow starts over too, as a fresh directory would
    stream = io.StringIO()
    shorter = pretrain(tasks[:1], ModelConfig(**SMALL), dataclasses.replace(config, steps=1),
                       checkpoint_dir=tmp_path / "job", progress=stream, restart_other_run=True)
    assert "is at step 2, past the 1 steps asked for: starting over" in stream.getvalue()
    fresh = pretrain(tasks[:1], ModelConfig(**SMALL), dataclasses.replace(config, steps=1), progress=None)
    for a, b in zip(shorter.network.trainable_variables, fresh.network.trainable_variables, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_a_checkpoint_directory_holding_other_files_is_refused_and_a_restart_deletes_only_checkpoints(
        tmp_path):
    """A directory with files no pre-training run writes (the task files' folder, notes) is
    refused before anything is written there, lock included: a restart over a checkpoint of
    another run used to delete every file in it. The restart itself deletes only checkpoint
    files; the settings that differ are named once (the seed is a model and a run setting)."""
    import io

    from den.train.pretrain import _clear_checkpoint_dir, foreign_checkpoint_entries

    tasks = make_tasks(2, seed=2, rows=(60, 80), features=(2, 4))
    config = PretrainConfig(steps=2, query_rows=8, support_rows=8)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "t0.csv").write_text("a,label\n1,0\n")
    with pytest.raises(DENInputError, match=r"checkpoint directory .*data' holds files that are not a "
                                            r"pre-training run's checkpoints \('t0.csv'\)"):
        pretrain(tasks, ModelConfig(**SMALL), config, checkpoint_dir=tmp_path / "data", progress=None,
                 restart_other_run=True)
    assert [p.name for p in (tmp_path / "data").iterdir()] == ["t0.csv"]  # no lock left either
    pretrain(tasks, ModelConfig(**SMALL), config, checkpoint_dir=tmp_path / "ck", progress=None)
    assert foreign_checkpoint_entries(tmp_path / "ck") == []  # all of a run's files are known
    stream = io.StringIO()
    pretrain(tasks, ModelConfig(**dict(SMALL, seed=1)), dataclasses.replace(config, seed=1),
             checkpoint_dir=tmp_path / "ck", progress=stream, restart_other_run=True)
    assert ("other settings (the model's seed 3 there, 1 here; pre-training's seed 0 there, 1 here): "
            "starting over") in stream.getvalue()
    stream = io.StringIO()
    pretrain(tasks, ModelConfig(**dict(SMALL, seed=2)), dataclasses.replace(config, seed=2),
             checkpoint_dir=tmp_path / "ck", progress=stream, restart_other_run=True)
    assert "other settings (seed 1 there, 2 here): starting over" in stream.getvalue()  # once
    (tmp_path / "ck" / "notes.txt").write_text("mine")
    _clear_checkpoint_dir(tmp_path / "ck")
    assert sorted(p.name for p in (tmp_path / "ck").iterdir()) == [".lock", "notes.txt"]


@pytest.mark.parametrize("settings", [ModelConfig, PretrainConfig])
def test_a_negative_seed_is_a_named_setting_error(settings):
    with pytest.raises(ValueError, match="seed must be >= 0, got -1"):
        settings(seed=-1)


def test_checkpoint_fingerprint_names_one_vs_rest_cuts_only_when_set():
    """Checkpoints written before one_vs_rest_cuts existed have no such key: at 0 the
    fingerprint leaves it out, so they still resume; a run with the cuts differs from one
    without."""
    from den.train.pretrain import _fingerprint

    tasks = make_tasks(1, seed=2, rows=(60, 60), features=(3, 3))
    plain = _fingerprint(tasks, ModelConfig(**SMALL), PretrainConfig())
    assert "one_vs_rest_cuts" not in plain["pretrain"] and "multiclass_cuts" in plain["pretrain"]
    cut = _fingerprint(tasks, ModelConfig(**SMALL), PretrainConfig(one_vs_rest_cuts=2))
    assert cut["pretrain"]["one_vs_rest_cuts"] == 2 and cut != plain


def test_progress_lines():
    import io

    stream = io.StringIO()
    tasks = make_tasks(2, seed=2, rows=(60, 80), features=(2, 4))
    pretrain(tasks, ModelConfig(**SMALL), PretrainConfig(steps=3, query_rows=8, support_rows=8),
             progress=stream)
    last = stream.getvalue().strip().splitlines()[-1]
    assert last.startswith("pretrain 3/3 100%") and "steps/s" in last and "loss" in last


def test_bad_tasks_are_refused():
    one_class = Task("flat", np.zeros((20, 2)), np.zeros(20, int))
    with pytest.raises(DENInputError, match="'flat' has a single class"):
        pretrain([one_class], ModelConfig(**SMALL), PretrainConfig(steps=1), progress=None)
    three = Task("three", np.random.default_rng(0).normal(size=(30, 2)), np.arange(30) % 3)
    with pytest.raises(DENInputError, match="'three' has 3 classes.*multiclass_cuts"):
        pretrain([three], ModelConfig(**SMALL), PretrainConfig(steps=1), progress=None)
    with pytest.raises(ValueError, match="infinite"):
        Task("inf", np.array([[1.0], [np.inf]]), np.array([0, 1]))


def test_ctrl_c_stops_at_a_step_boundary_with_a_checkpoint_of_it(tmp_path, monkeypatch):
    import functools
    import signal

    import den.train.pretrain
    from den.progress import Progress
    from den.train.pretrain import PretrainInterrupted

    class CtrlCAtStep5:
        """A progress stream that sends this process SIGINT when step 5 is reported."""

        def write(self, text):
            if text.startswith("pretrain 5/"):
                signal.raise_signal(signal.SIGINT)

        def flush(self):
            pass

    monkeypatch.setattr(den.train.pretrain, "Progress", functools.partial(Progress, interval_s=0.0))
    tasks = make_tasks(2, seed=2, rows=(60, 80), features=(2, 4))
    model_config = ModelConfig(**SMALL)
    config = PretrainConfig(steps=12, query_rows=8, support_rows=8, checkpoint_every=100)
    # Python's own SIGINT handler, as in `den pretrain` (an earlier test of the suite, or the
    # runner, may have left another one, which pretrain rightly leaves alone)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(PretrainInterrupted) as stop:
            pretrain(tasks, model_config, config, checkpoint_dir=tmp_path, progress=CtrlCAtStep5())
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # handler restored
    finally:
        signal.signal(signal.SIGINT, previous)
    assert (stop.value.step, stop.value.total, stop.value.checkpoint_dir) == (5, 12, tmp_path)
    resumed = pretrain(tasks, model_config, config, checkpoint_dir=tmp_path, progress=None)
    straight = pretrain(tasks, model_config, config, progress=None)
    assert resumed.metadata["loss_curve"] == straight.metadata["loss_curve"]  # the loss window too
    a, b = resumed.network.weights_dict(), straight.network.weights_dict()
    for key in b:
        assert np.array_equal(a[key], b[key]), key


def test_binary_cuts_bipartition_the_classes_reproducibly():
    rng = np.random.default_rng(0)
    five = Task("five", rng.normal(size=(60, 3)), np.arange(60) % 5)
    cuts = binary_cuts(five, 6, seed=4)
    assert [c.name for c in cuts] == [f"five~b{j}" for j in range(6)]
    for cut in cuts:
        assert cut.x is five.x  # shared, not copied
        positive = set(cut.metadata["positive_classes"])
        assert 0 < len(positive) < 5  # a proper bipartition
        assert np.array_equal(cut.y, np.isin(five.y, sorted(positive)).astype(np.int32))
    again = binary_cuts(five, 6, seed=4)
    assert all(np.array_equal(a.y, b.y) for a, b in zip(cuts, again))
    assert len({tuple(c.metadata["positive_classes"]) for c in cuts}) > 1  # not one cut six times
    # a class without rows never leaves a cut with rows on one side only
    gap = Task("gap", rng.normal(size=(40, 2)), np.where(np.arange(40) % 2 == 0, 0, 3))
    for cut in binary_cuts(gap, 20, seed=1):
        assert set(np.unique(cut.y)) == {0, 1}
    with pytest.raises(ValueError, match="more than two"):
        binary_cuts(Task("two", rng.normal(size=(10, 2)), np.arange(10) % 2), 2, seed=0)


def test_binary_head_pretrains_on_cuts_of_multiclass_tasks():
    rng = np.random.default_rng(1)
    three = Task("three", rng.normal(size=(60, 3)), np.arange(60) % 3)
    binary = make_tasks(1, seed=2, rows=(60, 60), features=(3, 3))
    config = PretrainConfig(steps=2, query_rows=16, support_rows=16, multiclass_cuts=2, seed=5)
    model = pretrain([three, *binary], ModelConfig(**SMALL), config, progress=None)
    assert model.metadata["pretrained_on"] == ["three~b0", "three~b1", binary[0].name]
    assert model.metadata["pretrain"]["multiclass_cuts"] == 2
    with pytest.raises(ValueError, match="multiclass_cuts must be >= 0"):
        PretrainConfig(multiclass_cuts=-1)
    # one-against-the-rest cuts come after a task's bipartitions, alone or with them
    config = PretrainConfig(steps=2, query_rows=16, support_rows=16, multiclass_cuts=1,
                            one_vs_rest_cuts=2, seed=5)
    model = pretrain([three, *binary], ModelConfig(**SMALL), config, progress=None)
    assert model.metadata["pretrained_on"] == ["three~b0", "three~r0", "three~r1", binary[0].name]
    config = PretrainConfig(steps=2, query_rows=16, support_rows=16, one_vs_rest_cuts=1, seed=5)
    model = pretrain([three], ModelConfig(**SMALL), config, progress=None)
    assert model.metadata["pretrained_on"] == ["three~r0"]
    with pytest.raises(ValueError, match="one_vs_rest_cuts must be >= 0"):
        PretrainConfig(one_vs_rest_cuts=-1)


def test_one_vs_rest_cuts_take_each_class_in_turn_reproducibly():
    rng = np.random.default_rng(0)
    # classes 0, 1, 3 have rows; 2 has none, so a cut of it would have a single class
    four = Task("four", rng.normal(size=(30, 2)), np.array([0, 1, 3] * 10), classes=[0, 1, 2, 3])
    cuts = one_vs_rest_cuts(four, 5, seed=3)
    assert [c.name for c in cuts] == [f"four~r{j}" for j in range(5)]
    positives = [c.metadata["positive_classes"] for c in cuts]
    assert sorted(p[0] for p in positives[:3]) == [0, 1, 3]  # every class once before any twice
    assert positives[3:] == positives[:2]
    for cut in cuts:
        assert cut.x is four.x and cut.classes == [0, 1]
        assert np.array_equal(cut.y, (four.y == cut.metadata["positive_classes"][0]).astype(np.int32))
        assert cut.y.sum() == 10  # the class's rows are the positives
    again = one_vs_rest_cuts(four, 5, seed=3)
    assert [c.metadata for c in again] == [c.metadata for c in cuts]
    assert one_vs_rest_cuts(four, 0, seed=3) == []
    with pytest.raises(ValueError, match="more than two"):
        one_vs_rest_cuts(Task("two", rng.normal(size=(10, 2)), np.arange(10) % 2), 1, seed=0)


def test_resuming_says_so_and_a_divergence_before_any_checkpoint_leaves_no_directory(tmp_path):
    import io

    tasks = make_tasks(2, seed=2, rows=(60, 80), features=(2, 4))
    settings = {"query_rows": 8, "support_rows": 8}
    pretrain(tasks, ModelConfig(**SMALL), PretrainConfig(steps=2, **settings), checkpoint_dir=tmp_path / "ck",
             progress=None)
    stream = io.StringIO()
    pretrain(tasks, ModelConfig(**SMALL), PretrainConfig(steps=3, **settings), checkpoint_dir=tmp_path / "ck",
             progress=stream)
    assert f"resuming from the checkpoint in {str(tmp_path / 'ck')!r} at step 2/3" in stream.getvalue()
    with pytest.raises(DENError, match="pre-training diverged") as err:
        pretrain(tasks, ModelConfig(**SMALL), PretrainConfig(steps=3, learning_rate=1e30, **settings),
                 checkpoint_dir=tmp_path / "new", progress=None)
    assert "checkpoint" not in str(err.value) and not (tmp_path / "new").exists()  # nothing to resume


def test_settings_of_a_wrong_type_are_named_and_numpy_numbers_are_saved_as_numbers(tmp_path):
    """"5" steps, 5.5 steps, True steps and a switch set to "no" (which Python reads as true)
    are refused with the setting's name; numpy numbers are fine, and the model they make saves
    (its JSON holds plain numbers) instead of failing after the whole run."""
    import re

    from den.model.den import DEN
    from den.train.config import FinetuneConfig

    for make, setting, message in (
            (PretrainConfig, {"steps": "5"}, "steps must be an integer, got '5'"),
            (PretrainConfig, {"steps": 5.5}, "steps must be an integer, got 5.5"),
            (PretrainConfig, {"steps": True}, "steps must be an integer, got True"),
            (PretrainConfig, {"learning_rate": "0.01"}, "learning_rate must be a number, got '0.01'"),
            (PretrainConfig, {"covariates_max": None}, "covariates_max must be an integer, got None"),
            (ModelConfig, {"use_calibration": "no"}, "use_calibration must be True or False, got 'no'"),
            (ModelConfig, {"max_classes": 3.5}, "max_classes must be an integer, got 3.5"),
            (FinetuneConfig, {"epochs": 2.0}, "fine-tuning epochs must be an integer, got 2.0")):
        with pytest.raises(ValueError, match=re.escape(message)):
            make(**setting)
    tasks = make_tasks(2, seed=2, rows=(60, 80), features=(2, 4))
    config = PretrainConfig(steps=np.int64(2), query_rows=np.int32(8), support_rows=8,
                            learning_rate=np.float32(1e-3))
    assert type(config.steps) is int and type(config.learning_rate) is float
    model = pretrain(tasks, ModelConfig(**{**SMALL, "max_classes": np.int64(3)}), config, progress=None)
    assert DEN.load(model.save(tmp_path / "m.npz")).config.max_classes == 3
    with pytest.raises(DENInputError, match=r"pretrain's config must be a PretrainConfig .*not a dict"):
        pretrain(tasks, None, {"steps": 3})
    with pytest.raises(DENInputError, match="pretrain's tasks must be a list of den.data.tasks.Task"):
        pretrain("my_tasks/")
    (tmp_path / "file").write_text("not a directory")
    with pytest.raises(DENInputError, match="checkpoint_dir .* is a file, not a directory"):
        pretrain(tasks, ModelConfig(**SMALL), config, checkpoint_dir=tmp_path / "file", progress=None)


def test_a_changed_cut_setting_is_named_and_tasks_may_come_from_a_generator(tmp_path):
    """A fingerprint leaves one_vs_rest_cuts out at 0: a change from 2 to 0 is still named as
    that setting, not as other tasks. A generator of tasks is read once."""
    rng = np.random.default_rng(0)
    labels = np.repeat([0, 1, 2], 20).astype(np.int32)
    three = Task("three", rng.normal(size=(60, 3)).astype(np.float32), labels)
    tasks = [three, *make_tasks(1, seed=2, rows=(60, 80), features=(2, 4))]
    settings = {"steps": 2, "query_rows": 8, "support_rows": 8, "multiclass_cuts": 1}
    pretrain(tasks, ModelConfig(**SMALL), PretrainConfig(one_vs_rest_cuts=2, **settings),
             checkpoint_dir=tmp_path, progress=None)
    with pytest.raises(DENError, match=r"other settings \(one_vs_rest_cuts 2 there, 0 here\)"):
        pretrain(tasks, ModelConfig(**SMALL), PretrainConfig(**settings), checkpoint_dir=tmp_path,
                 progress=None)
    model = pretrain((t for t in tasks), ModelConfig(**SMALL), PretrainConfig(**settings), progress=None)
    assert len(model.metadata["pretrained_on"]) == 2


def test_steps_per_second_leaves_out_the_final_checkpoint_write(tmp_path, monkeypatch):
    """The model's steps_per_s times the steps, not the checkpoint written after the last one
    (on a short run that write made it read far below the progress line)."""
    import time

    import den.train.pretrain as module

    tasks = make_tasks(2, seed=2, rows=(60, 80), features=(2, 3))
    settings = dict(query_rows=16, support_rows=16, checkpoint_every=1000, seed=4)
    written = []
    plain_write = module.atomic_write

    def slow_write(path, mode="wb"):
        if str(path).endswith("history.json"):  # only the final checkpoint writes it here
            written.append(path)
            time.sleep(2.0)
        return plain_write(path, mode)

    monkeypatch.setattr(module, "atomic_write", slow_write)
    model = pretrain(tasks, ModelConfig(**SMALL), PretrainConfig(steps=6, **settings),
                     checkpoint_dir=tmp_path / "ckpt", progress=None)
    assert len(written) == 1  # the final checkpoint was written, slowly
    assert model.metadata["steps_per_s"] > 5 / 2.0  # five timed steps of a tiny model: well under 2 s
