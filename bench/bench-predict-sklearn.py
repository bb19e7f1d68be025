"""The peer of bench-predict.sh: scikit-learn's GaussianProcessClassifier
fitted at gpc's default ARD hyperparameters (ConstantKernel(1) * RBF with
every length scale e, optimizer=None), and the time of predict_proba on the
same 1000 test points (best of three), beside gpc-predict's whole-process
time; also the largest difference between the two sets of probabilities
(they approximate the predictive integral differently).

    python3 bench-predict-sklearn.py DIR GPC_SECONDS
"""
import sys
import time

import numpy as np
import sklearn
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF, ConstantKernel


def main():
    d, gpc_seconds = sys.argv[1], float(sys.argv[2])
    X = np.loadtxt(d + "/Xtr.txt")
    y = np.loadtxt(d + "/ytr.txt", dtype=int)
    Xs = np.loadtxt(d + "/Xte.txt")
    kernel = ConstantKernel(1.0, constant_value_bounds="fixed") * RBF(
        length_scale=np.full(X.shape[1], np.e), length_scale_bounds="fixed")
    model = GaussianProcessClassifier(kernel=kernel, optimizer=None).fit(X, y)
    best = np.inf
    for _ in range(3):
        t0 = time.perf_counter()
        p = model.predict_proba(Xs)
        best = min(best, time.perf_counter() - t0)
    ours = np.loadtxt(d + "/gpc.pred", comments="#", ndmin=2)
    ours = ours[:, -1]  # p(+1), the last class column
    print("sklearn_version", sklearn.__version__)
    print("seconds_sklearn_predict_proba", "%.4g" % best)
    print("gpc_over_sklearn", "%.2f" % (gpc_seconds / best))
    print("largest_probability_difference", "%.2g" % np.max(np.abs(ours - p[:, 1])))


if __name__ == "__main__":
    main()
