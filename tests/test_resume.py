"""`den pretrain` stopped with Ctrl-C (SIGINT) and run again ends bit-identical to a run never
stopped: the checkpoint written on the interrupt holds one completed step, all of it. SIGTERM
(a scheduler's time limit) stops it the same way."""

import os
import re
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from den.cli import main

STEPS = 200  # the interrupts come at steps 40 and 100: half the run or more is still to go
EVERY = 20


def _command(tasks, out):
    return ["pretrain", "--tasks", str(tasks), "--out", str(out), "--steps", str(STEPS),
            "--query-rows", "16", "--support-rows", "16", "--seed", "3", "--checkpoint-every", str(EVERY)]


def _checkpointed_step(directory):
    """The step of the newest periodic checkpoint in ``directory`` (0: none yet)."""
    steps = [int(path.name[len("ckpt-"):-len(".index")]) for path in directory.glob("ckpt-*.index")]
    return max(steps, default=0)


def _run(args, interrupt_at=None, timeout=120, signum=signal.SIGINT):
    """Run ``python -m den ARGS``; with ``interrupt_at`` = (checkpoint directory, step), send
    ``signum`` once a checkpoint of that step or a later one is there. Returns (exit code,
    stderr lines)."""
    # SIGINT back to its default in the child: a shell without job control may have ignored it
    process = subprocess.Popen([sys.executable, "-m", "den", *args], stderr=subprocess.PIPE, text=True,
                               env=dict(os.environ, PYTHONUNBUFFERED="1"),
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(line.rstrip("\n") for line in process.stderr))
    reader.start()
    deadline = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < deadline:
        if interrupt_at is not None and _checkpointed_step(interrupt_at[0]) >= interrupt_at[1]:
            process.send_signal(signum)
            interrupt_at = None
        time.sleep(0.005)
    if process.poll() is None:
        process.kill()
    code = process.wait()
    reader.join()
    assert time.monotonic() < deadline, f"timed out after {timeout} s:\n" + "\n".join(lines)
    return code, lines


def _arrays(path):
    with np.load(path) as data:
        return {key: data[key] for key in data.files if not key.startswith("__")}


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_pretrain_interrupted_and_resumed_is_bit_identical(tmp_path, csv_tasks):
    tasks = csv_tasks
    out = tmp_path / "resumed.npz"
    checkpoint = tmp_path / "resumed.npz.checkpoint"

    code, lines = _run(_command(tasks, out), interrupt_at=(checkpoint, 5 * EVERY))
    assert code == 130, "\n".join(lines)
    assert not any("Traceback" in line for line in lines), "\n".join(lines)
    message = re.fullmatch(rf"den pretrain: interrupted after step (\d+)/{STEPS}; checkpoint saved in "
                           rf"'{re.escape(str(checkpoint))}'; run the same command again to resume",
                           lines[-1])
    assert message, "\n".join(lines)
    stopped_at = int(message[1])
    assert 5 * EVERY <= stopped_at < STEPS and not out.exists()
    assert _checkpointed_step(checkpoint) == stopped_at  # the checkpoint of the step it stopped at
    assert (checkpoint / "checkpoint").is_file()

    code, lines = _run(_command(tasks, out))
    assert code == 0, "\n".join(lines)
    progress = [line for line in lines if line.startswith("pretrain ")]
    assert progress[0].startswith(f"pretrain {stopped_at + 1}/{STEPS} "), "\n".join(lines)
    assert out.is_file() and not checkpoint.exists()

    straight = tmp_path / "straight.npz"
    assert main([*_command(tasks, straight), "--quiet"]) == 0
    resumed, expected = _arrays(out), _arrays(straight)
    assert sorted(resumed) == sorted(expected) and resumed
    for key in expected:
        assert np.array_equal(resumed[key], expected[key]), key


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_sigterm_checkpoints_like_ctrl_c_and_the_run_resumes(tmp_path, csv_tasks):
    """A scheduler's time limit (SLURM sends SIGTERM before it kills a job) stops the run at a
    step boundary with a checkpoint of that step, as Ctrl-C does; the run then resumes there."""
    out = tmp_path / "m.npz"
    checkpoint = tmp_path / "m.npz.checkpoint"
    code, lines = _run(_command(csv_tasks, out), interrupt_at=(checkpoint, 2 * EVERY), signum=signal.SIGTERM)
    assert code == 130, "\n".join(lines)
    message = re.fullmatch(rf"den pretrain: interrupted after step (\d+)/{STEPS}; checkpoint saved in .*",
                           lines[-1])
    assert message and not out.exists(), "\n".join(lines)
    assert _checkpointed_step(checkpoint) == int(message[1])
    code, lines = _run(_command(csv_tasks, out))
    progress = [line for line in lines if line.startswith("pretrain ")]
    assert code == 0 and progress[0].startswith(f"pretrain {int(message[1]) + 1}/{STEPS} "), "\n".join(lines)
