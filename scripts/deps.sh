#!/bin/sh
# Make sure the build and test dependencies are installed.  As root on Debian,
# install what is missing; otherwise print the exact command and fail.
# Extra packages (e.g. gnuplot-nox for plots) can be named as arguments.
# libopenblas-openmp-dev is OpenBLAS's OpenMP build, which the Makefile links
# so that OpenBLAS and gpc's own loops share one pool of threads.
# python3-numpy runs the independent EP and kernel references (tests/ref/);
# python3-pandas writes the data frames that the input tests read.
# gnuplot-nox (pngcairo and svg terminals) draws gpc-plot's pictures, whose
# tests look at them.
# parallel (GNU parallel) runs the batch examples in examples/, whose tests
# (tests/cli/batch.bats) run them.
PKGS="build-essential pkg-config libgsl-dev libopenblas-openmp-dev bats bats-assert bats-support python3-numpy python3-pandas gnuplot-nox parallel $*"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
        missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing:$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2 && apt-get install -y -qq $missing >&2 && exit 0
    echo "deps: apt-get install failed" >&2
    exit 1
fi
echo "missing packages:$missing" >&2
echo "install them with:  sudo apt-get install$missing" >&2
exit 1
