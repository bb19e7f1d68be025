# gpc — Gaussian process classification tools.
# `make` builds the tools, `make check` runs every test, `make demo` runs the
# main job on the bundled data.  Both install missing Debian packages first.

PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR   = $(PREFIX)/bin
MANDIR   = $(PREFIX)/share/man
# The batch examples and the data sets examples/Makefile runs by default, laid
# out as in the source tree (share/gpc/examples beside share/gpc/data), so
# that the examples' commands and relative paths hold in an installed copy.
GPCDATADIR = $(PREFIX)/share/gpc
EXAMPLE_DATA = pima crabs sonar

CC      ?= cc
CFLAGS  ?= -O2 -g
# GSL is linked against OpenBLAS as its CBLAS, never gslcblas: the Cholesky at
# the heart of every method runs about forty times faster that way.
GSL_CFLAGS := $(shell pkg-config --cflags gsl 2>/dev/null)
GSL_LIBDIR := $(shell pkg-config --libs-only-L gsl 2>/dev/null)
# OpenBLAS's OpenMP build (Debian's libopenblas-openmp-dev), so that its
# threads are the OpenMP threads of gpc's own loops (see src/lib/base/parallel.h);
# the run-time path names it, since the system's libopenblas.so.0 may be
# another build.  Elsewhere, whatever pkg-config finds.
comma := ,
OPENBLAS_OMP := /usr/lib/$(shell $(CC) -print-multiarch 2>/dev/null)/openblas-openmp
BLAS_LIBS  := $(if $(wildcard $(OPENBLAS_OMP)/libopenblas.so),\
                -L$(OPENBLAS_OMP) -Wl$(comma)-rpath$(comma)$(OPENBLAS_OMP) -lopenblas,\
                $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas))
# HAVE_INLINE lets GSL inline its element accessors; OpenMP spreads the
# O(n^2 p) kernel loops over the cores (results do not depend on their number).
ALL_CFLAGS  = -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wshadow -fopenmp \
              -DHAVE_INLINE -Isrc/lib $(GSL_CFLAGS) $(CFLAGS)
LDLIBS      = $(GSL_LIBDIR) -lgsl $(BLAS_LIBS) -lmvec -lm
LDFLAGS    ?=

# `make check SANITIZE=1` builds with AddressSanitizer and
# UndefinedBehaviorSanitizer; undefined behaviour stops the program, so a test
# cannot pass over it.  Sanitized objects live in their own directory, and the
# tools in bin/ are relinked whenever the flavour changes (bin/.flavour), so a
# sanitized and a plain build never mix.
ifeq ($(SANITIZE),1)
SAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=undefined \
            -fno-omit-frame-pointer
BUILD     = build/san
FLAVOUR   = sanitize
else
SAN_FLAGS =
BUILD     = build
FLAVOUR   = plain
endif
ALL_CFLAGS += $(SAN_FLAGS)
ALL_LDFLAGS = $(SAN_FLAGS) $(LDFLAGS)
FLAVOUR_STAMP := $(shell mkdir -p bin && { [ "$$(cat bin/.flavour 2>/dev/null)" = $(FLAVOUR) ] || \
                   echo $(FLAVOUR) > bin/.flavour; } && echo bin/.flavour)

VERSION := $(shell cat VERSION)

TOOLS   = gpc-kernel gpc-fit gpc-predict gpc-evidence gpc-hmc gpc-scale gpc-score gpc-combine gpc-plot gpc-folds gpc-cv
# The library, one folder per concern (gpc(7), LIBRARY LAYOUT); a file
# includes another by its folder, "kernels/kernel.h".
LIB_DIRS = base linalg io kernels liks sparse methods hyper sampling report cli
LIB_SRC = $(foreach d,$(LIB_DIRS),$(wildcard src/lib/$(d)/*.c))
LIB_OBJ = $(LIB_SRC:src/lib/%.c=$(BUILD)/lib/%.o)
LIB     = $(BUILD)/libgpc.a
BINS    = $(TOOLS:%=bin/%)

# `make MPI=1` builds the tools with mpicc against Open MPI, from objects in
# build/mpi into bin/mpi/: each file of src/mpi replaces the library's file
# of its name (base/comm.c: the ranks of MPI_COMM_WORLD in place of one
# process; linalg/pdense-factor.c: ScaLAPACK in place of LAPACK), gpc(7),
# DISTRIBUTED FITS.
# `make check-mpi` builds them and runs the MPI tests on 1, 2 and 4 local
# ranks; the default build and `make check` need no MPI.
ifeq ($(MPI),1)
CC       = mpicc
BUILD    = build/mpi
MPI_SRC  = $(wildcard src/mpi/*.c)
LIB_SRC := $(filter-out $(foreach f,$(MPI_SRC),$(wildcard src/lib/*/$(notdir $(f)))),$(LIB_SRC))
LIB_OBJ  = $(LIB_SRC:src/lib/%.c=$(BUILD)/lib/%.o) $(MPI_SRC:src/%.c=$(BUILD)/%.o)
LDLIBS  := -lscalapack-openmpi $(LDLIBS)
BINS     = $(TOOLS:%=bin/mpi/%)
endif
MPI_TESTS = $(patsubst tests/mpi/%.c,build/mpi/mpi-tests/%,$(wildcard tests/mpi/test_*.c))
UNIT_SRC = $(wildcard tests/unit/test_*.c)
UNIT_BIN = $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: table-fmnist all check check-mpi mpi-all bench-mpi unit cli demo bench table-bw97 table-gr06 table-calibration table-mfeat table-ow98 table-kg deps install uninstall clean fuzz check-slurm
all: $(BINS)

$(BUILD)/lib/%.o: src/lib/%.c | $(BUILD)/lib
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DGPC_VERSION='"$(VERSION)"' -MMD -MP -c -o $@ $<
$(BUILD)/%.o: src/%.c | $(BUILD)/lib
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<
$(LIB): $(LIB_OBJ)
	rm -f $@ && ar rcs $@ $^
bin/%: $(BUILD)/%.o $(LIB) $(FLAVOUR_STAMP) | bin
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)
bin/mpi/%: $(BUILD)/%.o $(LIB) | bin/mpi
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)
$(BUILD)/mpi/%.o: src/mpi/%.c | $(BUILD)/lib
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<
build/mpi/mpi-tests/%: tests/mpi/%.c tests/unit/tap.h tests/unit/grid_laplace.h $(LIB)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Itests/unit $(ALL_LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)
$(BUILD)/tests/%: tests/unit/%.c tests/unit/tap.h tests/unit/gaussian_lik.h tests/unit/problems.h tests/unit/tmpfiles.h tests/unit/sparse_bound.h tests/unit/random_matrix.h tests/unit/grid_laplace.h $(LIB) | $(BUILD)/tests
	$(CC) $(ALL_CFLAGS) -Itests/unit $(ALL_LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)
$(BUILD)/lib $(BUILD)/tests bin bin/mpi:
	mkdir -p $@

deps:
	@sh scripts/deps.sh

# Under the sanitizers a finding exits with status 86, which no tool uses, so
# a test that expects a failure (status 1, 2 or 3) cannot pass over it.  Leaks
# are checked at every normal exit, not when gpc_die exits (see err.c).
# GPC_SANITIZED has the examples test check only that every command succeeds:
# the sanitized build rounds otherwise in the last digits.
SAN_ENV = GPC_SANITIZED=1 ASAN_OPTIONS=exitcode=86:detect_leaks=1:abort_on_error=0:$(ASAN_OPTIONS) \
          UBSAN_OPTIONS=exitcode=86:print_stacktrace=1:halt_on_error=1:$(UBSAN_OPTIONS)

check: deps
	@$(MAKE) --no-print-directory all $(UNIT_BIN) $(FUZZ_COMPILE) $(BENCH_BIN)
	@$(if $(SAN_FLAGS),$(SAN_ENV)) sh tests/run.sh $(UNIT_BIN)

# The MPI build and its tests on 1, 2 and 4 local ranks (oversubscribed
# where there are fewer cores), with one summary line as make check's; the
# plain tools too, which the tests compare with.
check-mpi:
	@sh scripts/deps.sh libopenmpi-dev libscalapack-openmpi-dev openmpi-bin
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory MPI=1 mpi-all
	@sh tests/mpi/run.sh $(MPI_TESTS)
mpi-all: $(BINS) $(MPI_TESTS)

# The sparse method's epoch on 1 and 2 ranks against the plain tool
# (bench/bench-mpi.sh), then the dense Laplace evidence and gradient on 1,
# 2 and 4 ranks in units of one Cholesky (bench/bench-mpi-dense.sh), into
# bench/out/mpi-report.txt: about 40 minutes.
bench-mpi:
	@sh scripts/deps.sh libopenmpi-dev libscalapack-openmpi-dev openmpi-bin time
	@$(MAKE) --no-print-directory all $(BUILD)/bench-chol
	@$(MAKE) --no-print-directory MPI=1 mpi-all
	@mkdir -p bench/out
	@{ sh bench/bench-mpi.sh bench/out/mpi && \
	   echo "### dense: one log evidence with its gradient" && \
	   sh bench/bench-mpi-dense.sh bench/out/mpi-dense $(BUILD); } | tee bench/out/mpi-report.txt

demo: deps
	@$(MAKE) --no-print-directory all
	@sh scripts/demo.sh

# Barber & Williams (1997), Tables 1 and 2 (Pima, Crabs, forensic glass) and
# Neal's three-class data, by HMC and MAP (about 25 minutes on 2 cores).
table-bw97: deps
	@sh scripts/deps.sh gnuplot-nox
	@$(MAKE) --no-print-directory all
	@sh repro/table-bw97.sh

# Girolami & Rogers (2006) as tabulated in Girolami's talk: Laplace, variational
# Bayes and Gibbs sampling on Toy, Iris, Thyroid, Wine and Forensic Glass over
# SPLITS random splits (default 10; about 8 minutes per split on 2 cores, most
# of it VB's importance sampler on Toy).
table-gr06: deps
	@$(MAKE) --no-print-directory all
	@sh repro/table-gr06.sh

# The multiclass methods' calibration as a user gets it (default kernel,
# ML-II): softmax Laplace, nested EP and VB on Iris, Wine, Thyroid, Glass
# and scikit-learn's digits, averaged and plug-in probabilities.
table-calibration: deps
	@sh scripts/deps.sh python3-sklearn
	@$(MAKE) --no-print-directory all
	@sh repro/table-calibration.sh

# Girolami & Zhong (2007): mfeat digits, single representations, the sum
# and product rules and the learned composite kernel, with a picture.
table-mfeat: deps
	@sh scripts/deps.sh gnuplot-nox
	@$(MAKE) --no-print-directory all
	@sh repro/table-mfeat.sh

# Fashion-MNIST (Debian's dataset-fashion-mnist) by the sparse variational
# method with the softmax: M=500 inducing inputs, EPOCHS=40 epochs of
# minibatches of BATCH=1000, beside scikit-learn's logistic regression and
# Nystrom features (python3-sklearn); continues from its checkpoint when run
# again (remove repro/out/fmnist/fit.ckpt to start afresh).
table-fmnist: deps
	@sh scripts/deps.sh dataset-fashion-mnist python3-sklearn
	@$(MAKE) --no-print-directory all
	@sh repro/table-fmnist.sh

# Opper & Winther (1998), Table 1: Sonar with TAP and naive mean field (seconds).
table-ow98: deps
	@$(MAKE) --no-print-directory all
	@sh repro/table-ow98.sh

# Kim & Ghahramani: synthetic Table 1 and Figure 1, New Thyroid Table 2, and
# the synthetic experiment over 30 draws of its generator (minutes).
table-kg: deps
	@sh scripts/deps.sh gnuplot-nox
	@$(MAKE) --no-print-directory all
	@sh repro/table-kg.sh
	@echo
	@sh repro/kg-draws.sh 30

# The Slurm examples (examples/slurm/) on a real scheduler: starts munged,
# slurmctld and slurmd on this machine with a configuration in a temporary
# directory, runs the cross-validation array and chained HMC jobs of a few
# seconds each, checks them against serial runs and stops the daemons (about
# a minute), then the MPI jobs of examples/slurm/check-slurm-mpi.sh (a
# sparse fit on 4 ranks stopped at its time limit and resumed, a job with an
# error, a dense Laplace HMC chain on a 2x2 grid cut and continued; about a
# minute more).  Needs root, so it is not part of make check.
check-slurm: deps
	@sh scripts/deps.sh slurm-wlm libopenmpi-dev libscalapack-openmpi-dev openmpi-bin
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory MPI=1 mpi-all
	@bash examples/slurm/check-slurm.sh

# make check builds the benchmarks too, so that they keep up with the library.
# The softmax bench compares with scikit-learn (python3-sklearn).
BENCH_BIN = $(BUILD)/bench-laplace $(BUILD)/bench-ep $(BUILD)/bench-softmax $(BUILD)/bench-vb \
            $(BUILD)/bench-nested-ep \
            $(BUILD)/bench-blas $(BUILD)/bench-gemm $(BUILD)/bench-chol \
            $(BUILD)/bench-gibbs $(BUILD)/bench-kernels
bench: deps
	@sh scripts/deps.sh python3-sklearn time
	@$(MAKE) --no-print-directory all $(BENCH_BIN)
	@sh bench/run.sh

$(BUILD)/bench-%: bench/bench-%.c bench/bench-data.h $(LIB) | $(BUILD)/lib
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# libFuzzer harnesses for the readers and the kernel-spec parser, built with
# clang under ASan and UBSan in build/fuzz (never part of make check):
# `make fuzz FUZZ_SECONDS=600` runs each for that long, one after the other;
# FUZZ_TARGETS="csv_header params" runs only those.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS  = matrix labels kernel_spec model chain csv_header params
FUZZ_SAN      = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS   = -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wno-unknown-pragmas -g -O1 \
                -DHAVE_INLINE -Isrc/lib $(GSL_CFLAGS) $(FUZZ_SAN)
FUZZ_OBJ      = $(LIB_SRC:src/lib/%.c=build/fuzz/lib/%.o)
FUZZ_BIN      = $(FUZZ_TARGETS:%=build/fuzz/fuzz_%)

# make check compiles the harnesses with the plain compiler (no libFuzzer
# needed), so a reader whose interface changes cannot leave them behind.
FUZZ_COMPILE = $(FUZZ_TARGETS:%=$(BUILD)/fuzz-compile/fuzz_%.o)
$(BUILD)/fuzz-compile/fuzz_%.o: fuzz/fuzz_%.c fuzz/tmpfile.h | $(BUILD)/fuzz-compile
	$(CC) $(ALL_CFLAGS) -c -o $@ $<
$(BUILD)/fuzz-compile:
	mkdir -p $@

fuzz: all
	@command -v $(FUZZ_CC) >/dev/null || sh scripts/deps.sh clang
	@$(MAKE) --no-print-directory $(FUZZ_BIN)
	@sh fuzz/run.sh build/fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

build/fuzz/lib/%.o: src/lib/%.c | build/fuzz/lib
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -DGPC_VERSION='"$(VERSION)"' -MMD -MP -c -o $@ $<
build/fuzz/libgpc.a: $(FUZZ_OBJ)
	rm -f $@ && ar rcs $@ $^
# clang builds the library without OpenMP (its pragmas are ignored: the
# readers run on one thread), so the omp_* calls of parallel.c come from
# libgomp, which OpenBLAS's OpenMP build loads anyway.
build/fuzz/fuzz_%: fuzz/fuzz_%.c fuzz/tmpfile.h build/fuzz/libgpc.a
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(LDFLAGS) -o $@ $< build/fuzz/libgpc.a $(LDLIBS) -lgomp
build/fuzz/lib:
	mkdir -p $@

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
	           $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7
	install -m 755 $(BINS) $(DESTDIR)$(BINDIR)
	install -m 644 man/*.1 $(DESTDIR)$(MANDIR)/man1
	install -m 644 man/*.5 $(DESTDIR)$(MANDIR)/man5
	install -m 644 man/*.7 $(DESTDIR)$(MANDIR)/man7
	install -d $(DESTDIR)$(GPCDATADIR)/examples/slurm \
	           $(EXAMPLE_DATA:%=$(DESTDIR)$(GPCDATADIR)/data/%)
	install -m 755 examples/*.sh $(DESTDIR)$(GPCDATADIR)/examples
	install -m 644 examples/Makefile examples/README.md $(DESTDIR)$(GPCDATADIR)/examples
	install -m 755 examples/slurm/*.sh examples/slurm/*.sbatch \
	           $(DESTDIR)$(GPCDATADIR)/examples/slurm
	install -m 644 data/README.md $(DESTDIR)$(GPCDATADIR)/data
	for d in $(EXAMPLE_DATA); do \
	    install -m 644 data/$$d/*.txt $(DESTDIR)$(GPCDATADIR)/data/$$d || exit 1; \
	done

# Only what install put there: the share directory goes when nothing else is
# left in it.
uninstall:
	rm -f $(TOOLS:%=$(DESTDIR)$(BINDIR)/%)
	rm -f $(TOOLS:%=$(DESTDIR)$(MANDIR)/man1/%.1)
	rm -f $(DESTDIR)$(MANDIR)/man5/gpc-formats.5 $(DESTDIR)$(MANDIR)/man7/gpc.7
	rm -f $(patsubst examples/%,$(DESTDIR)$(GPCDATADIR)/examples/%,$(wildcard \
	          examples/*.sh examples/Makefile examples/README.md examples/slurm/*.sh \
	          examples/slurm/*.sbatch))
	rm -f $(DESTDIR)$(GPCDATADIR)/data/README.md \
	      $(foreach d,$(EXAMPLE_DATA),$(patsubst data/%,$(DESTDIR)$(GPCDATADIR)/data/%,$(wildcard data/$(d)/*.txt)))
	-rmdir $(DESTDIR)$(GPCDATADIR)/examples/slurm $(DESTDIR)$(GPCDATADIR)/examples \
	       $(EXAMPLE_DATA:%=$(DESTDIR)$(GPCDATADIR)/data/%) $(DESTDIR)$(GPCDATADIR)/data \
	       $(DESTDIR)$(GPCDATADIR) 2>/dev/null

clean:
	rm -rf build bin demo-out bench/out repro/out

-include $(LIB_OBJ:.o=.d) $(TOOLS:%=$(BUILD)/%.d) $(wildcard build/fuzz/lib/*/*.d)
