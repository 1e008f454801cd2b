"""Small helpers shared by the tests."""

from sklearn.metrics import roc_auc_score

# A small architecture: the functional tests check behaviour, not accuracy.
SMALL = dict(h_units=(8, 8), embedding_dim=8, phi_units=(16, 16), psi_units=(16, 16), seed=3)


def auc(y, score):
    return float(roc_auc_score(y, score))


def split(task, n_support=50):
    return (task.x[:n_support], task.y[:n_support]), (task.x[n_support:], task.y[n_support:])
