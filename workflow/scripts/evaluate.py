"""Rule evaluate: (method, dataset, repeat) -> metrics JSON (den.experiments.evaluate_method),
or, where another score file holds the same evaluation (``wc.score_index``), its metrics
under this file's experiment, setting and method."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821  (the den package)

from den.data.tasks import Task  # noqa: E402
from den.experiments import evaluate_method, load_model, score_record  # noqa: E402
from den.io import atomic_write  # noqa: E402
from den.logs import log_to  # noqa: E402

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    repeat = int(sm.wildcards.repeat)
    if "computed" in sm.input.keys():
        metrics = json.loads(Path(sm.input.computed).read_text())
        print(f"the same evaluation as {sm.input.computed}: its metrics are copied")
    else:
        protocol = dict(sm.params.protocol)
        method = dict(protocol.pop("method"))
        model = load_model(sm.input.model, method) if "model" in sm.input.keys() else None
        metrics = evaluate_method(method, Task.load(sm.input.data), repeat=repeat, model=model, **protocol)
    record = score_record(metrics, sm.wildcards.experiment, sm.wildcards.setting, sm.wildcards.method,
                          sm.wildcards.dataset, repeat)
    print(record)
    with atomic_write(sm.output.scores, "w") as handle:
        json.dump(record, handle, indent=1)
