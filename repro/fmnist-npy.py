#!/usr/bin/python3
"""Fashion-MNIST (Xiao, Rasul & Vollgraf 2017) from Debian's
dataset-fashion-mnist (the IDX files under /usr/share/datasets/fashion-mnist)
as .npy files for gpc: inputs as float64 in C order, the pixels scaled to
[0, 1] (value / 255), one row per image of 28 x 28 = 784 columns; labels as
float64 class numbers 0..9.

Usage: fmnist-npy.py OUTDIR    (writes X-train.npy y-train.npy X-test.npy y-test.npy)
"""
import gzip
import os
import sys

import numpy as np

SRC = "/usr/share/datasets/fashion-mnist"


def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic = int.from_bytes(data[0:4], "big")
    ndim = magic & 0xFF
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for part, prefix in (("train", "train"), ("test", "t10k")):
        images = idx(f"{SRC}/{prefix}-images-idx3-ubyte.gz")
        labels = idx(f"{SRC}/{prefix}-labels-idx1-ubyte.gz")
        X = np.ascontiguousarray(images.reshape(images.shape[0], -1), dtype=np.float64) / 255.0
        np.save(f"{out}/X-{part}.npy", X)
        np.save(f"{out}/y-{part}.npy", labels.astype(np.float64))
        print(f"{part}: {X.shape[0]} images of {X.shape[1]} pixels, classes {sorted(set(labels.tolist()))}")


main()
