#!/usr/bin/python3
"""The comparison rows of the Fashion-MNIST table, by scikit-learn on the
same split and pixels as gpc (the .npy files of fmnist-npy.py):
  - multinomial logistic regression on the 784 pixels;
  - a Nystrom feature map of the RBF kernel (2000 components, gamma from
    the median squared distance between 2000 training images) followed by
    multinomial logistic regression.
Each: test errors, mean log predictive probability of the true class and
seconds (fit and predictions), one line apiece.  Exits 3 if scikit-learn
is not installed.

Usage: fmnist-baselines.py DIR    (DIR holds X-train.npy ... as fmnist-npy.py writes them)
"""
import sys
import time
import warnings

import numpy as np

try:
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
except ImportError:
    sys.exit(3)

MAX_ITER = 1000

SEED = 1


def score(name, model, Xtr, ytr, Xte, yte):
    t0 = time.time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        model.fit(Xtr, ytr)
    stopped = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    p = model.predict_proba(Xte)
    secs = time.time() - t0
    cls = list(model.classes_)
    truth = np.array([cls.index(v) for v in yte])
    errors = int(np.sum(np.argmax(p, axis=1) != truth))
    mlpp = float(np.mean(np.log(np.maximum(p[np.arange(len(yte)), truth], 1e-300))))
    note = f" (stopped at {MAX_ITER} iterations, short of convergence)" if stopped else ""
    print(f"{name}: errors {errors} of {len(yte)} ({100 * errors / len(yte):.1f}%), "
          f"mean log predictive probability {mlpp:.4f}, {secs:.0f} s{note}")


def median_gamma(X, rng):
    rows = X[rng.choice(len(X), 2000, replace=False)]
    sq = np.sum(rows * rows, axis=1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2 * rows @ rows.T, 0)
    return 1.0 / np.median(d2[np.triu_indices(len(rows), 1)])


def main():
    d = sys.argv[1]
    Xtr, ytr = np.load(d + "/X-train.npy"), np.load(d + "/y-train.npy")
    Xte, yte = np.load(d + "/X-test.npy"), np.load(d + "/y-test.npy")
    lr = LogisticRegression(max_iter=MAX_ITER, C=1.0)
    score("logistic regression (pixels)", lr, Xtr, ytr, Xte, yte)
    rng = np.random.default_rng(SEED)
    gamma = median_gamma(Xtr, rng)
    ny = make_pipeline(Nystroem(gamma=gamma, n_components=2000, random_state=SEED),
                       LogisticRegression(max_iter=MAX_ITER, C=1.0))
    score(f"Nystrom RBF, 2000 components (gamma {gamma:.4g}) + logistic regression",
          ny, Xtr, ytr, Xte, yte)


main()
