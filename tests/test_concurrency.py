"""DEN shared between threads and processes: adapted weights never leak into another thread's
work, a forked child stops with advice instead of hanging, and child processes stay quiet."""

import os
import pickle
import re
import signal
import subprocess
import sys
import threading

import numpy as np
import pytest

from den.api import DENClassifier
from den.errors import DENError

from helpers import split


@pytest.mark.parametrize("work", ["predict", "adapt", "pickle"])
def test_a_thread_never_reads_another_threads_adapted_weights(small_binary_model, binary_task, work):
    """Two estimators on one DEN (a cached model file, or scikit-learn's clone): while one
    thread's adapted network is swapped into the shared variables, another thread's work waits
    for it instead of reading those weights. Before, a first prediction with the pre-trained
    network was wrong by up to 0.12 (and stayed wrong in its cached support context), a fit
    that adapts the network started from the other task's weights, and a pickle held them."""
    (x_s, y_s), (x_q, _) = split(binary_task)
    adapted = DENClassifier(model=small_binary_model, preset="adapt").fit(x_s[::-1], 1 - y_s[::-1])
    assert adapted.task_model_.network_weights is not None
    preset = "adapt" if work == "adapt" else "fast"
    expected = DENClassifier(model=small_binary_model, preset=preset).fit(x_s, y_s).predict_proba(x_q)
    entered, release, done, result = threading.Event(), threading.Event(), threading.Event(), {}

    def hold_adapted_weights():
        with small_binary_model.network_weights(adapted.task_model_.network_weights):
            entered.set()
            release.wait(timeout=60)

    def other_work():
        if work == "pickle":
            result["model"] = pickle.loads(pickle.dumps(small_binary_model))
        else:
            result["estimator"] = estimator = DENClassifier(model=small_binary_model, preset=preset)
            estimator.fit(x_s, y_s)
            result["proba"] = estimator.predict_proba(x_q)
        done.set()

    holder = threading.Thread(target=hold_adapted_weights)
    holder.start()
    assert entered.wait(timeout=60)
    worker = threading.Thread(target=other_work)
    worker.start()
    finished_early = done.wait(timeout=1.0)  # with the lock it waits for the holder
    release.set()
    holder.join(timeout=60)
    worker.join(timeout=60)
    assert not finished_early
    if work == "pickle":
        loaded, own = result["model"].network.weights_dict(), small_binary_model.network.weights_dict()
        assert all(np.array_equal(loaded[k], own[k]) for k in own)
        return
    np.testing.assert_array_equal(result["proba"], expected)
    np.testing.assert_array_equal(result["estimator"].predict_proba(x_q), expected)  # cached context


def test_threads_predicting_with_adapted_and_plain_models_agree_with_one_by_one(small_binary_model,
                                                                                binary_task):
    (x_s, y_s), (x_q, _) = split(binary_task)
    models = [DENClassifier(model=small_binary_model, preset=preset).fit(x_s, y_s)
              for preset in ("adapt", "fast", "adapt", "fast")]
    expected = [m.predict_proba(x_q) for m in models]
    fresh = [DENClassifier(model=small_binary_model, preset=preset).fit(x_s, y_s)
             for preset in ("adapt", "fast", "adapt", "fast")]
    out = [None] * len(fresh)

    def run(i):
        out[i] = [fresh[i].predict_proba(x_q) for _ in range(3)]

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(fresh))]
    [t.start() for t in threads]
    [t.join(timeout=120) for t in threads]
    for got, want in zip(out, expected):
        for proba in got:
            np.testing.assert_array_equal(proba, want)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_child_forked_after_tensorflow_ran_stops_with_advice(small_binary_model):
    """TensorFlow's thread pools do not survive a fork: such a child used to hang in its first
    prediction; now den's entry points raise before any TensorFlow work."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: no TensorFlow work here, only den's checks
        try:
            try:
                with small_binary_model.network_weights(None):
                    message = "no error"
            except DENError as err:
                message = str(err)
            os.write(write, message.encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as handle:
        message = handle.read()
    os.waitpid(pid, 0)
    assert "forked after its parent ran TensorFlow" in message, message
    assert "get_context('spawn')" in message


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_meta_learning_baseline_in_a_forked_child_stops_with_advice_too():
    """The meta-learning baselines run TensorFlow as DEN does: built, adapted or predicting in
    a child forked after the parent used one, they raise instead of hanging."""
    from den.baselines.meta import MetaConfig, make_baseline

    learner = make_baseline("proto_net", MetaConfig(steps=1, n_inputs=4, covariates_max=4))
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(20, 3)), np.arange(20) % 2
    learner.adapt(x, y, 2).predict_proba(x[:3])  # the parent runs TensorFlow
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            signal.alarm(120)  # a child that hangs (no check) is killed, and the test fails
            messages = []
            for work in (lambda: make_baseline("proto_net", MetaConfig(steps=1)),
                         lambda: learner.adapt(x, y, 2), lambda: learner.predict_proba(x[:3])):
                try:
                    work()
                    messages.append("no error")
                except DENError as err:
                    messages.append(str(err))
            os.write(write, "\n".join(messages).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as handle:
        messages = handle.read().split("\n")
    os.waitpid(pid, 0)
    stopped = [m for m in messages if "forked after its parent ran TensorFlow" in m]
    assert len(stopped) == 3, messages


def test_a_child_process_inherits_dens_quiet_tensorflow_start(tmp_path):
    """importing den sets TF_CPP_MIN_LOG_LEVEL for TensorFlow's start-up chatter; a child
    process (joblib's workers) inherits it and must stay as quiet, while a level the user set
    is theirs (its chatter shows)."""
    import den._tf  # noqa: F401  (sets the level in this process's environment)

    env = dict(os.environ)
    code = "import den._tf"
    path = os.pathsep.join(p for p in (str(__import__("den").__path__[0].rsplit(os.sep, 1)[0]),
                                       env.get("PYTHONPATH")) if p)
    child = subprocess.run([sys.executable, "-c", code], env={**env, "PYTHONPATH": path},
                           capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr[-2000:]
    assert not _tensorflow_chatter(child.stderr), child.stderr[-2000:]
    own = {k: v for k, v in env.items() if k != "_DEN_TF_CPP_MIN_LOG_LEVEL"}
    user = subprocess.run([sys.executable, "-c", code], env={**own, "TF_CPP_MIN_LOG_LEVEL": "0",
                                                              "PYTHONPATH": path},
                          capture_output=True, text=True, timeout=300)
    assert user.returncode == 0 and _tensorflow_chatter(user.stderr), user.stderr[-2000:]


def _tensorflow_chatter(stderr: str) -> list[str]:
    """TensorFlow's C++ log lines in ``stderr`` ("I0000 00:00:17958.. 5852 port.cc:153] oneDNN
    ..."), not a Python warning another library may print."""
    return re.findall(r"(?m)^[IWEF]\d{4} [\d:.]+ +\d+ [\w.]+:\d+\] .*$", stderr)


def test_tensorflow_pools_take_omp_num_threads_unless_their_own_variables_are_set():
    """``OMP_NUM_THREADS`` (what Snakemake sets to a job's ``threads``) sizes both of
    TensorFlow's pools where their own variables are not set; those win, and a value that is
    not a positive whole number changes nothing."""
    from den._tf import THREAD_VARIABLES, threads_from_environment

    environ = {"OMP_NUM_THREADS": "1"}
    assert threads_from_environment(environ) == dict.fromkeys(THREAD_VARIABLES, "1")
    assert environ == {"OMP_NUM_THREADS": "1", **dict.fromkeys(THREAD_VARIABLES, "1")}
    environ = {"OMP_NUM_THREADS": "3", "TF_NUM_INTRAOP_THREADS": "4"}
    assert threads_from_environment(environ) == {"TF_NUM_INTEROP_THREADS": "3"}
    assert environ["TF_NUM_INTRAOP_THREADS"] == "4"
    for value in ("", "0", "-2", "two", "1.5", "\u00b2"):  # "²" is a digit to str.isdigit
        environ = {"OMP_NUM_THREADS": value}
        assert threads_from_environment(environ) == {} and environ == {"OMP_NUM_THREADS": value}
    assert threads_from_environment({}) == {}


def test_a_process_given_one_thread_runs_tensorflow_on_fewer_threads_than_one_given_six():
    """The environment variable reaches TensorFlow's runtime: after a matrix product, a process
    with OMP_NUM_THREADS=6 holds at least ten threads more than one with OMP_NUM_THREADS=1 (two
    pools of 6 against two of 1)."""
    code = ("import os\nfrom den._tf import tf\nx = tf.random.normal((64, 64))\n(x @ x).numpy()\n"
            "print(len(os.listdir('/proc/self/task')))")
    counts = {}
    for threads in ("1", "6"):
        environ = {k: v for k, v in os.environ.items() if not k.startswith("TF_NUM_")}
        environ["OMP_NUM_THREADS"] = threads
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ,
                             check=True)
        counts[threads] = int(run.stdout.strip().splitlines()[-1])
    assert counts["6"] >= counts["1"] + 10, counts
