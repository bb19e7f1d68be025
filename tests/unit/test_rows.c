/* Training rows read a batch at a time (sparse/rows): a .npy file of
 * doubles gives the numbers and the hash that the same matrix in memory
 * gives, at any first row and count; a 1-D array is one column; what cannot
 * be read in place (another dtype, Fortran order, a file cut short, a NaN)
 * is refused naming the file, and the row where there is one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "io/npy.h"
#include "sparse/rows.h"
#include "random_matrix.h"
#include "tap.h"
#include "tmpfiles.h"


static void save(const char *path, const gsl_matrix *m)
{
    FILE *f = fopen(path, "wb");
    gpc_npy_write(f, m);
    fclose(f);
}

/* A .npy file with the header numpy writes for descr and shape and the
 * given data bytes. */
static void save_raw(const char *path, const char *descr, int fortran, const char *shape,
                     const void *data, size_t len)
{
    char dict[128];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }",
                     descr, fortran ? "True" : "False", shape);
    size_t hlen = (size_t)n + 1;
    hlen += (64 - (10 + hlen) % 64) % 64;
    FILE *f = fopen(path, "wb");
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    unsigned char hl[2] = {(unsigned char)(hlen & 0xff), (unsigned char)(hlen >> 8)};
    fwrite(hl, 1, 2, f);
    fputs(dict, f);
    for (size_t i = (size_t)n; i + 1 < hlen; i++)
        fputc(' ', f);
    fputc('\n', f);
    fwrite(data, 1, len, f);
    fclose(f);
}

int main(void)
{
    gpc_gsl_quiet();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 13);
    TEST_OK(mkdtemp(strcpy(tmp_dir, "/tmp/gpc-rows-XXXXXX")) != NULL, "a directory for the files");
    size_t n = 1234, d = 5;
    gsl_matrix *X = random_matrix(r, n, d);
    double *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++)
        y[i] = i % 3 ? 1.0 : -1.0;
    save(tmp_path("X.npy"), X);
    gpc_rows *mem = gpc_rows_memory(X->data, n, d, "X"), *file = NULL;
    int st = gpc_rows_open_npy(tmp_path("X.npy"), &file);
    TEST_OK(st == GPC_OK && gpc_rows_count(file) == n && gpc_rows_dim(file) == d,
            "a .npy file of doubles opens as %zu rows of %zu: %s", n, d, st ? gpc_errmsg() : "");

    double *a = malloc(n * d * sizeof *a), *b = malloc(n * d * sizeof *b);
    int same = 1;
    const size_t firsts[] = {0, 1, 617, 1233}, counts[] = {1, 7, 500, 1};
    for (size_t t = 0; t < 4; t++) {
        same &= gpc_rows_read(mem, firsts[t], counts[t], a) == GPC_OK &&
                gpc_rows_read(file, firsts[t], counts[t], b) == GPC_OK &&
                memcmp(a, b, counts[t] * d * sizeof *a) == 0 &&
                memcmp(a, X->data + firsts[t] * d, counts[t] * d * sizeof *a) == 0;
    }
    TEST_OK(same, "rows read from the file are the matrix's, bit for bit");
    unsigned long long h1, h2;
    gpc_rows *ym = gpc_rows_memory(y, n, 1, "y");
    TEST_OK(gpc_rows_hash(mem, ym, &h1) == GPC_OK && gpc_rows_hash(file, ym, &h2) == GPC_OK &&
                h1 == h2,
            "the file and the matrix have the same hash");
    y[700] = -y[700];
    gpc_rows_hash(file, ym, &h2);
    TEST_OK(h1 != h2, "one label changed changes the hash");
    y[700] = -y[700];
    gpc_rows_close(ym);

    /* labels as a .npy column of two numbers, 0 and 1, read as -1 and +1 */
    double *y01 = malloc(n * sizeof *y01);
    for (size_t i = 0; i < n; i++)
        y01[i] = y[i] > 0 ? 1.0 : 0.0;
    gsl_matrix_view yv = gsl_matrix_view_array(y01, n, 1);
    save(tmp_path("y01.npy"), &yv.matrix);
    gpc_rows *yf;
    double neg, pos;
    st = gpc_rows_open_npy(tmp_path("y01.npy"), &yf);
    st = st ? st : gpc_rows_binary_classes(yf, &neg, &pos);
    TEST_OK(st == GPC_OK && neg == 0.0 && pos == 1.0, "the two classes of a label column, in "
            "order: %g %g", neg, pos);
    gpc_rows_map_binary(yf, neg, pos);
    ym = gpc_rows_memory(y, n, 1, "y");
    gpc_rows_hash(file, yf, &h2);
    TEST_OK(h1 == h2, "read as -1 and +1, they hash as those labels in memory do");
    gpc_rows_close(ym);
    y01[7] = 2.0;
    save(tmp_path("y3.npy"), &yv.matrix);
    gpc_rows *y3;
    gpc_rows_open_npy(tmp_path("y3.npy"), &y3);
    TEST_OK(gpc_rows_binary_classes(y3, &neg, &pos) == GPC_EINPUT &&
                strstr(gpc_errmsg(), "case 8: a third class"),
            "a third class is refused naming its case: %s", gpc_errmsg());
    gpc_rows_map_binary(y3, 0.0, 1.0);
    TEST_OK(gpc_rows_read(y3, 0, 10, a) == GPC_EINPUT && strstr(gpc_errmsg(), "case 8"),
            "and so is a label of neither class when read: %s", gpc_errmsg());
    gpc_rows_close(y3);
    gpc_rows_close(yf);
    free(y01);
    TEST_OK(gpc_rows_read(file, 1230, 5, a) == GPC_EINPUT && strstr(gpc_errmsg(), "X"),
            "rows past the end are refused: %s", gpc_errmsg());
    gpc_rows_close(file);

    /* a 1-D array is one column */
    gsl_matrix_view col = gsl_matrix_view_array(y, n, 1);
    save(tmp_path("y.npy"), &col.matrix);
    st = gpc_rows_open_npy(tmp_path("y.npy"), &file);
    TEST_OK(st == GPC_OK && gpc_rows_dim(file) == 1, "an n x 1 array is one column");
    gpc_rows_close(file);
    save_raw(tmp_path("v.npy"), "<f8", 0, "(3,)", y, 3 * sizeof *y);
    st = gpc_rows_open_npy(tmp_path("v.npy"), &file);
    TEST_OK(st == GPC_OK && gpc_rows_count(file) == 3 && gpc_rows_dim(file) == 1 &&
                gpc_rows_read(file, 0, 3, a) == GPC_OK && a[2] == y[2],
            "a 1-D array is one column: %s", st ? gpc_errmsg() : "");
    gpc_rows_close(file);

    /* what cannot be read in place */
    float f4[6] = {1, 2, 3, 4, 5, 6};
    save_raw(tmp_path("f4.npy"), "<f4", 0, "(3, 2)", f4, sizeof f4);
    TEST_OK(gpc_rows_open_npy(tmp_path("f4.npy"), &file) == GPC_EINPUT &&
                strstr(gpc_errmsg(), "float64") && strstr(gpc_errmsg(), "f4.npy"),
            "float32 is refused, saying what to save: %s", gpc_errmsg());
    save_raw(tmp_path("fo.npy"), "<f8", 1, "(3, 2)", X->data, 6 * sizeof(double));
    TEST_OK(gpc_rows_open_npy(tmp_path("fo.npy"), &file) == GPC_EINPUT,
            "Fortran order is refused: %s", gpc_errmsg());
    save_raw(tmp_path("cut.npy"), "<f8", 0, "(30, 2)", X->data, 59 * sizeof(double));
    TEST_OK(gpc_rows_open_npy(tmp_path("cut.npy"), &file) == GPC_EINPUT &&
                strstr(gpc_errmsg(), "truncated"),
            "a file shorter than its header says is refused: %s", gpc_errmsg());
    double bad[6] = {1, 2, 3, NAN, 5, 6};
    save_raw(tmp_path("nan.npy"), "<f8", 0, "(3, 2)", bad, sizeof bad);
    st = gpc_rows_open_npy(tmp_path("nan.npy"), &file);
    TEST_OK(st == GPC_OK && gpc_rows_read(file, 0, 3, a) == GPC_EINPUT &&
                strstr(gpc_errmsg(), "row 2: column 2 is not a finite number"),
            "a NaN is refused when read, naming its row and column: %s", gpc_errmsg());
    gpc_rows_close(file);
    TEST_OK(gpc_rows_open_npy(tmp_path("none.npy"), &file) == GPC_EINPUT &&
                strstr(gpc_errmsg(), "none.npy"),
            "a missing file is refused naming it: %s", gpc_errmsg());

    const char *names[] = {"X.npy", "y.npy", "y01.npy", "y3.npy", "v.npy", "f4.npy", "fo.npy", "cut.npy", "nan.npy"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        unlink(tmp_path(names[i]));
    rmdir(tmp_dir);
    gpc_rows_close(mem);
    gsl_matrix_free(X);
    free(y);
    free(a);
    free(b);
    gsl_rng_free(r);
    return tap_done();
}
