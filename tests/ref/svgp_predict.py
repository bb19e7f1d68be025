#!/usr/bin/python3
"""Predictions of a gpc sparse variational model, computed independently
from its file (gpc-formats(5), MODEL FILES): the model's ard or se kernel
between its inducing inputs z and the test inputs, the whitened columns
a = L^-1 k(z, x) with K_zz = L L', the latent mean a'm and variance
(k(x, x) - a'a) + a'Sa, and p(y = +1) = E[sigma(f)] (logistic) or
E[Phi(f)] (probit) by 200-node Gauss-Hermite quadrature.  Prints one row
per test case: p mean var.  A model of C > 2 classes has a latent function
per class, each with its m_c and S_c, and with a kernel ":per-class=C" each
its own hyperparameters (named with ".c<class>"): then one row per test
case of the C means and the C variances.

Usage: svgp_predict.py MODEL X
"""
import math
import sys

import numpy as np


def expit(f):
    e = np.exp(-np.abs(f))
    return np.where(f >= 0, 1 / (1 + e), e / (1 + e))


ndtr = np.vectorize(lambda f: 0.5 * math.erfc(-f / math.sqrt(2)))


def read_model(path):
    lines = open(path).read().split("\n")
    model, theta, i = {}, {}, 0
    while i < len(lines):
        words = lines[i].split()
        i += 1
        if not words or words[0].startswith("#"):
            continue
        if words[0] == "hyperparameters":
            for _ in range(int(words[1])):
                name, value = lines[i].split()
                theta[name] = float(value)
                i += 1
        elif words[0] == "inducing":
            m = int(words[1])
            rows = [l for l in lines[i:] if l.strip() and not l.startswith("#")]
            return model, theta, np.array([[float(v) for v in r.split()] for r in rows[:m]])
        else:
            model[words[0]] = " ".join(words[1:])
    raise SystemExit(f"{path}: no inducing block")


def kernel(spec, theta, A, B, d):
    if spec.startswith("ard"):
        w = np.array([np.exp(theta[f"log_w{l + 1}"]) for l in range(d)])
    elif spec.startswith("se"):
        w = np.full(d, np.exp(theta["log_w"]))
    else:
        raise SystemExit(f"kernel {spec}: only ard and se here")
    diff = A[:, None, :] - B[None, :, :]
    return np.exp(theta["log_v0"]) * np.exp(-0.5 * np.sum(w * diff * diff, axis=2))


def marginals(spec, theta, mean_q, S, Z, X, d):
    L = np.linalg.cholesky(kernel(spec, theta, Z, Z, d))
    A = np.linalg.solve(L, kernel(spec, theta, Z, X, d))
    kxx = np.exp(theta["log_v0"])
    mu = A.T @ mean_q
    var = np.maximum(kxx - np.sum(A * A, axis=0), 0) + np.maximum(np.sum(A * (S @ A), axis=0), 0)
    return mu, var


def class_theta(spec, theta, c):
    if ":per-class=" not in spec:
        return theta
    tail = f".c{c + 1}"
    return {k[:-len(tail)]: v for k, v in theta.items() if k.endswith(tail)}


def main():
    model, theta, rows = read_model(sys.argv[1])
    X = np.loadtxt(sys.argv[2], ndmin=2)
    d = int(model["dim"])
    m = rows.shape[0]
    C = len(model["classes"].split())
    Z = rows[:, -d:]
    spec = model["kernel"]
    if C > 2:
        mus, vs = [], []
        for c in range(C):
            col = c * (1 + m)
            mu, var = marginals(spec, class_theta(spec, theta, c), rows[:, col],
                                rows[:, col + 1:col + 1 + m], Z, X, d)
            mus.append(mu)
            vs.append(var)
        for row in np.hstack([np.array(mus).T, np.array(vs).T]):
            print(" ".join(f"{v:.17g}" for v in row))
        return
    mean_q, S = rows[:, 0], rows[:, 1:1 + m]
    assert rows.shape[1] == 1 + m + d
    mu, var = marginals(spec, theta, mean_q, S, Z, X, d)
    t, w = np.polynomial.hermite_e.hermegauss(200)
    f = mu[:, None] + np.sqrt(var)[:, None] * t[None, :]
    link = expit if model["likelihood"] == "logistic" else ndtr
    p = link(f) @ w / np.sqrt(2 * np.pi)
    for row in zip(p, mu, var):
        print(" ".join(f"{v:.17g}" for v in row))


main()
