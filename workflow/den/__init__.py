"""Distribution Embedding Networks (DEN): meta-learning for classification with small data.

Liu, Milani Fard and Zhao, "Distribution Embedding Networks for Generalization from a
Diverse Set of Classification Tasks". Entry points:

- ``den.api.DENClassifier``: a pre-trained DEN fine-tuned on a small support set
  (scikit-learn style; ``den.fitting.fit_table`` is the same fit without scikit-learn).
- ``den.train.pretrain.pretrain``: episodic pre-training over tasks of any width.
- ``den.model.den.DEN``: a model, ``DEN.save`` / ``DEN.load``.
- ``python -m den``: the command line.

TensorFlow is imported lazily (only when a model is built), so ``import den`` is cheap.
"""

__version__ = "0.1.0"

from den._dependencies import check_versions as _check_versions

_check_versions()  # pandas, scikit-learn, ... at least the versions den declares (clear error if not)
