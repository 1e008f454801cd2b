"""den.io.atomic_write gives outputs the permissions a plain open() gives, not mkstemp's 0600;
den.logs.log_to sends a workflow step's output to its log; den.io.SpooledRows holds an array in a file."""

import os
import stat

import pytest

from den.io import atomic_write, current_umask


@pytest.fixture()
def umask():
    """Run a test under umask 022, then restore the process's own."""
    previous = os.umask(0o022)
    yield 0o022
    os.umask(previous)


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o002], ids=["022", "027", "002"])
def test_atomic_writes_get_the_permissions_of_open(tmp_path, mask):
    previous = os.umask(mask)
    try:
        assert current_umask() == mask
        with atomic_write(tmp_path / "atomic.csv", "w") as handle:
            handle.write("a,b\n")
        with open(tmp_path / "plain.csv", "w") as handle:
            handle.write("a,b\n")
    finally:
        os.umask(previous)
    mode = stat.S_IMODE((tmp_path / "atomic.csv").stat().st_mode)
    assert mode == 0o666 & ~mask == stat.S_IMODE((tmp_path / "plain.csv").stat().st_mode)


def test_saved_models_and_predictions_follow_the_umask(tmp_path, umask, small_binary_model):
    import numpy as np

    from den.cli import main

    model = small_binary_model.save(tmp_path / "model.npz")
    assert stat.S_IMODE(model.stat().st_mode) == 0o644
    rng = np.random.default_rng(0)
    rows = ["a,b,label"] + [f"{x:.3f},{y:.3f},{int(x > y)}" for x, y in rng.normal(size=(40, 2))]
    (tmp_path / "support.csv").write_text("\n".join(rows) + "\n")
    out = tmp_path / "pred.csv"
    assert main(["predict", "--model", str(model), "--support", str(tmp_path / "support.csv"),
                 "--target", "label", "--query", str(tmp_path / "support.csv"), "--out", str(out)]) == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o644


def test_log_to_sends_stdout_and_stderr_to_a_new_file_and_restores_them(tmp_path, capsys):
    import sys

    from den.logs import log_to

    path = tmp_path / "logs" / "rule" / "job.log"  # parent folders do not exist yet
    with log_to(path):
        print("progress line")
        print("a warning", file=sys.stderr)
    print("after")
    assert path.read_text() == "progress line\na warning\n"
    assert capsys.readouterr().out == "after\n"
    with log_to(path):  # a rerun's log replaces the old one
        print("second run")
    assert path.read_text() == "second run\n"


def test_log_to_keeps_the_error_that_ended_the_step(tmp_path):
    """A failing step's log holds its error after what it printed (Snakemake points there);
    the error still propagates."""
    from den.logs import log_to

    path = tmp_path / "job.log"
    with pytest.raises(ValueError, match="no column 'labl'"):
        with log_to(path):
            print("reading task 'myb'")
            raise ValueError("task 'myb' has no column 'labl'")
    text = path.read_text()
    assert text.startswith("reading task 'myb'\nTraceback (most recent call last):")
    assert text.rstrip().endswith("ValueError: task 'myb' has no column 'labl'")


def test_log_to_writes_no_traceback_for_a_steps_own_exit(tmp_path):
    """A step that exits on purpose (130 after Ctrl-C, having printed why) leaves its message
    as the log's last line, not a SystemExit traceback; a text exit code is written."""
    from den.logs import log_to

    path = tmp_path / "job.log"
    for code, last in ((130, "interrupted at step 40; run the workflow again to resume"),
                       ("stopped: bad input", "stopped: bad input")):
        with pytest.raises(SystemExit):
            with log_to(path):
                print("interrupted at step 40; run the workflow again to resume")
                raise SystemExit(code)
        assert path.read_text().splitlines()[-1] == last and "Traceback" not in path.read_text()


def test_a_step_stopped_by_sigterm_says_so_in_its_log(tmp_path):
    """A scheduler's SIGTERM ends a workflow step with code 143 and a line in its log (it used
    to die silently, leaving the log empty)."""
    import signal
    import subprocess
    import sys
    import time

    path = tmp_path / "job.log"
    program = ("import time; from den.logs import log_to\n"
               f"with log_to({str(path)!r}):\n    print('fitting', flush=True)\n    time.sleep(60)\n")
    step = subprocess.Popen([sys.executable, "-c", program])
    deadline = time.time() + 60
    while time.time() < deadline and not (path.exists() and "fitting" in path.read_text()):
        time.sleep(0.05)
    step.send_signal(signal.SIGTERM)
    assert step.wait(timeout=30) == 143
    assert path.read_text().startswith("fitting\nstopped by SIGTERM (a scheduler's limit or cancel")


def test_pre_training_inside_a_log_still_checkpoints_on_sigterm(tmp_path):
    """log_to's SIGTERM line is a last resort: pre-training's own handler (finish the step,
    checkpoint) takes over inside it, and each handler is put back afterwards."""
    import os
    import signal

    from den.logs import log_to
    from den.train.pretrain import _DeferredInterrupt

    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    with log_to(tmp_path / "job.log"):
        outer = signal.getsignal(signal.SIGTERM)
        assert getattr(outer, "replaceable", False)
        with _DeferredInterrupt() as interrupt:
            os.kill(os.getpid(), signal.SIGTERM)  # handled: the loop would stop at the step's end
            assert interrupt.requested
        assert signal.getsignal(signal.SIGTERM) is outer
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_spooled_rows_read_back_any_slice_of_rows_from_an_unnamed_file(tmp_path):
    import numpy as np

    from den.io import SpooledRows

    array = np.random.default_rng(0).normal(size=(101, 3))
    with SpooledRows(array, tmp_path) as rows:
        assert len(rows) == 101 and rows.shape == (101, 3) and list(tmp_path.iterdir()) == []
        for part in (slice(0, 101), slice(None), slice(16, 32), slice(96, 500), slice(7, 7), slice(-5, None)):
            block = rows[part]
            assert block.dtype == np.float64 and np.array_equal(block, array[part]), part
        array[0, 0] = 99.0  # a copy: the file holds the rows as they were given
        assert rows[0:1][0, 0] != 99.0
        with pytest.raises(TypeError, match="consecutive rows"):
            rows[0:10:2]
        with pytest.raises(TypeError, match="consecutive rows"):
            rows[3]
    assert rows._file.closed


def test_atomic_write_syncs_the_data_before_the_rename(tmp_path, monkeypatch):
    """After a crash the path holds the old file or the whole new one: the new file's data is
    synced to the disk before it takes the name."""
    import den.io as module

    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(module.os, "fsync", lambda fd: (events.append(("fsync", os.fstat(fd).st_size)),
                                                        real_fsync(fd)))
    monkeypatch.setattr(module.os, "replace", lambda a, b: (events.append(("replace", None)),
                                                            real_replace(a, b)))
    (tmp_path / "out.csv").write_text("old\n")
    with atomic_write(tmp_path / "out.csv", "w") as handle:
        handle.write("a,b\n" * 1000)
    assert events == [("fsync", 4000), ("replace", None)]
    assert (tmp_path / "out.csv").read_text() == "a,b\n" * 1000
