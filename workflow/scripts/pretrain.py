"""Rule pretrain: the training datasets' files -> a pre-trained model (den.experiments.pretrain_model)."""

import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821  (the den package)

from den.data.tasks import Task  # noqa: E402
from den.experiments import pretrain_model  # noqa: E402
from den.logs import log_to  # noqa: E402
from den.train.pretrain import PretrainInterrupted  # noqa: E402

out = Path(snakemake.output.model)  # noqa: F821
with log_to(snakemake.log[0]):  # noqa: F821
    tasks = [Task.load(path) for path in snakemake.input.tasks]  # noqa: F821
    checkpoint_dir = out.with_suffix(".checkpoint")
    try:
        model = pretrain_model(tasks, dict(snakemake.params.model), dict(snakemake.params.pretrain),  # noqa: F821
                               # DEN resumes an interrupted run; one of settings since changed starts over
                               checkpoint_dir=checkpoint_dir, restart_other_run=True)
    except PretrainInterrupted as stop:  # Ctrl-C or SIGTERM: one line, not a traceback
        print(f"{stop}; the checkpoint in {checkpoint_dir} is kept: run the workflow again to resume")
        raise SystemExit(130) from None
    model.save(out)
    shutil.rmtree(checkpoint_dir, ignore_errors=True)  # the model is saved: its checkpoint is done
