"""The pre-trained DEN shipped with the package: ``DENClassifier()`` and ``den predict`` use it
when no model is given.

One binary-head model (``den-binary.npz``, package data) serves every task: a task of more
than two classes gets one binary DEN per class (``den.train.finetune.fit_task``), which on
held-back multiclass corpus sets was 33 accuracy points above the multiclass head
(docs/benchmarks/corpus-dev.md). It is built by the workflow from the corpus and tabular
binary sets (``make shipped-model``: rule ``shipped_model`` of config/corpus.yaml, then a copy
here); docs/model-card.md says what it was trained on, how, and how well it does.
"""

from __future__ import annotations

from pathlib import Path

from den.errors import DENModelError

SHIPPED_BINARY = Path(__file__).with_name("den-binary.npz")

# What ``DENClassifier(preset=...)`` and ``den predict --preset`` set when the variant is left
# open. "default" is the preset validated on held-back corpus sets (docs/benchmarks/corpus-dev.md):
# with the shipped local-embedding model, fine-tuning did not raise AUC and cost ~25x the time.
# "paper" fine-tunes the calibration as the paper's appendix B does (the ``finetune_*``
# defaults: 10 epochs x 10 steps at learning rate 0.001).
PRESETS = {"default": {"variant": "no_finetune"}, "paper": {"variant": "den"}}


def shipped_model_path() -> Path:
    """Path of the shipped binary-head model.

    Raises:
        DENModelError: the file is missing (a source tree whose model was not built).
    """
    if not SHIPPED_BINARY.is_file():
        raise DENModelError(f"the shipped pre-trained model {SHIPPED_BINARY} is missing; build it with "
                            f"`make shipped-model` or pass model=<path of a pre-trained DEN>")
    return SHIPPED_BINARY
