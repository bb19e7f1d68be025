#!/usr/bin/python3
"""Reference covariance matrices for gpc's kernel specs, to check gpc-kernel.

    /usr/bin/python3 kernel_reference.py [--tol T] [--sklearn] X XS CASE...

where each CASE is four arguments, SPEC PARAMS K KS: a kernel spec, the
hyperparameters as 'name value' lines (what `gpc-kernel -k SPEC -L X` prints),
and gpc-kernel's K(X, X) and K(X, XS) for them (text matrices).  For each case
it checks that the names in PARAMS are, in order, the spec's layout below
(exit 2 if not, as for a bad spec or file), computes both matrices here and prints one line

    SPEC  err_K  err_KS  min_eig/max_eig [err_sklearn]

err being max |gpc - reference| / max |reference| (relative to the largest
entry) and the eigenvalues those of gpc's K.  It exits 1 if some error exceeds
T (default 1e-12) or some K has an eigenvalue below -1e-10 times the largest.
With --sklearn every case is one term on one-column inputs, and gpc's matrices
are compared also with scikit-learn's kernels as its documentation writes them
(Matern, RationalQuadratic, ExpSineSquared, DotProduct, times a constant), the
hyperparameters converted by the formulas in sklearn_form.

Written from the formulas in the comment of src/lib/kernels/kernel.h only,
sharing no code with gpc.  With q = sum_l w_l (x_l - x'_l)^2 over the term's
columns (w_l = w for the isotropic forms) and r = sqrt(q):

    ard, se              v0 exp(-q/2)
    matern12, 32, 52     v0 exp(-r), v0 (1 + sqrt3 r) exp(-sqrt3 r),
                         v0 (1 + sqrt5 r + 5 q/3) exp(-sqrt5 r); ARD: ...ard
    rq, rqard            v0 (1 + q / (2 alpha))^-alpha
    periodic(ard)        v0 exp(-2 sum_l w_l sin^2(pi (x_l - x'_l) / p_l))
    poly<P>              v (c + x.x')^P
    linear               v x.x'
    nn                   v0 (2/pi) asin(2u(x,x') / sqrt((1+2u(x,x))(1+2u(x',x')))),
                         u(x, x') = s0 + s x.x'
    bias, jitter         b; j on the diagonal of K(X, X) only

Hyperparameters are the logs of those, named as listed in TERMS (the ARD ones
numbered by input column, 'log_w3'), terms numbered 1, 2, ... left to right;
a term whose name another term also has gets the prefix 't<k>.' on all its
names.  Spec grammar: sum = product {'+' product}, product = factor {'*'
factor}, factor = term | '(' sum ')', term = NAME ['@' columns], columns a
comma list of numbers and ranges a-b (1-based).
"""

import math
import re
import sys

import numpy as np

EIG_TOL = 1e-10

# Each term's hyperparameter names; 'w*' and 'p*' stand for one per column.
TERMS = {
    'ard': ['log_v0', 'log_w*'], 'se': ['log_v0', 'log_w'],
    'matern12': ['log_v0', 'log_w'], 'matern32': ['log_v0', 'log_w'],
    'matern52': ['log_v0', 'log_w'],
    'matern12ard': ['log_v0', 'log_w*'], 'matern32ard': ['log_v0', 'log_w*'],
    'matern52ard': ['log_v0', 'log_w*'],
    'rq': ['log_v0', 'log_w', 'log_alpha'],
    'rqard': ['log_v0', 'log_w*', 'log_alpha'],
    'periodic': ['log_v0', 'log_w', 'log_p'],
    'periodicard': ['log_v0', 'log_w*', 'log_p*'],
    'poly': ['log_v', 'log_c'], 'linear': ['log_v'],
    'nn': ['log_v0', 'log_s0', 'log_s'],
    'bias': ['log_bias'], 'jitter': ['log_jitter'],
}


class SpecError(Exception):
    pass


# ---- the spec ---------------------------------------------------------------

class Term:
    def __init__(self, name, cols, number):
        m = re.fullmatch(r'poly([1-9][0-9]*)', name)
        self.kind, self.degree = ('poly', int(m.group(1))) if m else (name, 0)
        if self.kind not in TERMS or name == 'poly':
            raise SpecError('unknown term ' + name)
        self.cols, self.number, self.text = cols, number, name
        self.names = []
        for n in TERMS[self.kind]:
            if n.endswith('*'):
                self.names += ['%s%d' % (n[:-1], c + 1) for c in cols]
            else:
                self.names.append(n)


def parse(spec, dim):
    """The spec as nested ('+' | '*', [children]) tuples over Terms, and the
    list of Terms left to right."""
    tokens = re.findall(r'[a-z0-9]+(?:@[0-9,\-]+)?|[+*()]', spec)
    if ''.join(tokens) != spec:
        raise SpecError('cannot tokenise ' + spec)
    terms, pos = [], [0]

    def peek():
        return tokens[pos[0]] if pos[0] < len(tokens) else None

    def take():
        pos[0] += 1
        return tokens[pos[0] - 1]

    def chain(op, sub):
        parts = [sub()]
        while peek() == op:
            take()
            parts.append(sub())
        return parts[0] if len(parts) == 1 else (op, parts)

    def factor():
        t = take() if peek() else None
        if t == '(':
            s = chain('+', product)
            if take() != ')':
                raise SpecError('unclosed (')
            return s
        if t is None or t in '+*)':
            raise SpecError('expected a term')
        name, _, cols = t.partition('@')
        terms.append(Term(name, columns(cols, dim), len(terms) + 1))
        return terms[-1]

    def product():
        return chain('*', factor)

    tree = chain('+', product)
    if peek() is not None:
        raise SpecError('trailing ' + peek())
    return tree, terms


def columns(text, dim):
    if not text:
        return list(range(dim))
    cols = []
    for part in text.split(','):
        m = re.fullmatch(r'([1-9][0-9]*)(?:-([1-9][0-9]*))?', part)
        if not m or int(m.group(2) or m.group(1)) > dim:
            raise SpecError('bad columns ' + text)
        cols += range(int(m.group(1)) - 1, int(m.group(2) or m.group(1)))
    return cols


def layout(terms):
    """All hyperparameter names in order, prefixed where terms share one."""
    out = []
    for t in terms:
        others = {n for u in terms if u is not t for n in u.names}
        shared = any(n in others for n in t.names)
        out += [('t%d.' % t.number if shared else '') + n for n in t.names]
    return out


# ---- the terms --------------------------------------------------------------

def term_matrix(t, theta, A, B, same):
    """Term t (log hyperparameters theta, in its names' order) between the rows
    of A and B; same: B is A (the jitter's diagonal)."""
    A, B = A[:, t.cols], B[:, t.cols]
    e = np.exp(theta)
    diff = A[:, None, :] - B[None, :, :]
    k = t.kind
    if k == 'bias':
        return np.full(diff.shape[:2], e[0])
    if k == 'jitter':
        return e[0] * np.eye(len(A)) if same else np.zeros(diff.shape[:2])
    if k in ('linear', 'poly', 'nn'):
        dot = A @ B.T
        if k == 'linear':
            return e[0] * dot
        if k == 'poly':
            return e[0] * (e[1] + dot) ** t.degree
        s0, s = e[1], e[2]
        ua = s0 + s * np.sum(A * A, axis=1)
        ub = s0 + s * np.sum(B * B, axis=1)
        z = 2 * (s0 + s * dot) / np.sqrt(np.outer(1 + 2 * ua, 1 + 2 * ub))
        return e[0] * 2 / math.pi * np.arcsin(z)
    ncol = len(t.cols)
    w = e[1:1 + ncol] if k.endswith('ard') else np.full(ncol, e[1])
    v0 = e[0]
    if k.startswith('periodic'):
        p = e[1 + ncol:] if k == 'periodicard' else np.full(ncol, e[2])
        return v0 * np.exp(-2 * np.sum(w * np.sin(math.pi * diff / p) ** 2, axis=2))
    q = np.sum(w * diff ** 2, axis=2)
    r = np.sqrt(q)
    if k in ('ard', 'se'):
        return v0 * np.exp(-q / 2)
    if k.startswith('matern12'):
        return v0 * np.exp(-r)
    if k.startswith('matern32'):
        return v0 * (1 + math.sqrt(3) * r) * np.exp(-math.sqrt(3) * r)
    if k.startswith('matern52'):
        return v0 * (1 + math.sqrt(5) * r + 5 * q / 3) * np.exp(-math.sqrt(5) * r)
    alpha = e[-1]                       # rq, rqard
    return v0 * np.exp(-alpha * np.log1p(q / (2 * alpha)))


def kernel_matrix(tree, terms, theta, A, B, same):
    start, at = 0, {}
    for t in terms:
        at[t.number] = theta[start:start + len(t.names)]
        start += len(t.names)

    def value(node):
        if isinstance(node, Term):
            return term_matrix(node, at[node.number], A, B, same)
        op, parts = node
        vals = [value(p) for p in parts]
        return sum(vals) if op == '+' else np.prod(vals, axis=0)
    return value(tree)


# ---- scikit-learn's parametrisation -----------------------------------------

def bessel_k_half(nu, z):
    """K_nu(z) for nu = n + 1/2 in closed form (Abramowitz & Stegun 10.2.15)."""
    n = int(nu - 0.5)
    s = sum(math.factorial(n + j) / (math.factorial(j) * math.factorial(n - j))
            * (2 * z) ** -j for j in range(n + 1))
    return np.sqrt(math.pi / (2 * z)) * np.exp(-z) * s


def sklearn_form(t, theta, a, b):
    """Term t on one-column inputs a, b as scikit-learn documents it, with
    gpc's hyperparameters converted: length_scale = w^-1/2, periodicity = p,
    sigma_0 = sqrt(c), and the amplitude a ConstantKernel."""
    e = np.exp(theta)
    d = np.abs(a[:, None] - b[None, :])
    k = t.kind
    if k == 'linear':                   # ConstantKernel(v) * DotProduct(0)
        return e[0] * (0.0 + np.outer(a, b))
    if k == 'poly':                     # ConstantKernel(v) * DotProduct(sqrt c)**P
        sigma0 = math.sqrt(e[1])
        return e[0] * (sigma0 ** 2 + np.outer(a, b)) ** t.degree
    ls = e[1] ** -0.5
    if k in ('ard', 'se'):              # RBF(ls)
        return e[0] * np.exp(-d ** 2 / (2 * ls ** 2))
    if k.startswith('matern'):          # Matern(ls, nu)
        nu = {'12': 0.5, '32': 1.5, '52': 2.5}[k[6:8]]
        z = math.sqrt(2 * nu) * d / ls
        zs = np.where(z > 0, z, 1.0)
        m = 1 / (math.gamma(nu) * 2 ** (nu - 1)) * zs ** nu * bessel_k_half(nu, zs)
        return e[0] * np.where(z > 0, m, 1.0)
    if k in ('rq', 'rqard'):            # RationalQuadratic(ls, alpha)
        alpha = e[-1]
        return e[0] * (1 + d ** 2 / (2 * alpha * ls ** 2)) ** -alpha
    if k in ('periodic', 'periodicard'):  # ExpSineSquared(ls, periodicity)
        p = e[2]
        return e[0] * np.exp(-2 * np.sin(math.pi * d / p) ** 2 / ls ** 2)
    raise SpecError('no scikit-learn form for ' + t.text)


# ---- the checks ---------------------------------------------------------------

def read_params(path):
    names, values = [], []
    with open(path) as f:
        for line in f:
            fields = line.split()
            if fields:
                names.append(fields[0])
                values.append(float(fields[1]))
    return names, np.array(values)


def rel_err(got, want):
    if got.shape != want.shape:
        return math.inf
    scale = np.max(np.abs(want))
    diff = np.max(np.abs(got - want))
    return diff / scale if scale > 0 else diff


def check(spec, params, kfile, ksfile, X, Xs, sklearn):
    tree, terms = parse(spec, X.shape[1])
    names, theta = read_params(params)
    want = layout(terms)
    if names != want:
        raise SpecError('%s: names %s, expected %s' % (spec, names, want))
    K = np.loadtxt(kfile, ndmin=2)
    Ks = np.loadtxt(ksfile, ndmin=2)
    errs = [rel_err(K, kernel_matrix(tree, terms, theta, X, X, True)),
            rel_err(Ks, kernel_matrix(tree, terms, theta, X, Xs, False))]
    eig = np.linalg.eigvalsh(K)
    ratio = eig[0] / max(abs(eig[0]), abs(eig[-1]))
    line = '%-40s %9.2e %9.2e %10.2e' % (spec, errs[0], errs[1], ratio)
    if sklearn:
        if len(terms) != 1 or X.shape[1] != 1:
            raise SpecError('--sklearn takes one term on one column: ' + spec)
        t, x, xs = terms[0], X[:, 0], Xs[:, 0]
        sk = max(rel_err(K, sklearn_form(t, theta, x, x)),
                 rel_err(Ks, sklearn_form(t, theta, x, xs)))
        errs.append(sk)
        line += ' %9.2e' % sk
    return line, max(errs), ratio


def main(argv):
    tol, sklearn = 1e-12, False
    while argv and argv[0] in ('--tol', '--sklearn'):
        if argv[0] == '--tol':
            tol, argv = float(argv[1]), argv[2:]
        else:
            sklearn, argv = True, argv[1:]
    if len(argv) < 6 or (len(argv) - 2) % 4:
        print('usage:' + __doc__.split('\n\n')[1], file=sys.stderr)
        sys.exit(2)
    worst, bad = 0.0, False
    try:
        X = np.loadtxt(argv[0], ndmin=2)
        Xs = np.loadtxt(argv[1], ndmin=2)
        for i in range(2, len(argv), 4):
            line, err, ratio = check(*argv[i:i + 4], X, Xs, sklearn)
            flag = err > tol or ratio < -EIG_TOL
            bad |= flag
            worst = max(worst, err)
            print(line + ('  <-- FAILS' if flag else ''))
    except (SpecError, ValueError, OSError, IndexError) as e:
        print('kernel_reference.py: %s' % e, file=sys.stderr)
        sys.exit(2)
    print('worst relative error %.2e (tolerance %g)' % (worst, tol))
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main(sys.argv[1:])
