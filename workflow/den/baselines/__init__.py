"""Baselines: direct models fitted on the support set (``den.baselines.direct``) and the
meta-learning baselines (``den.baselines.meta``). Importing the package imports the method
modules, which register their classes in ``den.baselines.registry``."""

from den.baselines import maml, metric  # noqa: F401  (registers the meta-learning baselines)
