"""Rule simulated_task: CNN-zoo shards of one (image set, cutoff) -> a task file."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821  (the den package)

from den.logs import log_to  # noqa: E402
from den.simulate.cnn_zoo import simulated_task  # noqa: E402
from den.simulate.images import ImageData  # noqa: E402

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    name = f"sim-{sm.wildcards.images}-c{sm.wildcards.cutoff}"
    images = ImageData.load(sm.input.images)
    task = simulated_task(name, images, int(sm.wildcards.cutoff), list(sm.input.shards))
    print(f"{name}: {task.n_rows} rows, {task.n_features} CNN scores, positive share {task.y.mean():.2f}")
    task.save(sm.output.data)
