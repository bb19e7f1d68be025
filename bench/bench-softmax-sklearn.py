"""The peer of bench-softmax: scikit-learn's GaussianProcessClassifier on the
same data, one-vs-rest (C binary Laplace approximations with the logistic
likelihood) at the same fixed hyperparameters (signal variance e, every
inverse squared length scale 1/e, as ConstantKernel * RBF with ARD length
scales), against one Cholesky of size n on the same OpenBLAS (scipy).

    python3 bench-softmax-sklearn.py PREFIX

reads PREFIX-X.txt and PREFIX-y.txt (written by bench-softmax n d C PREFIX)
and prints "key value" lines: the time of the fit (optimizer=None: one
Laplace mode per class), and of the sum over the classes of
log_marginal_likelihood(theta, eval_gradient=True) on the binary estimators
(each finds its mode again from zero and then the gradient with respect to
all d + 1 hyperparameters).
"""
import sys
import time

import numpy as np
import scipy.linalg
import sklearn
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF, ConstantKernel


def best_cholesky_seconds(A, repeats=3):
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        scipy.linalg.cholesky(A, lower=True)
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    prefix = sys.argv[1]
    X = np.loadtxt(prefix + "-X.txt")
    y = np.loadtxt(prefix + "-y.txt", dtype=int)
    n, d = X.shape
    kernel = ConstantKernel(np.e) * RBF(length_scale=np.full(d, np.exp(0.5)))
    A = kernel(X) + np.eye(n)
    t_chol = best_cholesky_seconds(A)

    gpc = GaussianProcessClassifier(kernel=kernel, optimizer=None, multi_class="one_vs_rest")
    t0 = time.perf_counter()
    gpc.fit(X, y)
    t_fit = time.perf_counter() - t0

    estimators = gpc.base_estimator_.estimators_
    t0 = time.perf_counter()
    lml, grad = 0.0, np.zeros(d + 1)
    for est in estimators:
        z, g = est.log_marginal_likelihood(est.kernel_.theta, eval_gradient=True)
        lml += z
        grad += g
    t_lml = time.perf_counter() - t0

    print("sklearn_version", sklearn.__version__)
    print("n", n)
    print("d", d)
    print("C", len(estimators))
    print("sum_log_marginal_likelihood %.10g" % lml)
    print("seconds_cholesky_scipy %.4f" % t_chol)
    print("seconds_fit %.3f" % t_fit)
    print("fit_ratio_to_cholesky %.2f" % (t_fit / t_chol))
    print("seconds_log_marginal_likelihood_with_gradient %.3f" % t_lml)
    print("lml_gradient_ratio_to_cholesky %.2f" % (t_lml / t_chol))


if __name__ == "__main__":
    main()
