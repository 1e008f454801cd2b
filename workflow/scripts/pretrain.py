"""Rule pretrain: the training datasets' files -> a pre-trained DEN (den.train.pretrain)."""

import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821  (the den package)

from den.data.tasks import Task  # noqa: E402
from den.logs import log_to  # noqa: E402
from den.model.config import ModelConfig  # noqa: E402
from den.train.pretrain import PretrainConfig, pretrain  # noqa: E402

out = Path(snakemake.output.model)  # noqa: F821
with log_to(snakemake.log[0]):  # noqa: F821
    tasks = [Task.load(path) for path in snakemake.input.tasks]  # noqa: F821
    checkpoint_dir = out.with_suffix(".checkpoint")
    model = pretrain(tasks, ModelConfig(**snakemake.params.model),  # noqa: F821
                     PretrainConfig(**snakemake.params.pretrain),  # noqa: F821
                     checkpoint_dir=checkpoint_dir)  # resumes an interrupted run
    model.save(out)
    shutil.rmtree(checkpoint_dir)  # a changed config must start afresh, not hit a stale checkpoint
