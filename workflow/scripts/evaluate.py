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
    from den.experiments import load_model

    protocol = dict(sm.params.protocol)
    method = dict(protocol.pop("method"))
    model = load_model(sm.input.model, method) if "model" in sm.input.keys() else None
    repeat = int(sm.wildcards.repeat)
    metrics = evaluate_method(method, Task.load(sm.input.data), repeat=repeat, model=model, **protocol)
    record = {"experiment": sm.wildcards.experiment, "setting": sm.wildcards.setting,
              "method": sm.wildcards.method,
              "dataset": sm.wildcards.dataset, "repeat": repeat, **metrics}
    print(record)
    with atomic_write(sm.output.scores, "w") as handle:
        json.dump(record, handle, indent=1)
