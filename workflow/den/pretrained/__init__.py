"""The pre-trained DENs shipped with the package: ``DENClassifier()`` and ``den predict`` use
them when no model is given.

Two binary-head models (package data) serve every task; a task of more than two classes gets
one binary DEN per class (``den.train.finetune.fit_task``), which on held-back multiclass corpus
sets was 33 accuracy points above the multiclass head (docs/benchmarks/corpus-dev.md):

- ``den-binary-no-plf.npz``: no PLF block, the model of the default preset (network
  adaptation on two-class tasks, none on more), of "fast" (no fine-tuning) and of "adapt".
  It pools over tuples by gated pooling and reads each tuple's leave-one-out relevance on the
  support rows (``ModelConfig.gated_pooling``, ``tuple_relevance``). On the held-back corpus
  sets this was 0.85 AUC above the same model without those two (and that one 0.4 above the
  model with PLFs), about 1 point above a random forest (two seeds each); pre-training it
  also on binary cuts of the multiclass sets added about 0.45 more (three runs,
  docs/benchmarks/corpus-dev.md). Since session 11 the relevance weighs each class's support
  rows by one half (``balanced_relevance``), so one class against the rest counts the class's
  few rows as much as the rest: +0.36 accuracy on the held-back multiclass sets (three seeds),
  +0.13 on the benchmark's, binary AUC unchanged. Since session 39 phi also reads each tuple
  feature's Gaussian naive-Bayes term at the query (``linear_evidence``): +0.41 AUC over two
  pre-training seeds on 32 real sets no model had seen, +0.35 AUC and +0.30 accuracy on the
  benchmark.
- ``den-binary-plf.npz``: the same settings with the paper's PLF calibration, the model a
  fit that fine-tunes uses (``preset="paper"`` or ``variant="den"``): fine-tuning tunes the
  PLFs, and a model without them has nothing to tune.

Both are built by the workflow from every corpus and tabular set, a multiclass one cut into
binary tasks (``make shipped-model``: rule ``shipped_model`` of config/corpus.yaml, then a copy
here); docs/model-card.md says what they were trained on, how, and how well they do.
"""

from __future__ import annotations

from pathlib import Path

from den.errors import DENModelError

# The shipped models by whether their fit fine-tunes the calibration.
SHIPPED_MODELS = {False: Path(__file__).with_name("den-binary-no-plf.npz"),
                  True: Path(__file__).with_name("den-binary-plf.npz")}

# What ``DENClassifier(preset=...)`` and ``den predict --preset`` set when the variant is left
# open (docs/benchmarks/corpus-dev.md, docs/benchmarks/corpus.md):
# - "default": the preset validated on held-back corpus sets. A two-class task adapts the
#   PLF-free model's network to the support set (``ADAPT_NETWORK_STEPS`` Adam steps at
#   ``ADAPT_NETWORK_LEARNING_RATE``, ``den.train.finetune.adapt_network``): +0.39, +0.37 and
#   +0.31 AUC on the held-back corpus sets for three pre-training seeds, then +0.10 on the
#   benchmark's 16 binary sets, for a fit of under a second. A task of more classes is fitted
#   without adaptation (``one_vs_rest: False``): on the held-back multiclass sets adapting each
#   class's binary task was within noise (+0.12, +0.60, -0.31) at one adaptation per class.
#   Since session 42 it adapts at 1e-4 instead of 3e-4: on 32 real sets no model had seen,
#   +0.34, +0.67 and +0.90 AUC (s.e. 0.23-0.33) over three pairs of pre-training seeds; on the
#   benchmark's 16 binary sets -0.05 (s.e. 0.07), within the rule set before it ran
#   (docs/benchmarks/corpus-dev.md, "Session 42").
# - "fast": no fine-tuning at all (the default until session 10): keypoints and the support set,
#   a fit of milliseconds.
# - "adapt": network adaptation on every task, each class of a multiclass one as well.
# - "paper": fine-tunes the PLF model's calibration as the paper's appendix B does (the
#   ``finetune_*`` defaults: 10 epochs x 10 steps at 0.001, each step on a sample of
#   ``FINETUNE_TUPLES_PER_STEP`` tuples); with the PLF model, fine-tuning did not raise AUC and
#   costs 0.45 s a fit (1.3 s over every tuple) against milliseconds without it (`den.bench`),
#   and dropping the PLFs raised it.
PRESETS = {"default": {"variant": "adapt", "one_vs_rest": False},
           "fast": {"variant": "no_finetune"},
           "paper": {"variant": "den"},
           "adapt": {"variant": "adapt", "one_vs_rest": True}}
# The adapt preset's settings (DENClassifier, den predict, the workflow's ``adapt`` variant),
# chosen on the held-back corpus sets; here, not in den.train.finetune, so the command line
# states them without importing TensorFlow.
ADAPT_NETWORK_STEPS = 50
ADAPT_NETWORK_LEARNING_RATE = 1e-4
# The tuples each step of a fit that fine-tunes the PLFs reads (DENClassifier's and den
# predict's ``finetune_tuples_per_step``: "paper" and variant "den"), a fresh random sample a
# step (``FinetuneConfig.tuples_per_step``); prediction still pools over every tuple. On the
# held-back corpus sets (both folds, PLF models pre-trained with the shipped settings) the
# paper's fine-tuning over 128 of the 625 triples a step scored +0.06 AUC (s.e. 0.14) against
# every tuple, +0.19 (0.15) on the real sets, for 0.45 s a fit instead of 1.16 s
# (docs/benchmarks/speed.md, session 28). FinetuneConfig's own default, which the workflow's
# reproduction configs use, stays every tuple, as in the paper.
FINETUNE_TUPLES_PER_STEP = 128


def shipped_model_path(finetune: bool = False) -> Path:
    """Path of the shipped model for a fit that fine-tunes (the PLF model) or does not (the
    PLF-free model, the default preset's).

    Raises:
        DENModelError: the file is missing (a source tree whose models were not built).
    """
    path = SHIPPED_MODELS[bool(finetune)]
    if not path.is_file():
        raise DENModelError(f"the shipped pre-trained model {path} is missing; build it with "
                            f"`make shipped-model` or pass model=<path of a pre-trained DEN>")
    return path
