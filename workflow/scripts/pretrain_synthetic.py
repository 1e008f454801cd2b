"""Rule pretrain_synthetic: generated tasks -> pre-trained DEN (results/models/synthetic.npz)."""

import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821  (the den package)

from den.data.synthetic import make_tasks  # noqa: E402
from den.logs import log_to  # noqa: E402
from den.model.config import ModelConfig  # noqa: E402
from den.train.pretrain import PretrainConfig, pretrain  # noqa: E402

p = snakemake.params  # noqa: F821
with log_to(snakemake.log[0]):  # noqa: F821
    settings = dict(p.pretrain)
    tasks = make_tasks(settings.pop("synthetic_tasks"), seed=p.seed)
    checkpoint_dir = Path(snakemake.output.model).with_suffix(".checkpoint")  # noqa: F821
    model = pretrain(tasks, ModelConfig(**p.model, seed=p.seed), PretrainConfig(**settings, seed=p.seed),
                     checkpoint_dir=checkpoint_dir)  # resumes an interrupted run
    model.save(snakemake.output.model)  # noqa: F821
    shutil.rmtree(checkpoint_dir)  # a changed config must start afresh, not hit a stale checkpoint
