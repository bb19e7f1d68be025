#!/usr/bin/python3
"""Reference covariance matrices for gpc's kernel specs, in plain numpy.

Written from the formulas and rules stated in the comment at the top of
src/lib/kernels/kernel.h (the spec grammar, the terms, their hyperparameters
and the naming rule), sharing no code with src/lib/kernels/kernel.c, so that
tests/cli/kernels.bats can compare gpc-kernel against it.

Usage (X, XS: text matrices, one case per row; a CASE is a directory):

  kernel_reference.py names SPEC X
      the hyperparameters as "name default" lines, in the kernel's order
  kernel_reference.py matrix SPEC THETA X [XS]
      K(X, X) (jitter on the diagonal) or K(X, XS), printed with %.17g;
      THETA is a file of "name value" lines (as gpc-kernel --list writes)
  kernel_reference.py params X CASE...
      for each CASE: read CASE/spec (the spec on its first line) and
      CASE/set (optional: words NAME=VALUE, e.g. "log_w=12 log_p3=-6"), write
      CASE/theta, the kernel's hyperparameters as "name value" lines: the
      value given for the name, else for the name without its "t<k>."
      prefix (log_w3), else for
      that name without its column number (log_w), else the default, plus
      a small offset that differs from one hyperparameter to the next (0 with the word "exact"), so that
      a swapped order shows; with the word "fd", also CASE/plus.J and
      CASE/minus.J (J = 1, 2, ...), theta with theta_J moved by +-1e-5
  kernel_reference.py defaults X CASE...
      each CASE/list0, gpc-kernel's --list at the defaults, must hold the
      reference's names and documented defaults, in order (exit 1 if not)
  kernel_reference.py check X XS CASE...
      compare gpc-kernel's results for each CASE with the reference at
      CASE/theta: CASE/list (its --list, names and values), CASE/K (K(X, X)),
      CASE/Ks (K(X, XS)) and CASE/diag (--diag); a missing file means
      gpc-kernel failed (its message in CASE/err).  Matrices must agree to
      1e-12 of the largest |entry| of the reference matrix, and gpc's K(X, X)
      must be positive semi-definite: smallest eigenvalue >= -1e-10 times the
      largest.  One line per case; exit 1 if any case fails.
  kernel_reference.py gradcheck CASE...
      gpc-kernel's own derivatives against its own central differences: for
      each hyperparameter J, CASE/D.J (--grad) against (CASE/Kp.J - CASE/Km.J)
      over the step between CASE/plus.J and CASE/minus.J; they must agree to
      1e-7 of max |D.J| plus 1e-9 of max |K| (the rounding of K divided by
      the step, ~1e-11 of max |K|, is far below that).  Exit 1 on failure.
  kernel_reference.py selftest
      the reference's own sanity checks (closed forms, identities, names).

The grammar: spec = sum {':' clause}, sum = product {'+' product},
product = factor {'*' factor}, factor = term | '(' sum ')',
term = NAME ['@' columns]; columns are 1-based numbers and ranges a-b joined
by commas; blanks are ignored; the only clause is ":discrete=COLUMNS".
"""

import math
import os
import sys

import numpy as np

# The reference computes in extended precision (x87's 80 bits on x86-64),
# so that its own rounding is far below the 1e-12 that gpc's double
# precision is held to, even where the kernel is ill-conditioned (sines of
# large angles at tiny periods); the results are rounded to double.
REAL = np.longdouble
SQ3 = np.sqrt(REAL(3))
SQ5 = np.sqrt(REAL(5))
PI = np.arccos(REAL(-1))
MAX_DEGREE = 32

# Each term: its kind ('ard' for one weight per column, 'iso' for one), the
# family (how k is formed), and the names after log_v0 and the weights.
Q_FAMILIES = {"se", "matern12", "matern32", "matern52", "rq"}
TERMS = {
    "ard": ("ard", "se"), "se": ("iso", "se"),
    "matern12": ("iso", "matern12"), "matern32": ("iso", "matern32"),
    "matern52": ("iso", "matern52"),
    "matern12ard": ("ard", "matern12"), "matern32ard": ("ard", "matern32"),
    "matern52ard": ("ard", "matern52"),
    "rq": ("iso", "rq"), "rqard": ("ard", "rq"),
    "periodic": ("iso", "periodic"), "periodicard": ("ard", "periodic"),
    "linear": (None, "linear"), "nn": (None, "nn"),
    "bias": (None, "bias"), "jitter": (None, "jitter"),
}
DEFAULTS = {"log_v0": 0.0, "log_w": -2.0, "log_v": 0.0, "log_s0": 0.0,
            "log_s": 0.0, "log_bias": -3.0, "log_jitter": -6.0,
            "log_alpha": 0.0, "log_p": 0.0, "log_c": 0.0}


class SpecError(ValueError):
    pass


# ---- parsing ------------------------------------------------------------------

class Term:
    def __init__(self, name, cols):
        self.name = name
        self.cols = cols          # 0-based column indices, in list order
        self.degree = None
        if name.startswith("poly") and name[4:].isdigit():
            self.degree = int(name[4:])
            if not 1 <= self.degree <= MAX_DEGREE:
                raise SpecError("poly degree %d outside 1..%d" % (self.degree, MAX_DEGREE))
            self.kind, self.family = None, "poly"
        elif name in TERMS:
            self.kind, self.family = TERMS[name]
        else:
            raise SpecError("unknown term %r" % name)

    def base_names(self):
        """The names of this term's hyperparameters, without any prefix."""
        cols = [str(c + 1) for c in self.cols]
        f = self.family
        if f == "poly":
            return ["log_v", "log_c"]
        if f == "linear":
            return ["log_v"]
        if f == "nn":
            return ["log_v0", "log_s0", "log_s"]
        if f in ("bias", "jitter"):
            return ["log_" + f]
        w = ["log_w" + c for c in cols] if self.kind == "ard" else ["log_w"]
        names = ["log_v0"] + w
        if f == "rq":
            names.append("log_alpha")
        if f == "periodic":
            names += ["log_p" + c for c in cols] if self.kind == "ard" else ["log_p"]
        return names


class Parser:
    def __init__(self, spec, dim):
        self.s = "".join(spec.split())
        self.i = 0
        self.dim = dim
        self.terms = []

    def peek(self):
        return self.s[self.i] if self.i < len(self.s) else ""

    def fail(self, what):
        raise SpecError("%s at character %d of %r" % (what, self.i + 1, self.s))

    def parse(self):
        if not self.s:
            self.fail("empty spec")
        tree = self.sum()
        discrete = set()
        while self.peek() == ":":
            self.i += 1
            if not self.s.startswith("discrete=", self.i):
                self.fail("unknown clause")
            self.i += len("discrete=")
            discrete |= set(self.columns())
        if self.i != len(self.s):
            self.fail("unexpected %r" % self.peek())
        return tree, discrete

    def sum(self):
        items = [self.product()]
        while self.peek() == "+":
            self.i += 1
            items.append(self.product())
        return items[0] if len(items) == 1 else ("+", items)

    def product(self):
        items = [self.factor()]
        while self.peek() == "*":
            self.i += 1
            items.append(self.factor())
        return items[0] if len(items) == 1 else ("*", items)

    def factor(self):
        if self.peek() == "(":
            self.i += 1
            t = self.sum()
            if self.peek() != ")":
                self.fail("expected ')'")
            self.i += 1
            return t
        j = self.i
        while self.i < len(self.s) and self.s[self.i].isalnum():
            self.i += 1
        if j == self.i:
            self.fail("expected a term")
        name = self.s[j:self.i]
        cols = list(range(self.dim))
        if self.peek() == "@":
            self.i += 1
            cols = self.columns()
        term = Term(name, cols)
        self.terms.append(term)
        return term

    def number(self):
        j = self.i
        while self.peek().isdigit():
            self.i += 1
        if j == self.i:
            self.fail("expected a column number")
        n = int(self.s[j:self.i])
        if not 1 <= n <= self.dim:
            self.fail("column %d beyond 1..%d" % (n, self.dim))
        return n - 1

    def columns(self):
        cols = []
        while True:
            a = self.number()
            b = a
            if self.peek() == "-":
                self.i += 1
                b = self.number()
            if b < a:
                self.fail("decreasing range")
            cols += range(a, b + 1)
            if self.peek() != ",":
                return cols
            self.i += 1


class Kernel:
    def __init__(self, spec, dim):
        p = Parser(spec, dim)
        self.tree, self.discrete = p.parse()
        self.terms = p.terms
        for t in self.terms:
            if t.family == "periodic" and self.discrete & set(t.cols):
                raise SpecError("a periodic term reads a discrete column")
        read = set()
        for t in self.terms:
            if t.family in Q_FAMILIES:
                read |= set(t.cols)
        if self.discrete - read:
            raise SpecError("a discrete column read by no term built on q")
        self.layout()

    def layout(self):
        """Names in order: term by term, each term's in its order, with the
        prefix t<k>. on every name of a term that shares a name with another."""
        base = [t.base_names() for t in self.terms]
        self.names, self.slices = [], []
        for k, names in enumerate(base):
            others = set(n for j, b in enumerate(base) if j != k for n in b)
            shared = any(n in others for n in names)
            start = len(self.names)
            self.names += [("t%d." % (k + 1) if shared else "") + n for n in names]
            self.slices.append(slice(start, len(self.names)))

    def defaults(self):
        return [DEFAULTS[strip_name(n)] for n in self.names]

    # ---- evaluation ----------------------------------------------------------

    def matrix(self, theta, A, B=None):
        """K(A, A) with jitter when B is None, else K(A, B) without."""
        same = B is None
        A = np.asarray(A, REAL)
        B = A if same else np.asarray(B, REAL)
        return self.eval(self.tree, np.asarray(theta, REAL), A, B, same).astype(float)

    def eval(self, node, theta, A, B, same):
        if isinstance(node, Term):
            k = self.terms.index(node)
            return self.term(node, theta[self.slices[k]], A, B, same)
        op, items = node
        out = self.eval(items[0], theta, A, B, same)
        for it in items[1:]:
            v = self.eval(it, theta, A, B, same)
            out = out + v if op == "+" else out * v
        return out

    def sqdist(self, t, A, B):
        """The per-column distances d_l, shape (len(cols), n, m)."""
        d = []
        for c in t.cols:
            diff = A[:, c][:, None] - B[:, c][None, :]
            d.append((diff != 0).astype(REAL) if c in self.discrete else diff * diff)
        return np.array(d)

    def term(self, t, th, A, B, same):
        n, m = A.shape[0], B.shape[0]
        e = np.exp(th)
        f = t.family
        if f == "bias":
            return np.full((n, m), e[0], REAL)
        if f == "jitter":
            return e[0] * np.eye(n, dtype=REAL) if same else np.zeros((n, m), REAL)
        if f in ("linear", "poly", "nn"):
            a, b = A[:, t.cols], B[:, t.cols]
            dot = a @ b.T
            if f == "linear":
                return e[0] * dot
            if f == "poly":
                return e[0] * (e[1] + dot) ** t.degree
            s0, s = e[1], e[2]
            ua = 1 + 2 * (s0 + s * np.sum(a * a, axis=1))
            ub = 1 + 2 * (s0 + s * np.sum(b * b, axis=1))
            z = 2 * (s0 + s * dot) / np.sqrt(ua[:, None] * ub[None, :])
            return e[0] * (2 / PI) * np.arcsin(z)
        v0 = e[0]
        L = len(t.cols)
        if f == "periodic":
            if t.kind == "ard":
                w, p = e[1:1 + L], e[1 + L:1 + 2 * L]
            else:
                w, p = np.full(L, e[1], REAL), np.full(L, e[2], REAL)
            s = REAL(0)
            for l, c in enumerate(t.cols):
                sn = np.sin(PI * (A[:, c][:, None] - B[:, c][None, :]) / p[l])
                s = s + w[l] * sn * sn
            return v0 * np.exp(-2 * s)
        d = self.sqdist(t, A, B)
        w = e[1:1 + L] if t.kind == "ard" else np.full(L, e[1], REAL)
        q = np.tensordot(w, d, axes=1) if L else np.zeros((n, m), REAL)
        r = np.sqrt(q)
        if f == "se":
            return v0 * np.exp(-q / 2)
        if f == "matern12":
            return v0 * np.exp(-r)
        if f == "matern32":
            return v0 * (1 + SQ3 * r) * np.exp(-SQ3 * r)
        if f == "matern52":
            return v0 * (1 + SQ5 * r + 5 * q / REAL(3)) * np.exp(-SQ5 * r)
        if f == "rq":
            alpha = e[-1]
            return v0 * np.exp(-alpha * np.log1p(q / (2 * alpha)))
        raise AssertionError(f)


def strip_name(name):
    """log_w3 -> log_w, t2.log_p4 -> log_p: the name a default is given for."""
    if name.startswith("t") and "." in name:
        name = name.split(".", 1)[1]
    if name[:5] in ("log_w", "log_p") and name[5:].isdigit():
        name = name[:5]
    return name


# ---- files ----------------------------------------------------------------------

def read_matrix(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                rows.append([float(x) for x in line.split()])
    return np.array(rows, float).reshape(len(rows), -1)


def read_params(path):
    names, values = [], []
    with open(path) as f:
        for line in f:
            w = line.split("#", 1)[0].split()
            if w:
                names.append(w[0])
                values.append(float(w[1]))
    return names, values


def write_params(path, names, values):
    with open(path, "w") as f:
        for n, v in zip(names, values):
            f.write("%s %.17g\n" % (n, v))


def print_matrix(K, out=sys.stdout):
    for row in K:
        out.write(" ".join("%.17g" % x for x in row) + "\n")


def read_spec(case):
    with open(os.path.join(case, "spec")) as f:
        return f.readline().rstrip("\n")


# ---- commands ---------------------------------------------------------------------

FD_STEP = 1e-5


def cmd_params(args):
    X = read_matrix(args[0])
    for case in args[1:]:
        k = Kernel(read_spec(case), X.shape[1])
        words = []
        setp = os.path.join(case, "set")
        if os.path.exists(setp):
            with open(setp) as f:
                words = f.read().split()
        given = dict(w.split("=", 1) for w in words if "=" in w)
        values = []
        for j, n in enumerate(k.names):
            base = strip_name(n)
            plain = n.split(".", 1)[1] if n.startswith("t") and "." in n else n
            v = float(given.get(n, given.get(plain, given.get(base, DEFAULTS[base]))))
            if "exact" not in words:
                v += 0.1 * ((7 * j) % 5 - 2)
            values.append(v)
        write_params(os.path.join(case, "theta"), k.names, values)
        if "fd" in words:
            for j in range(len(values)):
                for sign, what in ((1, "plus"), (-1, "minus")):
                    moved = list(values)
                    moved[j] += sign * FD_STEP
                    write_params(os.path.join(case, "%s.%d" % (what, j + 1)), k.names, moved)


WORST = [0.0]   # the largest deviation seen, relative to max |entry|


def compare(got, want, what):
    """None if got agrees with want to 1e-12 of want's largest |entry|."""
    if got.shape != want.shape:
        return "%s: shape %s, reference %s" % (what, got.shape, want.shape)
    scale = np.max(np.abs(want)) if want.size else 0.0
    err = np.max(np.abs(got - want)) if want.size else 0.0
    if scale > 0:
        WORST[0] = max(WORST[0], err / scale)
    if not err <= 1e-12 * scale:
        i, j = np.unravel_index(np.argmax(np.abs(got - want)), want.shape)
        return ("%s: entry (%d,%d) %.17g, reference %.17g (max |diff| %.3g, "
                "%.3g of max |K| %.3g)" % (what, i + 1, j + 1, got[i, j], want[i, j],
                                            err, err / scale if scale else err, scale))
    return None


def psd_problem(K, what):
    ev = np.linalg.eigvalsh((K + K.T) / 2)
    if not ev[0] >= -1e-10 * max(ev[-1], 0.0):
        return "%s not positive semi-definite: eigenvalues %.3g .. %.3g" % (what, ev[0], ev[-1])
    return None


def check_case(case, X, XS):
    spec = read_spec(case)
    path = lambda f: os.path.join(case, f)
    if not os.path.exists(path("K")):
        err = open(path("err")).read().strip() if os.path.exists(path("err")) else "?"
        return ["gpc-kernel failed: " + err]
    k = Kernel(spec, X.shape[1])
    names, theta = read_params(path("theta"))
    assert names == k.names
    problems = []
    gnames, gvalues = read_params(path("list"))
    if gnames != k.names:
        problems.append("--list names %s, reference %s" % (" ".join(gnames), " ".join(k.names)))
    elif not np.allclose(gvalues, theta, rtol=1e-15, atol=0):
        problems.append("--list values %s, set %s" % (gvalues, theta))
    K = k.matrix(theta, X)
    problems.append(compare(read_matrix(path("K")), K, "K(X, X)"))
    problems.append(compare(read_matrix(path("Ks")), k.matrix(theta, X, XS), "K(X, XS)"))
    problems.append(compare(read_matrix(path("diag")), np.diag(K)[:, None], "--diag"))
    problems.append(psd_problem(read_matrix(path("K")), "gpc-kernel's K(X, X)"))
    problems.append(psd_problem(K, "the reference K(X, X)"))
    return [p for p in problems if p]


def cmd_defaults(args):
    """Each CASE/list0 (gpc-kernel --list without values) must be the
    reference's names with their documented defaults."""
    X = read_matrix(args[0])
    bad = 0
    for case in args[1:]:
        k = Kernel(read_spec(case), X.shape[1])
        want = ["%s %.17g" % nv for nv in zip(k.names, k.defaults())]
        got = []
        if os.path.exists(os.path.join(case, "list0")):
            names, values = read_params(os.path.join(case, "list0"))
            got = ["%s %.17g" % nv for nv in zip(names, values)]
        ok = got == want
        print("%s %s  %s" % ("ok  " if ok else "FAIL", case, read_spec(case)))
        if not ok and not got and os.path.exists(os.path.join(case, "err")):
            print("     gpc-kernel failed: " + open(os.path.join(case, "err")).read().strip())
        elif not ok:
            print("     --list gave: " + ", ".join(got))
            print("     reference:   " + ", ".join(want))
        bad += not ok
    print("%d of %d cases failed" % (bad, len(args) - 1))
    return 1 if bad else 0


def cmd_check(args):
    X, XS = read_matrix(args[0]), read_matrix(args[1])
    bad = 0
    for case in args[2:]:
        problems = check_case(case, X, XS)
        status = "ok  " if not problems else "FAIL"
        print("%s %s  %s" % (status, case, read_spec(case)))
        for p in problems:
            print("     " + p)
        bad += bool(problems)
    print("%d of %d cases failed; largest deviation %.2g of max |K|" % (bad, len(args) - 2, WORST[0]))
    return 1 if bad else 0


def cmd_gradcheck(args):
    bad = 0
    for case in args:
        path = lambda f: os.path.join(case, f)
        names, theta = read_params(path("theta"))
        problems = []
        try:
            K = read_matrix(path("K"))
            for j, n in enumerate(names, 1):
                D = read_matrix(path("D.%d" % j))
                step = read_params(path("plus.%d" % j))[1][j - 1] - read_params(path("minus.%d" % j))[1][j - 1]
                fd = (read_matrix(path("Kp.%d" % j)) - read_matrix(path("Km.%d" % j))) / step
                err = np.max(np.abs(fd - D))
                tol = 1e-7 * np.max(np.abs(D)) + 1e-9 * np.max(np.abs(K))
                WORST[0] = max(WORST[0], err / tol)
                if not err <= tol:
                    problems.append("%s: max |dK - central difference| %.3g > %.3g (max |dK| %.3g)"
                                    % (n, err, tol, np.max(np.abs(D))))
        except (OSError, ValueError) as e:
            err = open(path("err")).read().strip() if os.path.exists(path("err")) else ""
            problems.append("gpc-kernel failed: %s %s" % (err, e))
        print("%s %s  %s" % ("ok  " if not problems else "FAIL", case, read_spec(case)))
        for p in problems:
            print("     " + p)
        bad += bool(problems)
    print("%d of %d cases failed; largest deviation %.2g of the tolerance" % (bad, len(args), WORST[0]))
    return 1 if bad else 0


# ---- self-test ------------------------------------------------------------------

def selftest():
    rng = np.random.RandomState(1)
    X = rng.uniform(-1, 1, (9, 3))
    X[5] = X[2]
    fails = []

    def check(cond, what):
        if not cond:
            fails.append(what)

    def K(spec, theta, A=X, B=None):
        return Kernel(spec, A.shape[1]).matrix(theta, A, B)

    def close(a, b, tol=1e-13):
        return np.max(np.abs(a - b)) <= tol * max(np.max(np.abs(b)), 1e-300)

    # closed forms at one pair of points, r = 1 (w = 1, one column apart by 1)
    P = np.array([[0.0], [1.0]])
    check(close(K("matern12", [0, 0], P)[0, 1], math.exp(-1)), "matern12 at r = 1")
    check(close(K("matern32", [0, 0], P)[0, 1], (1 + SQ3) * math.exp(-SQ3)), "matern32 at r = 1")
    check(close(K("matern52", [0, 0], P)[0, 1], (1 + SQ5 + 5 / 3) * math.exp(-SQ5)), "matern52 at r = 1")
    check(close(K("rq", [0, 0, 0], P)[0, 1], 1 / 1.5), "rq, alpha 1, at q = 1")
    check(close(K("periodic", [0, 0, math.log(2)], P)[0, 1], math.exp(-2)), "periodic at half a period")
    check(close(K("periodic", [0, 0, 0], P)[0, 1], 1.0), "periodic at a whole period")
    check(close(K("poly3", [math.log(2), math.log(0.5)], P + 1)[0, 1], 2 * 2.5 ** 3), "poly3")
    check(close(K("nn", [0, 0, 0], P)[0, 0], (2 / math.pi) * math.asin(2 / 3)), "nn at x = x' = 0")
    check(close(K("jitter", [0], P), np.eye(2)), "jitter")
    check(close(K("jitter", [0], P, P), np.zeros((2, 2))), "jitter in a cross matrix")
    # identities
    t = rng.normal(0, 0.5, 8)
    check(close(K("ard", [t[0], t[1], t[1], t[1]]), K("se", t[:2])), "ard with equal weights is se")
    for m in ("matern12", "matern32", "matern52", "rq", "periodic"):
        iso = [t[0], t[1]] + ([t[2]] if m in ("rq", "periodic") else [])
        ard = [t[0]] + [t[1]] * 3 + ([t[2]] * (3 if m == "periodic" else 1) if len(iso) > 2 else [])
        check(close(K(m + "ard", ard), K(m, iso)), m + "ard with equal weights is " + m)
    check(close(K("ard@1-2*ard@3", [t[0], t[1], t[2], t[3], t[4]]),
                K("ard", [t[0] + t[3], t[1], t[2], t[4]])), "a product of ard terms is ard")
    check(close(K("rq", [0, -1, 20]), K("se", [0, -1]), 1e-8), "rq tends to se as alpha grows")
    check(close(K("poly1", [t[0], -40]), K("linear", [t[0]]), 1e-12), "poly1 with c -> 0 is linear")
    check(close(K("periodic@1", [0, -2, 8]), K("se@1", [0, -2 + 2 * math.log(2 * math.pi) - 16]), 1e-6),
          "periodic with a long period is se")
    check(close(K("(se+bias)*linear", [0, -1, -2, 0.5]),
                K("se*linear+bias*linear", [0, -1, 0.5, -2, 0.5])), "the product distributes over sums")
    d = np.array([[0.0, 1], [0, 3], [1, 1]])
    check(close(K("ard:discrete=2", [0, 0, 0], d)[0, 1], math.exp(-0.5)), "a discrete mismatch counts 1")
    # names
    def names(spec, dim=4):
        return " ".join(Kernel(spec, dim).names)
    check(names("ard+bias+jitter", 2) == "log_v0 log_w1 log_w2 log_bias log_jitter", "names of ard+bias+jitter")
    check(names("ard@1-3*periodic@4") ==
          "t1.log_v0 t1.log_w1 t1.log_w2 t1.log_w3 t2.log_v0 t2.log_w t2.log_p", "names of the example")
    check(names("(periodicard@2-3+bias)*linear") ==
          "log_v0 log_w2 log_w3 log_p2 log_p3 log_bias log_v", "names of periodicard")
    check(names("poly2+linear+rqard@4") ==
          "t1.log_v t1.log_c t2.log_v log_v0 log_w4 log_alpha", "names of poly2+linear+rqard")
    for bad in ("", "foo", "ard*", "(ard+se", "ard)", "()", "poly0", "poly2.5", "poly",
                "poly33", "matern32@9", "periodic@1+ard:discrete=1", "ard:discrete=1,5"):
        try:
            Kernel(bad, 4)
            fails.append("accepted bad spec %r" % bad)
        except SpecError:
            pass
    for f in fails:
        print("selftest: " + f)
    return 1 if fails else 0


def main(argv):
    cmd, args = (argv[1], argv[2:]) if len(argv) > 1 else ("", [])
    if cmd == "names" and len(args) == 2:
        k = Kernel(args[0], read_matrix(args[1]).shape[1])
        write_params("/dev/stdout", k.names, k.defaults())
    elif cmd == "matrix" and len(args) in (3, 4):
        X = read_matrix(args[2])
        k = Kernel(args[0], X.shape[1])
        names, theta = read_params(args[1])
        if names != k.names:
            sys.exit("kernel_reference.py: %s names %s, not %s" % (args[1], names, k.names))
        print_matrix(k.matrix(theta, X, read_matrix(args[3]) if len(args) == 4 else None))
    elif cmd == "params" and args:
        cmd_params(args)
    elif cmd == "check" and len(args) >= 2:
        return cmd_check(args)
    elif cmd == "defaults" and args:
        return cmd_defaults(args)
    elif cmd == "gradcheck":
        return cmd_gradcheck(args)
    elif cmd == "selftest":
        return selftest()
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
