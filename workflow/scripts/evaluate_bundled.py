"""Rule evaluate_bundled: pre-trained DEN + bundled dataset -> per-repeat scores."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821  (the den package)

from den.data.sources import load_sklearn  # noqa: E402
from den.evaluate import evaluate_repeats  # noqa: E402
from den.io import atomic_write  # noqa: E402
from den.logs import log_to  # noqa: E402
from den.model.den import DEN  # noqa: E402
from den.train.finetune import FinetuneConfig  # noqa: E402

p = snakemake.params  # noqa: F821
with log_to(snakemake.log[0]):  # noqa: F821
    scores = evaluate_repeats(DEN.load(snakemake.input.model), load_sklearn(snakemake.wildcards.dataset),  # noqa: F821
                              n_support=p.evaluate["n_support"], repeats=p.evaluate["repeats"],
                              seed=p.seed, finetune_config=FinetuneConfig(**p.finetune))
    with atomic_write(snakemake.output.scores, "w") as handle:  # noqa: F821
        scores.to_csv(handle, index=False)
