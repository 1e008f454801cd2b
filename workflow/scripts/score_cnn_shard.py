"""Rule score_cnn_shard: train a shard of the CNN zoo of one (image set, target positive share),
save their test-image scores."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent))  # noqa: F821  (the den package)

from den.logs import log_to  # noqa: E402
from den.simulate.cnn_zoo import save_shard, score_shard, share_cutoff  # noqa: E402
from den.simulate.images import ImageData  # noqa: E402

sm = snakemake  # noqa: F821
zoo = sm.params.zoo
with log_to(sm.log[0]):
    ranges = {key: tuple(value) for key, value in zoo.get("ranges", {}).items()}
    images = ImageData.load(sm.input.images)
    cutoff = share_cutoff(images, zoo["cutoffs"], int(sm.wildcards.share))
    print(f"{images.name}: target positive share {sm.wildcards.share}% -> class cutoff {cutoff}")
    scores, archs = score_shard(images, cutoff, list(sm.params.cnn_ids), sm.params.seed, ranges,
                                max_train=zoo.get("max_train"), progress="stderr")
    save_shard(sm.output.scores, scores, archs)
