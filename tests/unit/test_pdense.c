/* linalg/pdense: the block-cyclic layout on every place of a grid, and on
 * one process (a 1 x 1 grid) its products, factor, solve and inverse, and
 * the Laplace approximation on it against plain matrices. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "linalg/pdense.h"
#include "tap.h"
#include "grid_laplace.h"

/* Every entry of an n x n matrix lies on exactly one place of a p x q grid,
 * at the local position the layout says. */
static void test_layout(size_t n, int nb, int p, int q)
{
    unsigned char *seen = calloc(n * n > 0 ? n * n : 1, 1);
    int ok = 1;
    size_t total_rows = 0;
    for (int pr = 0; pr < p; pr++)
        for (int pc = 0; pc < q; pc++) {
            gpc_pgrid g = {gpc_comm_world(), p, q, nb, pr, pc, 0};
            gpc_pdense *A = gpc_pdense_alloc(&g, n);
            ok &= A->rows == gpc_pgrid_local(n, nb, pr, p) && A->ld >= (A->rows ? A->rows : 1);
            if (pc == 0)
                total_rows += A->rows;
            for (size_t i = 0; i < A->rows; i++) {
                size_t li;
                ok &= A->row_index[i] < n && (i == 0 || A->row_index[i] > A->row_index[i - 1]);
                ok &= (A->row_index[i] / (size_t)nb) % (size_t)p == (size_t)pr;
                ok &= gpc_pdense_local_row(A, A->row_index[i], &li) && li == i;
            }
            for (size_t j = 0; j < A->cols; j++)
                for (size_t i = 0; i < A->rows; i++)
                    seen[A->row_index[i] * n + A->col_index[j]]++;
            gpc_pdense_free(A);
        }
    for (size_t e = 0; e < n * n; e++)
        ok &= seen[e] == 1;
    TEST_OK(ok && total_rows == n, "n=%zu in blocks of %d on %dx%d: every entry once, in order",
            n, nb, p, q);
    free(seen);
}

static void test_grid_names(void)
{
    int p, q, ok = 1;
    int want[][3] = {{1, 1, 1}, {2, 1, 2}, {4, 2, 2}, {6, 2, 3}, {7, 1, 7}, {12, 3, 4}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        gpc_pgrid_squarest(want[i][0], &p, &q);
        ok &= p == want[i][1] && q == want[i][2];
    }
    TEST_OK(ok, "the squarest grids of 1, 2, 4, 6, 7 and 12 ranks");
    TEST_OK(gpc_pgrid_parse("2x3", &p, &q) == GPC_OK && p == 2 && q == 3 &&
                gpc_pgrid_parse("1X4", &p, &q) == GPC_OK && p == 1 && q == 4,
            "2x3 and 1X4 are grids");
    const char *bad[] = {"", "2", "2x", "x2", "0x2", "2x0", "-1x2", "2x3x", "2x3 ", "axb"};
    ok = 1;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ok &= gpc_pgrid_parse(bad[i], &p, &q) == GPC_EUSAGE;
    TEST_OK(ok, "malformed grids are usage errors");
    TEST_OK(gpc_pgrid_request(2, 2, 0) == GPC_EUSAGE && strstr(gpc_errmsg(), "needs 4 ranks"),
            "a 2x2 grid on one process is refused: %s", gpc_errmsg());
}

/* A random symmetric positive definite n x n matrix, and its local part on
 * the 1 x 1 grid with the upper triangle poisoned (never to be read). */
static void spd(gsl_rng *r, size_t n, gsl_matrix *S)
{
    gsl_matrix *G = gsl_matrix_alloc(n, n);
    for (size_t i = 0; i < n * n; i++)
        G->data[i] = gsl_rng_uniform(r) - 0.5;
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, G, G, 0.0, S);
    for (size_t i = 0; i < n; i++)
        *gsl_matrix_ptr(S, i, i) += 1.0;
    gsl_matrix_free(G);
}

static void test_operations(gsl_rng *r, const gpc_pgrid *g)
{
    size_t n = 37;
    gsl_matrix *S = gsl_matrix_alloc(n, n), *Lf = gsl_matrix_alloc(n, n);
    spd(r, n, S);
    gpc_pdense *A = gpc_pdense_alloc(g, n);
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < n; i++)
            A->a[i + j * A->ld] = i >= j ? gsl_matrix_get(S, i, j) : 1e300;
    double x[37], y[37], d[37], b[2 * 37];
    gsl_vector *yw = gsl_vector_alloc(n);
    for (size_t i = 0; i < n; i++)
        x[i] = gsl_rng_uniform(r) - 0.5;
    gsl_vector_view xv = gsl_vector_view_array(x, n);
    gsl_blas_dsymv(CblasLower, 1.0, S, &xv.vector, 0.0, yw);
    gpc_pdense_symv(A, x, y);
    gpc_pdense_diag(A, d);
    int ok = 1;
    for (size_t i = 0; i < n; i++)
        ok &= fabs(y[i] - gsl_vector_get(yw, i)) < 1e-13 && d[i] == gsl_matrix_get(S, i, i);
    TEST_OK(ok, "products and diagonal read the lower triangle alone");

    double s[37];
    for (size_t i = 0; i < n; i++)
        s[i] = 0.5 + gsl_rng_uniform(r);
    gpc_pdense_scale(A, s, 2.0);
    ok = 1;
    for (size_t j = 0; j < n; j++)
        for (size_t i = j; i < n; i++)
            ok &= fabs(A->a[i + j * A->ld] - (s[i] * s[j] * gsl_matrix_get(S, i, j) +
                                               (i == j ? 2.0 : 0.0))) < 1e-14;
    TEST_OK(ok, "scaling by s on both sides and a shift of the diagonal");

    gsl_matrix_memcpy(Lf, S);
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < n; i++)
            gsl_matrix_set(Lf, i, j, s[i] * s[j] * gsl_matrix_get(S, i, j) + (i == j ? 2.0 : 0.0));
    gsl_matrix *Inv = gsl_matrix_alloc(n, n);
    gsl_linalg_cholesky_decomp1(Lf);
    gsl_matrix_memcpy(Inv, Lf);
    gsl_linalg_cholesky_invert(Inv);
    TEST_OK(gpc_pdense_factor(A) == GPC_OK, "factor of a positive definite matrix");
    for (size_t i = 0; i < 2 * n; i++)
        b[i] = gsl_rng_uniform(r) - 0.5;
    double b0[2 * 37];
    memcpy(b0, b, sizeof b);
    gpc_pdense_solve(A, b, 2);
    ok = 1;
    for (size_t c = 0; c < 2; c++) {
        gsl_vector_view bv = gsl_vector_view_array(b0 + c * n, n);
        gsl_linalg_cholesky_svx(Lf, &bv.vector);
        for (size_t i = 0; i < n; i++)
            ok &= fabs(b[i + c * n] - b0[i + c * n]) < 1e-12 * (1 + fabs(b0[i + c * n]));
    }
    TEST_OK(ok, "two right-hand sides solved as by GSL's Cholesky");
    gpc_pdense_inverse(A);
    ok = 1;
    for (size_t j = 0; j < n; j++)
        for (size_t i = j; i < n; i++)
            ok &= fabs(A->a[i + j * A->ld] - gsl_matrix_get(Inv, i, j)) < 1e-12;
    TEST_OK(ok, "the inverse's lower triangle as GSL's");
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < n; i++)
            A->a[i + j * A->ld] = (i == j) ? (i == 5 ? -1.0 : 1.0) : 0.0;
    TEST_OK(gpc_pdense_factor(A) == GPC_ENUM, "an indefinite matrix is not factored");
    gsl_matrix_free(S);
    gsl_matrix_free(Lf);
    gsl_matrix_free(Inv);
    gsl_vector_free(yw);
    gpc_pdense_free(A);
}

int main(void)
{
    gpc_gsl_quiet();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 11);
    test_layout(10, 3, 2, 3);
    test_layout(7, 64, 2, 2);
    test_layout(130, 16, 1, 3);
    test_layout(130, 16, 3, 1);
    test_layout(1, 1, 1, 1);
    test_grid_names();
    TEST_OK(gpc_pgrid_request(0, 0, 8) == GPC_OK && gpc_pgrid_default() == NULL,
            "one process asks for no grid by itself, nor for a block size alone");
    TEST_OK(gpc_pgrid_request(1, 1, 8) == GPC_OK, "a 1x1 grid in blocks of 8");
    const gpc_pgrid *g = gpc_pgrid_default();
    TEST_OK(g && g->p == 1 && g->q == 1 && g->nb == 8, "the grid asked for is the default");
    test_operations(r, g);
    grid_laplace_all(r, g, 61, 1e-10);
    gsl_rng_free(r);
    return tap_done();
}
