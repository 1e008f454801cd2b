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
Timings exclude TensorFlow's one-off tracing of the compiled functions.
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


def _model():
    from den.model.config import ModelConfig
    from den.model.den import DEN

    return DEN(ModelConfig(order=2))


def _task_model(model, seed=0):
    from den.data.synthetic import make_task
    from den.model.task_model import TaskModel

    task = make_task("bench_support", 50, D, seed=seed)
    return TaskModel(model, task.x, task.y)


def bench_pretrain(steps: int) -> float:
    from den.data.synthetic import make_tasks
    from den.model.config import ModelConfig
    from den.train.pretrain import PretrainConfig, pretrain

    tasks = make_tasks(4, seed=0, rows=(2000, 2000), features=(D, D))
    config = PretrainConfig(steps=steps + 1, query_rows=256, support_rows=256,
                            covariates_min=D, covariates_max=D, seed=0)
    model = pretrain(tasks, ModelConfig(order=2), config, progress=None)
    return float(model.metadata["steps_per_s"])


def bench_predict(rows: int) -> float:
    task_model = _task_model(_model())
    x = np.random.default_rng(1).normal(size=(rows, D)).astype(np.float32)
    task_model.predict_logits(x[:2048])  # trace
    start = time.perf_counter()
    task_model.predict_logits(x)
    return rows / (time.perf_counter() - start)


def matmul_gflops(n: int = 2048, reps: int = 5) -> float:
    """Float32 matrix-multiply throughput of this machine in GFLOP/s."""
    from den._tf import tf

    a = tf.constant(np.random.default_rng(3).random((n, n), dtype=np.float32))
    product = tf.function(lambda: tf.matmul(a, a))
    product()
    start = time.perf_counter()
    for _ in range(reps):
        product().numpy()
    return 2.0 * n**3 * reps / (time.perf_counter() - start) / 1e9


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
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run in seconds")
    parser.add_argument("--child-predict", type=int, metavar="ROWS", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_predict:
        _child_predict(args.child_predict)
        return 0
    from den._tf import tf

    steps, rows, big = (20, 5000, 20000) if args.quick else (300, 100_000, 1_000_000)
    result = {
        "pretrain_steps_per_s": round(bench_pretrain(steps), 2),
        "predict_rows_per_s": round(bench_predict(rows), 1),
        "predict_1m_peak_rss_mb": predict_peak_rss_mb(big),
        "matmul_gflops": round(matmul_gflops(), 1),
        "quick": bool(args.quick),
        "tensorflow": tf.__version__,
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
