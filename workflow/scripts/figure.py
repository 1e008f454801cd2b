"""Rule figure: a swept experiment's evaluation JSONs -> metric against the swept value."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821  (the den package)

from den.io import atomic_write  # noqa: E402
from den.logs import log_to  # noqa: E402
from den.report import tables  # noqa: E402

sm = snakemake  # noqa: F821
spec = sm.params.experiment
with log_to(sm.log[0]):
    scores = tables.collect(sm.input.scores)
    title = tables.describe_run(scores, latex=False)
    fig = tables.plot_sweep(scores, spec["metric"], spec["methods"], title)
    for fmt in ("pdf", "png"):
        with atomic_write(sm.output[fmt]) as handle:
            fig.savefig(handle, format=fmt, dpi=150)
