"""``python -m den.bench``: its JSON keys and the FLOP counts behind ``predict_limit_ratio`` and
``pretrain_limit_ratio``."""

import json

import numpy as np
import pytest

import den.bench as bench
from den._tf import tf
from den.model.config import ModelConfig
from den.model.den import DEN

from helpers import SMALL

STABLE_KEYS = ["pretrain_steps_per_s", "predict_rows_per_s", "predict_1m_peak_rss_mb",
               "matmul_gflops", "quick", "tensorflow"]


def test_bench_keeps_its_keys_and_adds_fit_times_and_the_predict_limit_ratio(monkeypatch, capsys):
    monkeypatch.setattr(bench, "bench_pretrain", lambda steps: 12.345)
    monkeypatch.setattr(bench, "bench_predict", lambda rows: 1000.0)
    monkeypatch.setattr(bench, "predict_peak_rss_mb", lambda rows: 321.0)
    monkeypatch.setattr(bench, "matmul_gflops", lambda: 50.0)
    monkeypatch.setattr(bench, "layer_matmul_gflops", lambda: 20.0)
    fit_seconds = {"default": 0.8, "paper": 1.5, "adapt": 0.9, "fast": 0.01}
    monkeypatch.setattr(bench, "bench_fit_seconds", lambda preset, reps: fit_seconds[preset])
    cold_seconds = {"default": 5.25, "fast": 3.5, "paper": 7.0}
    monkeypatch.setattr(bench, "cold_predict_seconds", lambda preset, reps: cold_seconds[preset])
    monkeypatch.setattr(bench, "bench_predict_default", lambda rows: 4321.0)
    monkeypatch.setattr(bench, "predict_cli_peak_rss_mb", lambda rows: 765.4321)
    monkeypatch.setattr(bench, "import_seconds", lambda reps: 3.456)
    assert bench.main(["--quick"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert list(result) == STABLE_KEYS + ["finetune_seconds_default", "finetune_seconds_paper",
                                          "predict_limit_ratio", "layer_matmul_gflops",
                                          "predict_layer_ratio", "finetune_seconds_adapt",
                                          "finetune_seconds_fast", "cold_predict_seconds_default",
                                          "cold_predict_seconds_fast", "cold_predict_seconds_paper",
                                          "predict_rows_per_s_default", "predict_cli_1m_peak_rss_mb",
                                          "pretrain_limit_ratio", "pretrain_layer_ratio",
                                          "import_seconds"]
    assert result["import_seconds"] == 3.46
    assert result["predict_rows_per_s_default"] == 4321.0 and result["predict_cli_1m_peak_rss_mb"] == 765.4
    assert result["cold_predict_seconds_default"] == 5.25 and result["finetune_seconds_fast"] == 0.01
    assert result["finetune_seconds_paper"] == 1.5 and result["quick"] is True
    assert result["finetune_seconds_adapt"] == 0.9
    flops = bench.predict_flops_per_row(ModelConfig(order=2))
    assert result["predict_limit_ratio"] == round(1000.0 * flops / 50e9, 4)
    assert result["predict_layer_ratio"] == round(1000.0 * flops / 20e9, 4)
    step_flops = bench.pretrain_flops_per_step(ModelConfig(order=2))
    assert result["pretrain_steps_per_s"] == 12.35  # the ratios read the rate as reported
    assert result["pretrain_limit_ratio"] == round(12.35 * step_flops / 50e9, 4)
    assert result["pretrain_layer_ratio"] == round(12.35 * step_flops / 20e9, 4)


def test_cold_predict_runs_den_predict_on_50_support_and_310_query_rows(monkeypatch):
    """Each timed run is a fresh ``python -m den predict`` process with the preset asked for,
    on CSV files of 50 labelled and 310 unlabelled rows; the figure is the median."""
    import pandas as pd

    calls, clock = [], iter([0.0, 4.0, 10.0, 12.0, 20.0, 29.0])
    monkeypatch.setattr(bench.time, "perf_counter", lambda: next(clock))

    def run(command, capture_output, text):
        args = dict(zip(command[4::2], command[5::2]))
        support, query = pd.read_csv(args["--support"]), pd.read_csv(args["--query"])
        calls.append((command[:4], args["--preset"], support.shape, query.shape,
                      "target" in query.columns, sorted(support["target"].unique())))
        return bench.subprocess.CompletedProcess(command, 0, "", "")
    monkeypatch.setattr(bench.subprocess, "run", run)
    assert bench.cold_predict_seconds("adapt", reps=3) == 4.0  # runs of 4, 2 and 9 s
    assert len(calls) == 3
    command, preset, support_shape, query_shape, query_has_target, classes = calls[0]
    assert command[1:] == ["-m", "den", "predict"] and preset == "adapt"
    assert support_shape == (50, bench.COLD_FEATURES + 1) and query_shape == (310, bench.COLD_FEATURES)
    assert not query_has_target and classes == [0, 1]


def test_cold_predict_names_the_preset_and_the_commands_error_when_it_fails(monkeypatch):
    monkeypatch.setattr(bench.subprocess, "run", lambda command, capture_output, text:
                        bench.subprocess.CompletedProcess(command, 2, "", "den predict: error: boom\n"))
    with pytest.raises(RuntimeError, match=r"--preset paper` exited with 2: den predict: error: boom"):
        bench.cold_predict_seconds("paper", reps=1)


def test_import_seconds_times_fresh_processes_that_import_den_fitting(monkeypatch):
    """Each timed run is a fresh interpreter importing ``den.fitting`` (what ``den predict``
    imports before it fits); the figure is the median, and a failed import is named."""
    calls, clock = [], iter([0.0, 5.0, 10.0, 13.0, 20.0, 24.0, 30.0, 31.0])
    monkeypatch.setattr(bench.time, "perf_counter", lambda: next(clock))

    def run(command, capture_output, text):
        calls.append(command)
        return bench.subprocess.CompletedProcess(command, 0, "", "")
    monkeypatch.setattr(bench.subprocess, "run", run)
    assert bench.import_seconds(reps=3) == 4.0  # runs of 5, 3 and 4 s
    assert calls == [[bench.sys.executable, "-c", "import den.fitting"]] * 3
    monkeypatch.setattr(bench.subprocess, "run", lambda command, capture_output, text:
                        bench.subprocess.CompletedProcess(command, 1, "", "ModuleNotFoundError: x\n"))
    with pytest.raises(RuntimeError, match=r"`import den.fitting` exited with 1: ModuleNotFoundError"):
        bench.import_seconds(reps=1)


def test_cli_peak_memory_is_that_of_a_den_predict_process_on_a_query_file(monkeypatch):
    """The figure is a real `den predict` command's own peak (its parent is a bare Python):
    above the parent's few MB; a command that fails is named with its exit code and message."""
    peak = bench.predict_cli_peak_rss_mb(300)
    assert 150 < peak < 4000  # TensorFlow alone takes a few hundred MB

    class Broken:
        def save(self, path):
            path.write_bytes(b"not a model")
            return path
    monkeypatch.setattr(bench, "_model", Broken)
    with pytest.raises(RuntimeError, match=r"on 300 rows exited with 2: den predict: error: .*model\.npz"):
        bench.predict_cli_peak_rss_mb(300)


def test_layer_and_matmul_rates_count_their_flops(monkeypatch):
    """With a clock that advances 1 s per reading, each rate is its FLOPs per call x reps / 1e9:
    one 64 x 64 layer on one prediction chunk's tuple-rows, and a square n x n product."""
    from den.model.task_model import TUPLE_ROWS_PER_CHUNK

    clock = iter(range(1000))
    monkeypatch.setattr(bench.time, "perf_counter", lambda: float(next(clock)))
    assert bench.layer_matmul_gflops(reps=2) == pytest.approx(2 * 2 * TUPLE_ROWS_PER_CHUNK * 64 * 64 / 1e9)
    assert bench.matmul_gflops(n=8, reps=3) == pytest.approx(3 * 2 * 8**3 / 1e9)


def test_flops_per_row_of_the_benchmark_model_by_hand():
    # d = 20, r = 2: all 400 pairs; phi 64-64-64, psi 64-64-64-64-1, no local embedding
    macs = 400 * 2 * 64 + 400 * 2 * 64 * 64 + 64 * 64 + 4 * 64 * 64 + 64
    assert bench.predict_flops_per_row(ModelConfig(order=2)) == 2 * macs


def _query_matmul_flops(den, n_query, d, n_support, n_classes):
    """2 x multiply-adds of every matrix product in the query branch, from static shapes; the
    one dimension the graph cannot know, the number U of distinct feature multisets among the
    tuples (the local embedding's kernels are per multiset), is counted here with numpy."""
    net, tuples = den.network, tf.constant(den.tuples(d))
    multisets = len(np.unique(np.sort(den.tuples(d), axis=1), axis=0))
    p0 = den.config.phi_units[0]

    @tf.function(input_signature=[tf.TensorSpec([n_query, d], tf.float32)])
    def query(z):
        if den.config.head == "binary":
            context = {"bias": tf.zeros([len(den.tuples(d)), p0]), "z_support": tf.zeros([n_support, d]),
                       "y_support": tf.zeros([n_support], tf.int32)}
        else:
            context = {"bias": tf.zeros([len(den.tuples(d)), p0]),
                       "prototypes": tf.zeros([n_classes, den.config.phi_units[-1]]),
                       "present": tf.ones([n_classes], tf.bool)}
        return net.query_logits(z, context, tuples)

    return _graph_matmul_flops(query.get_concrete_function().graph, unknown=multisets)


def _graph_matmul_flops(graph, unknown=None):
    """2 x multiply-adds of every matrix product in ``graph``, from its static shapes; a
    dimension the graph leaves unknown is taken as ``unknown`` (None: there must be none)."""
    flops = 0
    for op in graph.get_operations():
        if op.type in ("MatMul", "BatchMatMulV2"):
            a, out = op.inputs[0].shape.as_list(), op.outputs[0].shape.as_list()
            assert unknown is not None or None not in a + out, op.name
            a, out = [unknown if n is None else n for n in a], [unknown if n is None else n for n in out]
            transposed = op.get_attr("transpose_a" if op.type == "MatMul" else "adj_x")
            flops += 2 * int(np.prod(out)) * (a[-2] if transposed else a[-1])
    return flops


@pytest.mark.parametrize("config, d, n_classes", [
    (ModelConfig(order=3, local_bandwidths=(0.1, 0.2, 0.4), **SMALL), 6, 2),
    (ModelConfig(order=2, **SMALL), 5, 2),
    (ModelConfig(order=2, feature_count_input=True, **SMALL), 5, 2),
    (ModelConfig(order=2, tuple_attention=True, **SMALL), 5, 2),
    (ModelConfig(order=3, local_bandwidths=(0.2,), gated_pooling=True, linear_evidence=True, **SMALL), 5, 2),
    (ModelConfig(order=2, head="multiclass", max_classes=5, **SMALL), 4, 3),
])
def test_flops_per_row_are_the_query_branch_matrix_products(config, d, n_classes):
    """The docstring's formula counts what the network computes per query row: the matrix
    products of scoring 3 rows less those of scoring 2 (the rest is per call)."""
    den = DEN(config)
    per_row = _query_matmul_flops(den, 3, d, 30, n_classes) - _query_matmul_flops(den, 2, d, 30, n_classes)
    assert bench.predict_flops_per_row(config, d, 30, n_classes) == per_row


def test_predict_default_times_the_shipped_default_on_the_rows_asked_for(monkeypatch):
    """``predict_rows_per_s_default`` scores ``rows`` rows with DENClassifier() as shipped."""
    import den.api

    scored = []
    real = den.api.DENClassifier.predict_proba

    def predict_proba(self, X):
        scored.append((self.preset, self.model, len(X), X.shape[1]))
        return real(self, X)

    monkeypatch.setattr(den.api.DENClassifier, "predict_proba", predict_proba)
    assert bench.bench_predict_default(3000) > 0
    assert scored[-1] == ("default", None, 3000, bench.D)


def _training_matmul_flops(den, n_query, n_support, d, n_classes):
    """2 x multiply-adds of every matrix product of one training forward pass
    (``DENNetwork.logits``: the support set's embedding and context, then the query rows),
    from the static shapes of its graph."""
    net, tuples = den.network, tf.constant(den.tuples(d))

    @tf.function(input_signature=[tf.TensorSpec([n_query, d], tf.float32),
                                  tf.TensorSpec([n_support, d], tf.float32),
                                  tf.TensorSpec([n_support], tf.int32)])
    def forward(z_query, z_support, y_support):
        return net.logits(z_query, z_support, y_support, tuples, tf.constant(n_classes))

    return _graph_matmul_flops(forward.get_concrete_function().graph)


@pytest.mark.parametrize("config, d, n_classes", [
    (ModelConfig(order=2, **SMALL), 5, 2),
    (ModelConfig(order=3, **SMALL), 4, 2),
    (ModelConfig(order=2, feature_count_input=True, **SMALL), 5, 2),
    (ModelConfig(order=2, head="multiclass", max_classes=5, label_dim=3, **SMALL), 4, 3),
])
def test_pretrain_flops_per_step_are_three_training_forward_passes(config, d, n_classes):
    """The docstring's formula is 3 times the matrix products a training step's forward pass
    computes (query rows scored against a support batch), read from its graph."""
    den = DEN(config)
    forward = _training_matmul_flops(den, 7, 11, d, n_classes)
    assert bench.pretrain_flops_per_step(config, d, 7, 11, n_classes) == 3 * forward


def test_pretrain_flops_of_the_benchmark_step_by_hand():
    """d = 20, r = 2, 256 query and 256 support rows: the bench's pre-training step (h 16-16-16,
    E = 16, phi 64-64-64); a model with an option it does not count is refused, not miscounted."""
    h = 400 * 256 * (2 * 16 + 16 * 16 * 2 + 16 * 16) + 2 * 400 * 256 * 16 + 400 * 33 * 64
    query = 256 * bench.predict_flops_per_row(ModelConfig(order=2))
    assert bench.pretrain_flops_per_step(ModelConfig(order=2)) == 3 * (2 * h + query)
    for option in (dict(local_bandwidths=(0.1,)), dict(tuple_attention=True), dict(gated_pooling=True),
                   dict(linear_evidence=True)):
        with pytest.raises(ValueError, match=next(iter(option))):
            bench.pretrain_flops_per_step(ModelConfig(order=2, **option))
