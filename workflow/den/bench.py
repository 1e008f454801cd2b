"""Throughput benchmark: ``python -m den.bench [--quick]`` prints one JSON line.

Keys (stable, so figures can be compared over time):
    pretrain_steps_per_s    pre-training steps per second: batch 256 query + 256 support
                            rows, d = 20 covariates, r = 2, appendix layer sizes
    predict_rows_per_s      query rows scored per second: 100,000 rows, d = 20, after
                            fine-tuning-free adaptation on 50 support rows
    predict_1m_peak_rss_mb  peak resident memory (MiB) of a fresh process that adapts a
                            model and predicts 1,000,000 query rows with d = 20
    matmul_gflops           this machine's float32 matrix-multiply rate (2048 x 2048,
                            TensorFlow): divide by it to compare figures across machines
    quick                   whether --quick shrank the sizes (smoke run; not comparable)
    tensorflow              TensorFlow version
    finetune_seconds_default  seconds of DENClassifier(preset="default").fit with the
                            shipped model on 50 support rows, d = 20 (median of 3): the
                            default preset's fit, whatever that preset is (now network
                            adaptation, as finetune_seconds_adapt; before 2026-11-26 no
                            fine-tuning, the preset now called "fast")
    finetune_seconds_paper  the same with preset="paper": the paper's fine-tuning, 10
                            epochs x 10 steps of the task's calibration
    predict_limit_ratio     the FLOP rate predict_rows_per_s achieves over matmul_gflops:
                            predict_rows_per_s x predict_flops_per_row() / matmul rate, so
                            how close scoring runs to this machine's matrix-multiply limit
    layer_matmul_gflops     the float32 rate of one of phi's hidden layers alone,
                            relu(x W + b) with x of one prediction chunk's tuple-rows
                            (``TUPLE_ROWS_PER_CHUNK`` x 64) and W 64 x 64: the most the
                            layers that hold 98% of predict_flops_per_row reach here
    predict_layer_ratio     the FLOP rate predict_rows_per_s achieves over
                            layer_matmul_gflops: near 1, scoring runs as fast as its own
                            layer shape allows (predict_limit_ratio can then only rise
                            with fewer, larger products, not with less overhead)
    finetune_seconds_adapt  the same fit as finetune_seconds_default with preset="adapt":
                            50 Adam steps of the PLF-free model's network weights
    finetune_seconds_fast   the same fit with preset="fast": no fine-tuning, keypoints and
                            the support set only
    cold_predict_seconds_default, cold_predict_seconds_fast, cold_predict_seconds_paper
                            wall seconds of a fresh ``python -m den predict --preset P``
                            process, 50 support + 310 query rows of COLD_FEATURES features
                            (CSV files), start to finish: importing, fitting (tracing
                            included) and writing predictions; the median of 3 (1 with --quick)
    predict_rows_per_s_default  query rows scored per second by DENClassifier() as shipped
                            (the default preset: the shipped order-3 model, adapted) on
                            100,000 rows, d = 20, 50 support rows: what a practitioner gets,
                            where predict_rows_per_s times an untrained order-2 model
    predict_cli_1m_peak_rss_mb  peak resident memory (MiB) of a fresh ``python -m den predict
                            --preset fast`` process with predict_1m_peak_rss_mb's model,
                            50 support rows and a CSV file of 1,000,000 query rows with
                            d = 20: that figure plus what the command adds (reading the
                            file, encoding its rows, writing the predictions)
    pretrain_limit_ratio    the FLOP rate pretrain_steps_per_s achieves over matmul_gflops:
                            pretrain_steps_per_s x pretrain_flops_per_step() / matmul rate,
                            the same reading for pre-training as predict_limit_ratio
    pretrain_layer_ratio    the same over layer_matmul_gflops
    import_seconds          wall seconds of a fresh Python process that imports what ``den
                            predict`` imports before it fits (``den.fitting``: TensorFlow,
                            tf_keras and Lattice), start to finish; the median of 3 (1 with
                            --quick): the part of the cold_predict_seconds figures that no
                            preset changes
Other timings exclude TensorFlow's one-off tracing of the compiled functions.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np

D = 20
# Query and support rows of one ``pretrain_steps_per_s`` step (its episodes have D covariates).
PRETRAIN_ROWS = 256
# Columns of the cold ``den predict`` task (as diabetes, the set the first hand timings used).
COLD_FEATURES = 8


def _config():
    from den.model.config import ModelConfig

    return ModelConfig(order=2)


def _model():
    from den.model.den import DEN

    return DEN(_config())


def _task_model(model, seed=0):
    from den.data.synthetic import make_task
    from den.model.task_model import TaskModel

    task = make_task("bench_support", 50, D, seed=seed)
    return TaskModel(model, task.x, task.y)


def bench_pretrain(steps: int) -> float:
    from den.data.synthetic import make_tasks
    from den.train.pretrain import PretrainConfig, pretrain

    tasks = make_tasks(4, seed=0, rows=(2000, 2000), features=(D, D))
    config = PretrainConfig(steps=steps + 1, query_rows=PRETRAIN_ROWS, support_rows=PRETRAIN_ROWS,
                            covariates_min=D, covariates_max=D, seed=0)
    model = pretrain(tasks, _config(), config, progress=None)
    return float(model.metadata["steps_per_s"])


def bench_predict(rows: int) -> float:
    task_model = _task_model(_model())
    x = np.random.default_rng(1).normal(size=(rows, D)).astype(np.float32)
    task_model.predict_logits(x[:2048])  # trace
    start = time.perf_counter()
    task_model.predict_logits(x)
    return rows / (time.perf_counter() - start)


def _phi_macs_per_row(config, n_tuples: int) -> int:
    """Multiply-adds of phi on one row's ``n_tuples`` tuples: its first layer on z^t (and on
    e^t with linear evidence), its hidden layers, the weighted sum over tuples with tuple
    attention, and its last (linear) layer once after pooling."""
    phi, t = list(config.phi_units), n_tuples
    first = t * config.order * phi[0] * (2 if config.linear_evidence else 1)
    pooling = t * phi[-1] if config.tuple_attention else 0
    return first + t * sum(a * b for a, b in zip(phi[:-1], phi[1:])) + pooling + phi[-1] * phi[-1]


def predict_flops_per_row(config, n_features: int = D, n_support: int = 50, n_classes: int = 2) -> int:
    """Floating-point operations that scoring one query row costs a model of ``config``
    (``ModelConfig``) on a task of ``n_features`` features, ``n_support`` support rows and
    ``n_classes`` classes,
    counted from the layer sizes as 2 per multiply-add of the matrix products the query
    branch (``DENNetwork.query_logits``) evaluates for the row:

        T r P0                      phi's first layer on each tuple's calibrated values z^t
      + T r P0                      with linear evidence: the same on each tuple's terms e^t(z)
      + T sum_i P_i P_(i+1)         phi's hidden layers, on each tuple (P = phi_units)
      + T P_last                    with tuple attention: the weighted sum over tuples
      + P_last^2                    phi's last (linear) layer, once after the pooling
      + binary: sum_j Q_j Q_(j+1)   psi (Q = P_last (+ 1 with feature_count_input), psi_units..., 1)
        multiclass: P_last L        the scores against the L = n_classes prototypes
      + local embedding (B = len(local_bandwidths) > 0): m d U for the squared distances to
        the m = n_support support rows per feature multiset, B 2 m U for the class sums of the
        kernel, T 2B P0 for phi's first layer on l^t

    with T = the task's number of feature tuples (``DEN.tuples``), U <= T the number of
    distinct feature multisets among them (the kernels are computed once per multiset) and
    r the order. The
    support set's part (its embedding s^t, phi's s^t W_s, tuple attention's weights, gated
    pooling's gate and linear evidence's class means, computed once per task) and
    elementwise work (bias, ReLU, exp, log, the calibration's interpolation, the mean over
    tuples, gated pooling's log-mean-exp) are left out, so the achieved rate it gives is a lower bound.
    """
    from den.model.tuples import count_multisets, feature_tuples

    tuples = feature_tuples(n_features, config.order, config.seed, config.max_tuples, config.min_tuples)
    t, u = len(tuples), count_multisets(tuples)
    phi = list(config.phi_units)
    macs = _phi_macs_per_row(config, t)
    if config.head == "binary":
        psi = [phi[-1] + int(config.feature_count_input), *config.psi_units, 1]
        macs += sum(a * b for a, b in zip(psi[:-1], psi[1:]))
    else:
        macs += phi[-1] * n_classes
    b = len(config.local_bandwidths)
    if b:
        macs += n_support * n_features * u + b * 2 * n_support * u + t * 2 * b * phi[0]
    return 2 * macs


def pretrain_flops_per_step(config, n_features: int = D, query_rows: int = PRETRAIN_ROWS,
                            support_rows: int = PRETRAIN_ROWS, n_classes: int = 2) -> int:
    """Floating-point operations of one pre-training step of a model of ``config`` on an
    episode of ``n_features`` covariates, ``query_rows`` query and ``support_rows`` support
    rows: 3 times the forward pass's matrix products (``DENNetwork.logits``; the backward pass
    of each product is two products of its size, the usual count), where the forward pass is

        query_rows x predict_flops_per_row(config, n_features, support_rows, n_classes)
      + T m (r H0 + sum_i H_i H_(i+1) + H_last E)      h on each support row's tuples (m rows)
      + binary: 2 T m E + T (2E + 1) P0                the class means of h and phi's s^t W_s
        multiclass: m l H0 + T E P0                    v(y)'s part of h's first layer, s^t W_s,
          + m (phi's part of predict_flops_per_row)     Phi~ of every support row
          + L m P_last                                  and the class prototypes

    with T tuples, H = h_units, E = embedding_dim, P = phi_units, l = label_dim and
    L = n_classes, 2 FLOPs per multiply-add. The calibration's interpolation and elementwise
    work are left out, as in ``predict_flops_per_row``. Counted for the paper's architecture
    (the bench's model, ``feature_count_input`` allowed); a model with an option whose
    per-task products this does not count is refused rather than miscounted.
    """
    from den.model.tuples import feature_tuples

    uncounted = [name for name in ("local_bandwidths", "tuple_attention", "gated_pooling", "linear_evidence")
                 if getattr(config, name)]
    if uncounted:
        raise ValueError(f"pretrain_flops_per_step counts the paper's architecture; this model has "
                         f"{', '.join(uncounted)}")
    t = len(feature_tuples(n_features, config.order, config.seed, config.max_tuples, config.min_tuples))
    h, e, phi = list(config.h_units), config.embedding_dim, list(config.phi_units)
    m = support_rows
    macs = t * m * (config.order * h[0] + sum(a * b for a, b in zip(h[:-1], h[1:])) + h[-1] * e)
    if config.head == "binary":
        macs += 2 * t * m * e + t * (2 * e + 1) * phi[0]
    else:
        macs += (m * config.label_dim * h[0] + t * e * phi[0] + m * _phi_macs_per_row(config, t)
                 + n_classes * m * phi[-1])
    forward = 2 * macs + query_rows * predict_flops_per_row(config, n_features, support_rows, n_classes)
    return 3 * forward


def bench_fit_seconds(preset: str, reps: int = 3) -> float:
    """Median seconds of ``DENClassifier(preset=preset).fit`` with the shipped model on 50
    support rows, d = D (after one fit that traces the compiled functions)."""
    from den.api import DENClassifier
    from den.data.synthetic import make_task

    task = make_task("bench_support", 50, D, seed=0)
    DENClassifier(preset=preset).fit(task.x, task.y)
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        DENClassifier(preset=preset).fit(task.x, task.y)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def bench_predict_default(rows: int) -> float:
    """Query rows per second of ``DENClassifier()`` (the default preset, shipped model) fitted
    on 50 support rows, d = D, scoring ``rows`` rows (after one call that traces)."""
    from den.api import DENClassifier
    from den.data.synthetic import make_task

    task = make_task("bench_support", 50, D, seed=0)
    classifier = DENClassifier().fit(task.x, task.y)
    query = np.random.default_rng(1).normal(size=(rows, D))
    classifier.predict_proba(query[:1000])
    start = time.perf_counter()
    classifier.predict_proba(query)
    return rows / (time.perf_counter() - start)


def cold_predict_seconds(preset: str, reps: int = 3) -> float:
    """Median wall seconds of a fresh ``python -m den predict --preset preset`` process on 50
    support and 310 query rows of ``COLD_FEATURES`` features (a synthetic task, CSV files in a
    temporary directory): what a practitioner's first command costs, TensorFlow's import and
    the compiled functions' tracing included."""
    import tempfile
    from pathlib import Path

    from den.data.synthetic import make_task

    task = make_task("bench_cold", 360, COLD_FEATURES, seed=3)
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        _write_csvs(tmp, task.x[:50], task.y[:50], task.x[50:])
        command = [sys.executable, "-m", "den", "predict", "--preset", preset, "--support",
                   str(tmp / "support.csv"), "--target", "target", "--query", str(tmp / "query.csv"),
                   "--out", str(tmp / "predictions.csv")]
        for _ in range(reps):
            start = time.perf_counter()
            run = subprocess.run(command, capture_output=True, text=True)
            times.append(time.perf_counter() - start)
            if run.returncode != 0:
                raise RuntimeError(f"`den predict --preset {preset}` exited with {run.returncode}: "
                                   f"{run.stderr.strip() or '(no message)'}")
    return float(np.median(times))


def import_seconds(reps: int = 3) -> float:
    """Median wall seconds of a fresh ``python -c "import den.fitting"`` process: the imports a
    cold ``den predict`` pays before its fit (TensorFlow, tf_keras and Lattice)."""
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        run = subprocess.run([sys.executable, "-c", "import den.fitting"], capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if run.returncode != 0:
            raise RuntimeError(f"`import den.fitting` exited with {run.returncode}: "
                               f"{run.stderr.strip() or '(no message)'}")
    return float(np.median(times))


def _write_csvs(directory, x_support: np.ndarray, y_support: np.ndarray, x_query: np.ndarray) -> None:
    """support.csv (columns x0..x{d-1} and target) and query.csv (x0..x{d-1}) in ``directory``,
    the files a ``den predict`` command of the bench reads."""
    header = ",".join(f"x{j}" for j in range(x_support.shape[1]))
    np.savetxt(directory / "support.csv", np.column_stack([x_support, y_support]), delimiter=",",
               header=header + ",target", comments="")
    np.savetxt(directory / "query.csv", x_query, delimiter=",", header=header, comments="", fmt="%.7g")


def predict_cli_peak_rss_mb(rows: int) -> float:
    """Peak RSS (MiB) of a fresh ``python -m den predict --preset fast`` process: the benchmark
    model (``predict_peak_rss_mb``'s, saved to a file) fitted to 50 support rows, d = D, scoring
    ``rows`` query rows read from a CSV file and writing their predictions. The command runs
    under a small parent process whose only child it is, so that the peak is its own."""
    import tempfile
    from pathlib import Path

    from den.data.synthetic import make_task

    task = make_task("bench_support", 50, D, seed=0)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        _write_csvs(tmp, task.x, task.y, np.random.default_rng(2).normal(size=(rows, D)))
        model = _model().save(tmp / "model.npz")
        command = [sys.executable, "-m", "den", "predict", "--preset", "fast", "--model", str(model),
                   "--support", str(tmp / "support.csv"), "--target", "target",
                   "--query", str(tmp / "query.csv"), "--out", str(tmp / "predictions.csv")]
        parent = ("import resource, subprocess, sys; "
                  "run = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
                  "print(run.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
                  "print(run.stderr.strip() or '(no message)', file=sys.stderr)")
        run = subprocess.run([sys.executable, "-c", parent, *command], capture_output=True, text=True)
    code, peak_kib = run.stdout.split()
    if code != "0":
        raise RuntimeError(f"`den predict --preset fast` on {rows} rows exited with {code}: "
                           f"{run.stderr.strip()}")
    return int(peak_kib) / 1024  # KiB on Linux


def _gflops(compute, flops: float, reps: int) -> float:
    """GFLOP/s of ``compute`` (a no-argument tf.function of ``flops`` FLOPs), timed over
    ``reps`` calls after one that traces it."""
    compute()
    start = time.perf_counter()
    for _ in range(reps):
        compute().numpy()
    return flops * reps / (time.perf_counter() - start) / 1e9


def matmul_gflops(n: int = 2048, reps: int = 5) -> float:
    """Float32 matrix-multiply throughput of this machine in GFLOP/s."""
    from den._tf import tf

    a = tf.constant(np.random.default_rng(3).random((n, n), dtype=np.float32))
    return _gflops(tf.function(lambda: tf.matmul(a, a)), 2.0 * n**3, reps)


def layer_matmul_gflops(reps: int = 10) -> float:
    """Float32 rate (GFLOP/s) of relu(x W + b) at the shape of phi's hidden layers on one
    prediction chunk: x (TUPLE_ROWS_PER_CHUNK, P), W (P, P), P = the benchmark model's phi width."""
    from den._tf import tf
    from den.model.task_model import TUPLE_ROWS_PER_CHUNK

    width = _config().phi_units[1]
    rng = np.random.default_rng(4)
    x = tf.constant(rng.random((TUPLE_ROWS_PER_CHUNK, width), dtype=np.float32))
    w = tf.constant(rng.random((width, width), dtype=np.float32))
    b = tf.constant(np.zeros(width, np.float32))
    layer = tf.function(lambda: tf.reduce_sum(tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w), b))))
    return _gflops(layer, 2.0 * TUPLE_ROWS_PER_CHUNK * width * width, reps)


def predict_peak_rss_mb(rows: int) -> float:
    """Peak RSS (MiB) of a child process predicting ``rows`` rows."""
    out = subprocess.run([sys.executable, "-m", "den.bench", "--child-predict", str(rows)],
                         check=True, capture_output=True, text=True)
    return float(json.loads(out.stdout.strip().splitlines()[-1])["peak_rss_mb"])


def _child_predict(rows: int) -> None:
    task_model = _task_model(_model())
    rng = np.random.default_rng(2)
    x = rng.normal(size=(rows, D)).astype(np.float32)
    logits = task_model.predict_logits(x)
    assert logits.shape == (rows,) and np.isfinite(logits).all()
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(json.dumps({"peak_rss_mb": round(peak_kib / 1024, 1)}))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m den.bench", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run of about a minute "
                        "(the full run takes a few minutes)")
    parser.add_argument("--child-predict", type=int, metavar="ROWS", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_predict:
        _child_predict(args.child_predict)
        return 0
    from den._tf import tf

    steps, rows, big, reps = (20, 5000, 20000, 1) if args.quick else (300, 100_000, 1_000_000, 3)
    result = {"pretrain_steps_per_s": round(bench_pretrain(steps), 2)}
    predict_rate = bench_predict(rows)
    result["predict_rows_per_s"] = round(predict_rate, 1)
    result["predict_1m_peak_rss_mb"] = predict_peak_rss_mb(big)
    matmul_rate = matmul_gflops()
    layer_rate = layer_matmul_gflops()
    predict_flops = predict_rate * predict_flops_per_row(_config())
    result.update({
        "matmul_gflops": round(matmul_rate, 1),
        "quick": bool(args.quick),
        "tensorflow": tf.__version__,
        "finetune_seconds_default": round(bench_fit_seconds("default", reps), 3),
        "finetune_seconds_paper": round(bench_fit_seconds("paper", reps), 3),
        "predict_limit_ratio": round(predict_flops / (matmul_rate * 1e9), 4),
        "layer_matmul_gflops": round(layer_rate, 1),
        "predict_layer_ratio": round(predict_flops / (layer_rate * 1e9), 4),
        "finetune_seconds_adapt": round(bench_fit_seconds("adapt", reps), 3),
        "finetune_seconds_fast": round(bench_fit_seconds("fast", reps), 3),
    })
    for preset in ("default", "fast", "paper"):
        result[f"cold_predict_seconds_{preset}"] = round(cold_predict_seconds(preset, reps), 2)
    result["predict_rows_per_s_default"] = round(bench_predict_default(rows), 1)
    result["predict_cli_1m_peak_rss_mb"] = round(predict_cli_peak_rss_mb(big), 1)
    pretrain_flops = result["pretrain_steps_per_s"] * pretrain_flops_per_step(_config())
    result["pretrain_limit_ratio"] = round(pretrain_flops / (matmul_rate * 1e9), 4)
    result["pretrain_layer_ratio"] = round(pretrain_flops / (layer_rate * 1e9), 4)
    result["import_seconds"] = round(import_seconds(reps), 2)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
