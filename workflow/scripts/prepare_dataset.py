"""Rule prepare_dataset: config entry -> results/data/<dataset>.npz (den.data.sources)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821  (the den package)

from den.data.sources import load_tabular  # noqa: E402
from den.logs import log_to  # noqa: E402

with log_to(snakemake.log[0]):  # noqa: F821
    task = load_tabular(snakemake.wildcards.dataset, snakemake.params.spec,  # noqa: F821
                        cache_dir=snakemake.params.cache_dir)  # noqa: F821
    print(f"{task.name}: {task.n_rows} rows, {task.n_features} features, {task.n_classes} classes")
    task.save(snakemake.output.data)  # noqa: F821
