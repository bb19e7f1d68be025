# gpc — Gaussian process classification tools.
# `make` builds the tools, `make check` runs every test, `make demo` runs the
# main job on the bundled data.  Both install missing Debian packages first.

PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR   = $(PREFIX)/bin
MANDIR   = $(PREFIX)/share/man

CC      ?= cc
CFLAGS  ?= -O2 -g
# GSL is linked against OpenBLAS as its CBLAS, never gslcblas: the Cholesky at
# the heart of every method runs about forty times faster that way.
GSL_CFLAGS := $(shell pkg-config --cflags gsl 2>/dev/null)
GSL_LIBDIR := $(shell pkg-config --libs-only-L gsl 2>/dev/null)
BLAS_LIBS  := $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas)
# HAVE_INLINE lets GSL inline its element accessors; OpenMP spreads the
# O(n^2 p) kernel loops over the cores (results do not depend on their number).
ALL_CFLAGS  = -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wshadow -fopenmp \
              -DHAVE_INLINE -Isrc/lib $(GSL_CFLAGS) $(CFLAGS)
LDLIBS      = $(GSL_LIBDIR) -lgsl $(BLAS_LIBS) -lm

VERSION := $(shell cat VERSION)

TOOLS   = gpc-kernel gpc-fit gpc-predict gpc-evidence gpc-hmc gpc-scale gpc-score
LIB_SRC = $(wildcard src/lib/*.c)
LIB_OBJ = $(LIB_SRC:src/lib/%.c=build/lib/%.o)
LIB     = build/libgpc.a
BINS    = $(TOOLS:%=bin/%)
UNIT_SRC = $(wildcard tests/unit/test_*.c)
UNIT_BIN = $(UNIT_SRC:tests/unit/%.c=build/tests/%)

.PHONY: all check unit cli demo bench table-bw97 table-ow98 table-kg deps install uninstall clean
all: $(BINS)

build/lib/%.o: src/lib/%.c | build/lib
	$(CC) $(ALL_CFLAGS) -DGPC_VERSION='"$(VERSION)"' -MMD -MP -c -o $@ $<
build/%.o: src/%.c | build/lib
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<
$(LIB): $(LIB_OBJ)
	rm -f $@ && ar rcs $@ $^
bin/%: build/%.o $(LIB) | bin
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB) $(LDLIBS)
build/tests/%: tests/unit/%.c tests/unit/tap.h tests/unit/gaussian_lik.h tests/unit/problems.h $(LIB) | build/tests
	$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(LIB) $(LDLIBS)
build/lib build/tests bin:
	mkdir -p $@

deps:
	@sh scripts/deps.sh

check: deps
	@$(MAKE) --no-print-directory all $(UNIT_BIN)
	@sh tests/run.sh $(UNIT_BIN)

demo: deps
	@$(MAKE) --no-print-directory all
	@sh scripts/demo.sh

# Barber & Williams (1997), Table 1 by HMC and MAP (about a minute).
table-bw97: deps
	@sh scripts/deps.sh gnuplot-nox
	@$(MAKE) --no-print-directory all
	@sh repro/table-bw97.sh

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

bench: deps
	@$(MAKE) --no-print-directory all build/bench-laplace build/bench-ep
	@sh bench/run.sh

build/bench-%: bench/bench-%.c $(LIB) | build/lib
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB) $(LDLIBS)

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
	           $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7
	install -m 755 $(BINS) $(DESTDIR)$(BINDIR)
	install -m 644 man/*.1 $(DESTDIR)$(MANDIR)/man1
	install -m 644 man/*.5 $(DESTDIR)$(MANDIR)/man5
	install -m 644 man/*.7 $(DESTDIR)$(MANDIR)/man7

uninstall:
	rm -f $(TOOLS:%=$(DESTDIR)$(BINDIR)/%)
	rm -f $(TOOLS:%=$(DESTDIR)$(MANDIR)/man1/%.1)
	rm -f $(DESTDIR)$(MANDIR)/man5/gpc-formats.5 $(DESTDIR)$(MANDIR)/man7/gpc.7

clean:
	rm -rf build bin demo-out bench/out repro/out

-include $(LIB_OBJ:.o=.d) $(TOOLS:%=build/%.d)
