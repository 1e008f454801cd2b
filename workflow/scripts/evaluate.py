"""Rule evaluate: (method, dataset, repeat) -> metrics JSON (den.experiments.evaluate_method)."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821  (the den package)

from den.data.tasks import Task  # noqa: E402
from den.experiments import evaluate_method  # noqa: E402
from den.io import atomic_write  # noqa: E402
from den.logs import log_to  # noqa: E402

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    model, finetune_config = None, None
    if "model" in sm.input.keys():
        from den.model.den import DEN
        from den.train.finetune import FinetuneConfig

        model, finetune_config = DEN.load(sm.input.model), FinetuneConfig(**sm.params.finetune)
    repeat = int(sm.wildcards.repeat)
    metrics = evaluate_method(dict(sm.params.method), Task.load(sm.input.data),
                              n_support=sm.params.n_support, seed=sm.params.seed, repeat=repeat,
                              model=model, finetune_config=finetune_config,
                              subtask_features=sm.params.subtask_features,
                              max_query=sm.params.max_query)
    record = {"experiment": sm.wildcards.experiment, "setting": sm.wildcards.setting,
              "method": sm.wildcards.method,
              "dataset": sm.wildcards.dataset, "repeat": repeat, **metrics}
    print(record)
    with atomic_write(sm.output.scores, "w") as handle:
        json.dump(record, handle, indent=1)
