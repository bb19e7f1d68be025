#!/usr/bin/python3
"""Predictions of a gpc sparse variational model, computed independently
from its file (gpc-formats(5), MODEL FILES): the model's ard or se kernel
between its inducing inputs z and the test inputs, the whitened columns
a = L^-1 k(z, x) with K_zz = L L', the latent mean a'm and variance
(k(x, x) - a'a) + a'Sa, and p(y = +1) = E[sigma(f)] (logistic) or
E[Phi(f)] (probit) by 200-node Gauss-Hermite quadrature.  Prints one row
per test case: p mean var.

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
    if spec == "ard":
        w = np.array([np.exp(theta[f"log_w{l + 1}"]) for l in range(d)])
    elif spec == "se":
        w = np.full(d, np.exp(theta["log_w"]))
    else:
        raise SystemExit(f"kernel {spec}: only ard and se here")
    diff = A[:, None, :] - B[None, :, :]
    return np.exp(theta["log_v0"]) * np.exp(-0.5 * np.sum(w * diff * diff, axis=2))


def main():
    model, theta, rows = read_model(sys.argv[1])
    X = np.loadtxt(sys.argv[2], ndmin=2)
    d = int(model["dim"])
    m = rows.shape[0]
    mean_q, S, Z = rows[:, 0], rows[:, 1:1 + m], rows[:, 1 + m:]
    assert Z.shape[1] == d
    L = np.linalg.cholesky(kernel(model["kernel"], theta, Z, Z, d))
    A = np.linalg.solve(L, kernel(model["kernel"], theta, Z, X, d))
    kxx = np.exp(theta["log_v0"])
    mu = A.T @ mean_q
    var = np.maximum(kxx - np.sum(A * A, axis=0), 0) + np.maximum(np.sum(A * (S @ A), axis=0), 0)
    t, w = np.polynomial.hermite_e.hermegauss(200)
    f = mu[:, None] + np.sqrt(var)[:, None] * t[None, :]
    link = expit if model["likelihood"] == "logistic" else ndtr
    p = link(f) @ w / np.sqrt(2 * np.pi)
    for row in zip(p, mu, var):
        print(" ".join(f"{v:.17g}" for v in row))


main()
