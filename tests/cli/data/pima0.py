#!/usr/bin/python3
# Writes pima-train0.svm and pima-test0.svm, LIBSVM files numbered from 0 as
# scikit-learn writes them by default: the first 40 training and 20 test rows
# of data/pima (the rows tests/cli/test_helper.bash takes as X.txt and
# Xt.txt).  Run from the top of the source tree with Debian's python3 and
# python3-sklearn:  /usr/bin/python3 tests/cli/data/pima0.py
import numpy as np
from sklearn.datasets import dump_svmlight_file

for part, n in (("train", 40), ("test", 20)):
    X = np.loadtxt(f"data/pima/X-{part}.txt")[:n]
    y = np.loadtxt(f"data/pima/y-{part}.txt")[:n]
    dump_svmlight_file(X, y, f"tests/cli/data/pima-{part}0.svm", comment=(
        f"Pima (data/pima, MASS Pima.tr/Pima.te, GPL-2 | GPL-3): the first {n} rows of "
        f"X-{part}.txt and y-{part}.txt, written by tests/cli/data/pima0.py with "
        f"sklearn.datasets.dump_svmlight_file (zero_based=True, its default)"))
