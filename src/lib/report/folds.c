/* folds — k-fold cross-validation assignments and the cutting of files by
 * them (see folds.h). */
#include "report/folds.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "base/alloc.h"
#include "base/err.h"
#include "io/labels.h"

/* The cases sorted by class (stable, so that the shuffle alone decides the
 * order within a class), each class's run shuffled by r. */
static void class_runs_shuffled(const size_t *cls, size_t n, gsl_rng *r, size_t *order)
{
    size_t nclasses = 1;
    for (size_t i = 0; cls && i < n; i++)
        if (cls[i] + 1 > nclasses)
            nclasses = cls[i] + 1;
    size_t *start = gpc_calloc(nclasses + 1, sizeof *start);
    for (size_t i = 0; i < n; i++)
        start[(cls ? cls[i] : 0) + 1]++;
    for (size_t c = 0; c < nclasses; c++)
        start[c + 1] += start[c];
    size_t *next = gpc_mallocarray(nclasses, sizeof *next);
    memcpy(next, start, nclasses * sizeof *next);
    for (size_t i = 0; i < n; i++)
        order[next[cls ? cls[i] : 0]++] = i;
    for (size_t c = 0; c < nclasses; c++)
        if (start[c + 1] - start[c] > 1)
            gsl_ran_shuffle(r, order + start[c], start[c + 1] - start[c], sizeof *order);
    free(next);
    free(start);
}

int gpc_folds_assign(const size_t *cls, size_t n, size_t K, gsl_rng *r, size_t *fold)
{
    if (K < 2)
        return gpc_fail(GPC_EUSAGE, "%zu folds: cross-validation needs at least 2", K);
    if (K > n)
        return gpc_fail(GPC_EUSAGE, "%zu folds for %zu cases: every fold needs a case; use at "
                        "most %zu folds (%zu is leave-one-out)", K, n, n, n);
    size_t *order = gpc_mallocarray(n, sizeof *order);
    size_t *label = gpc_mallocarray(K, sizeof *label);
    class_runs_shuffled(cls, n, r, order);
    for (size_t k = 0; k < K; k++)
        label[k] = k;
    /* position p deals to fold p mod K, and fold 0 would always be among
     * the larger ones: shuffling the labels gives every fold the same chance */
    gsl_ran_shuffle(r, label, K, sizeof *label);
    for (size_t p = 0; p < n; p++)
        fold[order[p]] = label[p % K];
    free(label);
    free(order);
    return GPC_OK;
}

int gpc_folds_repeated(const size_t *cls, size_t n, size_t K, unsigned long seed, size_t R,
                       size_t *fold)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    size_t *one = gpc_mallocarray(n ? n : 1, sizeof *one);
    int st = GPC_OK;
    for (size_t j = 0; j < R && st == GPC_OK; j++) {
        st = gpc_folds_assign(cls, n, K, r, one);
        for (size_t i = 0; st == GPC_OK && i < n; i++)
            fold[i * R + j] = one[i];
    }
    free(one);
    gsl_rng_free(r);
    return st;
}

#define FOLD_MAX 1000000000L

int gpc_folds_column(const gsl_matrix *F, const gpc_source *src, size_t col, long *fold)
{
    for (size_t i = 0; i < F->size1; i++) {
        double v = gsl_matrix_get(F, i, col);
        if (!(v >= 0 && v <= FOLD_MAX && v == floor(v))) {
            char where[300];
            return gpc_fail(GPC_EINPUT, "%s: %g is not a fold number (a whole number from 0); "
                            "make folds with gpc-folds", gpc_source_where(src, i, where,
                                                                          sizeof where), v);
        }
        fold[i] = (long)v;
    }
    return GPC_OK;
}

/* ---- cutting files ---------------------------------------------------- */

/* A line that is no row: blank, or a comment. */
static int is_filler(const char *p, const char *eol)
{
    while (p < eol && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
        p++;
    return p == eol || *p == '#';
}

static int is_separator(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',';
}

/* Whether a line has a field (between blanks or commas) that is not a
 * number, as a header line of names has. */
static int has_word(const char *p, const char *eol)
{
    char tok[256];
    while (p < eol) {
        while (p < eol && is_separator(*p))
            p++;
        const char *s = p;
        while (p < eol && !is_separator(*p))
            p++;
        if (p == s)
            continue;
        size_t len = (size_t)(p - s) < sizeof tok - 1 ? (size_t)(p - s) : sizeof tok - 1;
        memcpy(tok, s, len);
        tok[len] = '\0';
        double x;
        if (!gpc_labels_number(tok, &x))
            return 1;
    }
    return 0;
}

static const char *line_end(const char *p, const char *end)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl + 1 : end;
}

/* The row-like lines of text, and where the first one starts. */
static size_t count_rows(const char *text, size_t len, const char **first)
{
    size_t rows = 0;
    *first = NULL;
    for (const char *p = text, *end = text + len; p < end; p = line_end(p, end))
        if (!is_filler(p, line_end(p, end)) && rows++ == 0)
            *first = p;
    return rows;
}

static int write_bytes(const char *p, size_t len, FILE *out, const char *outname)
{
    if (len && fwrite(p, 1, len, out) != len)
        return gpc_fail(GPC_EINPUT, "%s: write error", outname);
    return GPC_OK;
}

static int cut_text(const char *text, size_t len, const char *name, const unsigned char *keep,
                    size_t n, FILE *out, const char *outname)
{
    const char *first, *end = text + len;
    size_t rows = count_rows(text, len, &first);
    gpc_header_mode mode = gpc_matio_header();
    int header = rows > 0 && (mode == GPC_HEADER_YES ||
                              (mode == GPC_HEADER_AUTO && rows == n + 1 &&
                               has_word(first, line_end(first, end))));
    if (rows - (size_t)header != n)
        return gpc_fail(GPC_EINPUT, "%s: %zu rows%s, but the folds are of %zu cases; give the "
                        "file the folds were made for", name, rows - (size_t)header,
                        header ? " under a header line" : "", n);
    size_t i = 0;
    for (const char *p = text; p < end;) {
        const char *eol = line_end(p, end);
        int copy;
        if (is_filler(p, eol) || (header && p == first))
            copy = 1; /* comments, blanks and the header go to either side */
        else
            copy = keep[i++];
        if (copy && write_bytes(p, (size_t)(eol - p), out, outname) != GPC_OK)
            return GPC_EINPUT;
        p = eol;
    }
    return GPC_OK;
}

static int cut_matrix(const char *text, size_t len, const char *name, const unsigned char *keep,
                      size_t n, gpc_format fmt, FILE *out, const char *outname)
{
    FILE *in = fmemopen((void *)text, len, "r");
    if (!in)
        return gpc_fail(GPC_EINPUT, "%s: cannot read it from memory", name);
    gsl_matrix *M;
    gpc_source src;
    int st = gpc_matrix_read_stream(in, name, &M, &src);
    fclose(in);
    if (st != GPC_OK)
        return st;
    if (M->size1 != n)
        st = gpc_fail(GPC_EINPUT, "%s: %zu rows, but the folds are of %zu cases; give the file "
                      "the folds were made for", name, M->size1, n);
    else
        st = gpc_folds_cut_rows(M, src.colnames, keep, name, fmt, out, outname);
    gsl_matrix_free(M);
    gpc_source_free(&src);
    return st;
}

int gpc_folds_cut_rows(const gsl_matrix *M, char *const *colnames, const unsigned char *keep,
                       const char *name, gpc_format fmt, FILE *out, const char *outname)
{
    size_t kept = 0, n = M->size1;
    for (size_t i = 0; i < n; i++)
        kept += keep[i] != 0;
    /* a fold can keep no row of a file only when asked for an empty side;
     * GSL has no empty matrices */
    if (kept == 0)
        return gpc_fail(GPC_EINPUT, "%s: no row is selected", name);
    gsl_matrix *S = gpc_matrix_alloc(kept, M->size2);
    for (size_t i = 0, r = 0; i < n; i++)
        if (keep[i]) {
            gsl_vector_const_view row = gsl_matrix_const_row(M, i);
            gsl_matrix_set_row(S, r++, &row.vector);
        }
    int st = gpc_matrix_write_named(out, outname, S, fmt, colnames);
    gsl_matrix_free(S);
    return st;
}

int gpc_folds_cut(const char *text, size_t len, const char *name, const unsigned char *keep,
                  size_t n, int fmt_given, gpc_format fmt, FILE *out, const char *outname)
{
    int npy = len >= 6 && memcmp(text, "\x93NUMPY", 6) == 0;
    gpc_format own = npy ? GPC_FMT_NPY : GPC_FMT_TEXT;
    if (!fmt_given)
        fmt = own;
    if (!npy && fmt == GPC_FMT_TEXT)
        return cut_text(text, len, name, keep, n, out, outname);
    return cut_matrix(text, len, name, keep, n, fmt, out, outname);
}
