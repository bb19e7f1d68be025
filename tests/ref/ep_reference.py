#!/usr/bin/python3
"""Reference EP log evidence for binary GP classification (probit likelihood).

    /usr/bin/python3 ep_reference.py X.txt y.txt log_v0 log_w1 ... log_wd

prints log Z_EP, the expectation-propagation approximation to the log marginal
likelihood log p(y | X, theta), with %.17g.  With --check it also prints the
same quantity evaluated by the textbook formula (R&W eq. 3.65) directly, as a
second line, for a self-check of the numerically stable form.

Written from the mathematics only (Rasmussen & Williams 2006, section 3.6,
Alg. 3.5, eqs. 3.56-3.65), with plain dense numpy linear algebra, so that it is
independent of the C implementation in src/lib/methods/ep.c it is used to test.

Model: f ~ GP(0, k), p(y_i | f_i) = Phi(y_i f_i), y_i in {-1, +1}, and the
ARD squared-exponential covariance of gpc's kernel 'ard':

    k(x, x') = v0 * exp(-1/2 * sum_l w_l (x_l - x'_l)^2),
    theta = (log v0, log w_1, ..., log w_d)   (w_l are inverse squared lengths).

EP: site approximations t_i(f_i) = Z~_i N(f_i | mu~_i, 1/tau~_i), natural
parameters tau~_i and nu~_i = tau~_i mu~_i.  Sequential sweeps: for each i form
the cavity N(mu_-i, 1/tau_-i) from the current posterior marginal, match the
moments of the tilted distribution Phi(y_i f) N(f | mu_-i, 1/tau_-i), set the
site so that the new posterior marginal has those moments, and update Sigma by
a rank-one correction.  After each sweep Sigma and mu are recomputed from
scratch.  Stop when no site parameter moves by more than TOL (relative to
1 + |value|) in a sweep, or, for an ill-conditioned K, when the moves have
stalled at a roundoff floor below FLOOR (with a note on standard error).
"""

import math
import sys

import numpy as np

TOL = 1e-13
FLOOR = 1e-9
STALL = 5
MAX_SWEEPS = 1000
LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


# ---- the standard normal -----------------------------------------------------

def log_npdf(z):
    return -0.5 * z * z - LOG_SQRT_2PI


def log_mills(x):
    """log R(x), R(x) = Phi(-x) / phi(x), for x >= 20, by Laplace's continued
    fraction R(x) = 1 / (x + 1 / (x + 2 / (x + 3 / (x + ...)))), evaluated from
    the tail.  At x >= 20, 60 levels are far past double precision."""
    t = x
    for k in range(60, 0, -1):
        t = x + k / t
    return -math.log(t)


def log_ncdf(z):
    """log Phi(z) to near full relative precision for every z."""
    if z < -20.0:
        # Phi(z) = phi(z) R(-z); erfc would underflow below about z = -37.
        return log_npdf(z) + log_mills(-z)
    if z < 0.0:
        # erfc is accurate to relative precision for positive arguments.
        return math.log(0.5 * math.erfc(-z / math.sqrt(2.0)))
    # log Phi(z) = log(1 - Phi(-z)), small Phi(-z) kept exact by log1p.
    return math.log1p(-0.5 * math.erfc(z / math.sqrt(2.0)))


def npdf_over_ncdf(z):
    """phi(z) / Phi(z), by logs (stable in the far left tail, where it ~ -z)."""
    return math.exp(log_npdf(z) - log_ncdf(z))


# ---- input ---------------------------------------------------------------------

def read_matrix(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.split('#', 1)[0].split()
            if line:
                rows.append([float(v) for v in line])
    if not rows:
        sys.exit("ep_reference: %s: no data" % path)
    d = len(rows[0])
    if any(len(r) != d for r in rows):
        sys.exit("ep_reference: %s: ragged rows" % path)
    return np.array(rows, dtype=float)


# ---- the kernel ------------------------------------------------------------------

def ard_kernel(X, log_v0, log_w):
    n, d = X.shape
    w = np.exp(np.asarray(log_w, dtype=float))
    r2 = np.zeros((n, n))
    for l in range(d):
        diff = X[:, l][:, None] - X[:, l][None, :]
        r2 += w[l] * diff * diff
    return math.exp(log_v0) * np.exp(-0.5 * r2)


# ---- EP ------------------------------------------------------------------------------

def posterior(K, tau, nu):
    """Sigma = (K^-1 + S~)^-1 = K - K S^1/2 B^-1 S^1/2 K with B = I + S^1/2 K S^1/2,
    mu = Sigma nu~; also the Cholesky factor L of B."""
    n = K.shape[0]
    s = np.sqrt(tau)
    B = np.eye(n) + s[:, None] * K * s[None, :]
    L = np.linalg.cholesky(B)
    V = np.linalg.solve(L, s[:, None] * K)          # L^-1 S^1/2 K
    Sigma = K - V.T @ V
    Sigma = 0.5 * (Sigma + Sigma.T)
    return Sigma, Sigma @ nu, L


def tilted_moments(y, mu_c, var_c):
    """Mean and variance of Phi(y f) N(f | mu_c, var_c) / Zhat, and log Zhat."""
    den = math.sqrt(1.0 + var_c)
    z = y * mu_c / den
    r = npdf_over_ncdf(z)
    mean = mu_c + y * var_c * r / den
    var = var_c - var_c * var_c * r * (z + r) / (1.0 + var_c)
    return mean, var, log_ncdf(z)


def ep(K, y):
    n = K.shape[0]
    tau = np.zeros(n)
    nu = np.zeros(n)
    Sigma = K.copy()
    mu = np.zeros(n)
    best, stalled = math.inf, 0
    for sweep in range(1, MAX_SWEEPS + 1):
        change = 0.0
        for i in range(n):
            tau_c = 1.0 / Sigma[i, i] - tau[i]
            nu_c = mu[i] / Sigma[i, i] - nu[i]
            if tau_c <= 0.0:
                sys.exit("ep_reference: negative cavity precision at site %d" % (i + 1))
            mean, var, _ = tilted_moments(y[i], nu_c / tau_c, 1.0 / tau_c)
            tau_new = 1.0 / var - tau_c
            nu_new = mean / var - nu_c
            if tau_new < 0.0:
                # cannot happen for the (log-concave) probit likelihood
                sys.exit("ep_reference: negative site precision at site %d" % (i + 1))
            dtau = tau_new - tau[i]
            change = max(change,
                         abs(dtau) / (1.0 + abs(tau_new)),
                         abs(nu_new - nu[i]) / (1.0 + abs(nu_new)))
            tau[i] = tau_new
            nu[i] = nu_new
            si = Sigma[:, i].copy()
            Sigma -= (dtau / (1.0 + dtau * si[i])) * np.outer(si, si)
            mu = Sigma @ nu
        Sigma, mu, L = posterior(K, tau, nu)
        if change < TOL:
            return tau, nu, Sigma, mu, L, sweep
        # With an ill-conditioned K the site changes can stall at a roundoff
        # floor above TOL (e.g. 2e-12 at v0 = e^6, w = e^-5 on Pima); accept
        # once they are small and have not fallen tenfold in STALL sweeps.
        if change < 0.1 * best:
            best, stalled = change, 0
        else:
            stalled += 1
        if change < FLOOR and stalled >= STALL:
            print("ep_reference: stopped at a roundoff floor, site changes %.1e"
                  % change, file=sys.stderr)
            return tau, nu, Sigma, mu, L, sweep
    sys.exit("ep_reference: no convergence in %d sweeps" % MAX_SWEEPS)


def cavities(Sigma, mu, tau, nu):
    d = np.diag(Sigma)
    tau_c = 1.0 / d - tau
    nu_c = mu / d - nu
    return tau_c, nu_c


def log_evidence(K, y, tau, nu, Sigma, mu, L):
    """Eq. 3.65 rearranged so that nothing divides by a site precision:

    log Z_EP = sum_i log Phi(z_i)
             + 1/2 sum_i log(1 + tau~_i / tau_-i) - sum_i log L_ii
             + 1/2 nu~' Sigma nu~
             + sum_i (tau_-i tau~_i mu_-i^2 - 2 nu_-i nu~_i - nu~_i^2) / (2 (tau_-i + tau~_i)),

    using log|K + S~^-1| = -sum log tau~_i + 2 sum log L_ii and
    (K + S~^-1)^-1 = S~ - S~ Sigma S~."""
    tau_c, nu_c = cavities(Sigma, mu, tau, nu)
    mu_c = nu_c / tau_c
    lz = 0.0
    for i in range(len(y)):
        lz += log_ncdf(y[i] * mu_c[i] / math.sqrt(1.0 + 1.0 / tau_c[i]))
    lz += 0.5 * float(np.sum(np.log1p(tau / tau_c)))
    lz -= float(np.sum(np.log(np.diag(L))))
    lz += 0.5 * float(nu @ Sigma @ nu)
    lz += float(np.sum((tau_c * tau * mu_c ** 2 - 2.0 * nu_c * nu - nu ** 2)
                       / (2.0 * (tau_c + tau))))
    return lz


def log_evidence_direct(K, y, tau, nu, Sigma, mu):
    """Eq. 3.65 as printed, with Sigma~ = diag(1/tau~), mu~ = nu~ / tau~:

    log Z_EP = -1/2 log|K + Sigma~| - 1/2 mu~' (K + Sigma~)^-1 mu~
             + sum_i log Phi(z_i) + 1/2 sum_i log(var_-i + var~_i)
             + sum_i (mu_-i - mu~_i)^2 / (2 (var_-i + var~_i)).

    Loses precision when some tau~_i is tiny; for the self-check only."""
    tau_c, nu_c = cavities(Sigma, mu, tau, nu)
    mu_c = nu_c / tau_c
    var_c = 1.0 / tau_c
    var_s = 1.0 / tau
    mu_s = nu / tau
    A = K + np.diag(var_s)
    sign, logdet = np.linalg.slogdet(A)
    lz = -0.5 * logdet - 0.5 * float(mu_s @ np.linalg.solve(A, mu_s))
    for i in range(len(y)):
        lz += log_ncdf(y[i] * mu_c[i] / math.sqrt(1.0 + var_c[i]))
    lz += 0.5 * float(np.sum(np.log(var_c + var_s)))
    lz += float(np.sum((mu_c - mu_s) ** 2 / (2.0 * (var_c + var_s))))
    return lz


def main(argv):
    check = False
    if argv and argv[0] == "--check":
        check = True
        argv = argv[1:]
    if len(argv) < 3:
        sys.exit("usage: ep_reference.py [--check] X.txt y.txt log_v0 log_w1 ... log_wd")
    X = read_matrix(argv[0])
    y = read_matrix(argv[1])
    if y.shape[1] != 1 or y.shape[0] != X.shape[0]:
        sys.exit("ep_reference: y must be one column with a row per row of X")
    y = y[:, 0]
    if not np.all((y == 1.0) | (y == -1.0)):
        sys.exit("ep_reference: labels must be -1 or +1")
    theta = [float(v) for v in argv[2:]]
    if len(theta) != 1 + X.shape[1]:
        sys.exit("ep_reference: need log_v0 and %d log_w values, got %d numbers"
                 % (X.shape[1], len(theta)))
    K = ard_kernel(X, theta[0], theta[1:])
    tau, nu, Sigma, mu, L, sweeps = ep(K, y)
    print("%.17g" % log_evidence(K, y, tau, nu, Sigma, mu, L))
    if check:
        print("%.17g" % log_evidence_direct(K, y, tau, nu, Sigma, mu))
        print("# %d sweeps" % sweeps, file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
