"""Rule summarize_demo: per-repeat scores -> mean and standard error per dataset and variant."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821  (the den package)

import pandas as pd  # noqa: E402

from den.evaluate import summarize  # noqa: E402
from den.io import atomic_write  # noqa: E402
from den.logs import log_to  # noqa: E402

with log_to(snakemake.log[0]):  # noqa: F821
    table = summarize(pd.concat([pd.read_csv(f) for f in snakemake.input.scores]))  # noqa: F821
    with atomic_write(snakemake.output.summary, "w") as handle:  # noqa: F821
        table.to_csv(handle, index=False)
    print(table.to_string(index=False))
