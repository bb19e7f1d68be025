/* Tests of folds.c: the invariants of stratified k-fold assignments on
 * random label sets, plain k-fold, seeds and repeats, and the cutting of
 * text files by a fold. */
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "io/matio.h"
#include "report/folds.h"
#include "tap.h"

/* Whether counts[0 .. m-1] differ by at most one. */
static int within_one(const size_t *counts, size_t m)
{
    size_t lo = counts[0], hi = counts[0];
    for (size_t k = 1; k < m; k++) {
        lo = counts[k] < lo ? counts[k] : lo;
        hi = counts[k] > hi ? counts[k] : hi;
    }
    return hi - lo <= 1;
}

/* Checks one assignment of n cases of C classes to K folds: every fold a
 * number below K (so each case in exactly one fold), fold sizes within one,
 * and (stratified) each class's counts per fold within one. */
static int assignment_ok(const size_t *cls, size_t n, size_t C, size_t K, const size_t *fold,
                         size_t stride, int stratified)
{
    size_t *size = calloc(K, sizeof *size), *per = calloc(K * C, sizeof *per);
    int ok = 1;
    for (size_t i = 0; i < n; i++) {
        size_t f = fold[i * stride];
        if (f >= K) {
            ok = 0;
            break;
        }
        size[f]++;
        per[cls[i] * K + f]++;
    }
    size_t total = 0;
    for (size_t k = 0; ok && k < K; k++)
        total += size[k];
    ok = ok && total == n && within_one(size, K);
    for (size_t c = 0; ok && stratified && c < C; c++)
        ok = within_one(per + c * K, K);
    free(size);
    free(per);
    return ok;
}

static void random_labels(gsl_rng *r, size_t n, size_t C, size_t *cls)
{
    /* skewed class sizes: class c drawn with weight c + 1, and some classes
     * smaller than K */
    for (size_t i = 0; i < n; i++) {
        size_t u = gsl_rng_uniform_int(r, C * (C + 1) / 2), c = 0;
        while (u >= c + 1) {
            u -= c + 1;
            c++;
        }
        cls[i] = c;
    }
}

static void test_invariants(void)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7);
    int strat_ok = 1, plain_ok = 1, repeat_ok = 1;
    for (int t = 0; t < 200; t++) {
        size_t n = 2 + gsl_rng_uniform_int(r, 300), C = 1 + gsl_rng_uniform_int(r, 7);
        size_t K = 2 + gsl_rng_uniform_int(r, n - 1 < 20 ? n - 1 : 20), R = 3;
        size_t *cls = malloc(n * sizeof *cls), *fold = malloc(n * R * sizeof *fold);
        random_labels(r, n, C, cls);
        unsigned long seed = gsl_rng_get(r);
        strat_ok &= gpc_folds_repeated(cls, n, K, seed, R, fold) == GPC_OK;
        for (size_t j = 0; j < R; j++)
            strat_ok &= assignment_ok(cls, n, C, K, fold + j, R, 1);
        /* repeats are their own shuffles: with n >= 20 two of them agree
         * on every case with negligible probability */
        if (n >= 20) {
            int differ = 0;
            for (size_t i = 0; i < n; i++)
                differ |= fold[i * R] != fold[i * R + 1];
            repeat_ok &= differ;
        }
        plain_ok &= gpc_folds_repeated(NULL, n, K, seed, 1, fold) == GPC_OK;
        size_t *zero = calloc(n, sizeof *zero);
        plain_ok &= assignment_ok(zero, n, 1, K, fold, 1, 0);
        free(zero);
        free(cls);
        free(fold);
    }
    TEST_OK(strat_ok, "stratified: 200 random label sets x 3 repeats, every case in one fold, "
            "sizes and each class's counts within one");
    TEST_OK(plain_ok, "plain k-fold: every case in one fold, sizes within one");
    TEST_OK(repeat_ok, "repeats differ from one another");
    gsl_rng_free(r);
}

/* The classes are spread by the deal, not left to chance: a class of
 * exactly K cases has one in every fold, for every seed. */
static void test_class_of_k(void)
{
    size_t cls[25], fold[25], K = 5;
    int ok = 1;
    for (size_t i = 0; i < 25; i++)
        cls[i] = i % 3 == 0 ? 0 : 1 + i % 2; /* 9, 8 and 8 cases */
    cls[24] = 2;
    for (unsigned long seed = 1; seed <= 50; seed++) {
        gpc_folds_repeated(cls, 25, K, seed, 1, fold);
        ok &= assignment_ok(cls, 25, 3, K, fold, 1, 1);
    }
    TEST_OK(ok, "25 cases of 3 classes, 5 folds, 50 seeds: each class within one per fold");
}

static void test_seeds(void)
{
    size_t n = 100, cls[100], a[100], b[100], c[100], d[200];
    for (size_t i = 0; i < n; i++)
        cls[i] = i % 4;
    gpc_folds_repeated(cls, n, 10, 42, 1, a);
    gpc_folds_repeated(cls, n, 10, 42, 1, b);
    gpc_folds_repeated(cls, n, 10, 43, 1, c);
    gpc_folds_repeated(cls, n, 10, 42, 2, d);
    TEST_OK(memcmp(a, b, sizeof a) == 0, "the same seed gives the same folds");
    TEST_OK(memcmp(a, c, sizeof a) != 0, "seeds 42 and 43 give different folds");
    int first = 1;
    for (size_t i = 0; i < n; i++)
        first &= d[2 * i] == a[i];
    TEST_OK(first, "the first of two repeats is the single assignment of the same seed");
}

static void test_limits(void)
{
    size_t cls[3] = {0, 1, 0}, fold[3];
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    TEST_OK(gpc_folds_assign(cls, 3, 1, r, fold) == GPC_EUSAGE, "one fold is a usage error");
    int st = gpc_folds_assign(cls, 3, 4, r, fold);
    TEST_OK(st == GPC_EUSAGE &&
            strstr(gpc_errmsg(), "at most 3 folds") != NULL,
            "more folds than cases is a usage error saying the largest: %s", gpc_errmsg());
    TEST_OK(gpc_folds_assign(cls, 3, 3, r, fold) == GPC_OK && fold[0] != fold[1] &&
            fold[1] != fold[2] && fold[0] != fold[2], "K = n is leave-one-out");
    gsl_rng_free(r);
}

/* Cut text into a memory buffer; returns the status, *got the text. */
static int cut(const char *text, const unsigned char *keep, size_t n, char *got, size_t size)
{
    FILE *f = fmemopen(got, size, "w");
    memset(got, 0, size);
    int st = gpc_folds_cut(text, strlen(text), "in.txt", keep, n, 0, GPC_FMT_TEXT, f, "out");
    fclose(f);
    return st;
}

static void test_cut_text(void)
{
    char got[512];
    unsigned char keep[3] = {1, 0, 1}, drop[3] = {0, 1, 0};
    const char *csv = "# made by hand\na,b\n1,2\n\n3,4\n5,6";
    TEST_OK(cut(csv, keep, 3, got, sizeof got) == GPC_OK &&
            strcmp(got, "# made by hand\na,b\n1,2\n\n5,6") == 0,
            "CSV: comment, header and blank line kept, rows 1 and 3: '%s'", got);
    TEST_OK(cut(csv, drop, 3, got, sizeof got) == GPC_OK &&
            strcmp(got, "# made by hand\na,b\n\n3,4\n") == 0, "the other side: row 2: '%s'", got);
    const char *labels = "type\nWinF\nHead\nWinF\n";
    TEST_OK(cut(labels, keep, 3, got, sizeof got) == GPC_OK &&
            strcmp(got, "type\nWinF\nWinF\n") == 0, "word labels under a header: '%s'", got);
    const char *numbers = "7 8\n1 2\n3 4\n5 6\n";
    int st = cut(numbers, keep, 3, got, sizeof got);
    TEST_OK(st == GPC_EINPUT &&
            strstr(gpc_errmsg(), "in.txt: 4 rows, but the folds are of 3 cases") != NULL,
            "an extra row of numbers is no header: %s", gpc_errmsg());
    st = cut("1\n2\n", keep, 3, got, sizeof got);
    TEST_OK(st == GPC_EINPUT &&
            strstr(gpc_errmsg(), "2 rows") != NULL, "too few rows: %s", gpc_errmsg());
    gpc_matio_set_header(GPC_HEADER_NO);
    TEST_OK(cut(labels, keep, 3, got, sizeof got) == GPC_EINPUT,
            "with --no-header a fourth label line is a row too many");
    gpc_matio_set_header(GPC_HEADER_YES);
    TEST_OK(cut("9\n1\n2\n3\n", drop, 3, got, sizeof got) == GPC_OK &&
            strcmp(got, "9\n2\n") == 0, "with --header the first line is the header: '%s'", got);
    gpc_matio_set_header(GPC_HEADER_AUTO);
}

/* Rows of a matrix kept with every column, also columns no kept row uses:
 * a LIBSVM file's largest index may be in one case only. */
static void test_cut_rows(void)
{
    gsl_matrix *M = gsl_matrix_calloc(3, 3);
    gsl_matrix_set(M, 0, 0, 1.5);
    gsl_matrix_set(M, 1, 2, 7); /* the only nonzero of column 3 */
    gsl_matrix_set(M, 2, 1, -2);
    unsigned char keep[3] = {1, 0, 1}, none[3] = {0, 0, 0};
    char got[512];
    FILE *f = fmemopen(got, sizeof got, "w");
    memset(got, 0, sizeof got);
    int st = gpc_folds_cut_rows(M, NULL, keep, "s.svm", GPC_FMT_TEXT, f, "out");
    fclose(f);
    TEST_OK(st == GPC_OK && strcmp(got, "1.5 0 0\n0 -2 0\n") == 0,
            "rows 1 and 3 with all three columns: '%s'", got);
    char *names[] = {"a", "b", "c", NULL};
    f = fmemopen(got, sizeof got, "w");
    memset(got, 0, sizeof got);
    st = gpc_folds_cut_rows(M, names, keep, "x.csv", GPC_FMT_TEXT, f, "out");
    fclose(f);
    TEST_OK(st == GPC_OK && strcmp(got, "a,b,c\n1.5,0,0\n0,-2,0\n") == 0,
            "named columns: CSV under their header: '%s'", got);
    f = fmemopen(got, sizeof got, "w");
    st = gpc_folds_cut_rows(M, NULL, none, "x.txt", GPC_FMT_TEXT, f, "out");
    fclose(f);
    TEST_OK(st == GPC_EINPUT && strstr(gpc_errmsg(), "x.txt: no row is selected"),
            "no row kept is an error: %s", gpc_errmsg());
    gsl_matrix_free(M);
}

int main(void)
{
    test_invariants();
    test_class_of_k();
    test_seeds();
    test_limits();
    test_cut_text();
    test_cut_rows();
    return tap_done();
}
