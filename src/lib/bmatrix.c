#include "bmatrix.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cblas.h>

#include "alloc.h"
#include "parallel.h"

/* LAPACK through OpenBLAS.  Row-major lower is column-major upper, hence "U". */
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info,
             size_t uplo_len);
void dpotri_(const char *uplo, const int *n, double *a, const int *lda, int *info,
             size_t uplo_len);
void dlauum_(const char *uplo, const int *n, double *a, const int *lda, int *info,
             size_t uplo_len);
void dsytrf_(const char *uplo, const int *n, double *a, const int *lda, int *ipiv,
             double *work, const int *lwork, int *info, size_t uplo_len);
void dsytrs_(const char *uplo, const int *n, const int *nrhs, const double *a, const int *lda,
             const int *ipiv, double *b, const int *ldb, int *info, size_t uplo_len);
void dsytri_(const char *uplo, const int *n, double *a, const int *lda, const int *ipiv,
             double *work, int *info, size_t uplo_len);

/* Lower triangle of diag(e) + diag(s) K diag(s) in L (e NULL: the identity).
 * Vectorised: at 200 rows the scalar loop took a tenth of the time of the
 * factorisation that follows. */
__attribute__((target_clones("avx512f", "avx2", "default"))) static void
assemble(const gsl_matrix *K, const double *s, const double *e, gsl_matrix *L)
{
    size_t n = K->size1;
#pragma omp parallel for num_threads(gpc_parallel_threads()) schedule(static) \
    if (n >= GPC_PARALLEL_MIN_ROWS)
    for (size_t i = 0; i < n; i++) {
        const double *Ki = K->data + i * K->tda;
        double *Li = L->data + i * L->tda;
        double si = s[i];
#pragma omp simd
        for (size_t j = 0; j <= i; j++)
            Li[j] = si * Ki[j] * s[j];
        Li[i] += e ? e[i] : 1.0;
    }
}

/* Below GPC_PARALLEL_MIN_ROWS the inverse is formed from the factor by
 * products and recursive solves (OpenBLAS's trmm and gemm, then LAPACK's
 * dlauum), not by dpotri: OpenBLAS's dtrtri, which dpotri calls, relies on
 * its trsm, which runs at a fraction of its product speed (15 against 40-60
 * GFlop/s at n = 100-200 with the SkylakeX kernels), so this takes about
 * half of dpotri's time there.  The smallest blocks are inverted and solved
 * by substitution. */

#define INVERSE_BLOCK 16

/* T = inverse of the lower triangular k x k block L (k <= INVERSE_BLOCK),
 * by substitution, rows of T INVERSE_BLOCK apart. */
static void small_lower_inverse(const double *L, size_t lda, size_t k, double *T)
{
    for (size_t i = 0; i < k; i++) {
        const double *Li = L + i * lda;
        double *Ti = T + i * INVERSE_BLOCK;
        for (size_t j = 0; j < i; j++) {
            double s = 0.0;
            for (size_t l = j; l < i; l++)
                s += Li[l] * T[l * INVERSE_BLOCK + j];
            Ti[j] = -s / Li[i];
        }
        Ti[i] = 1.0 / Li[i];
    }
}

/* B <- L^-1 B for the k x m block B and the k x k lower triangle L:
 * recursive, by substitution below INVERSE_BLOCK rows (a solve, not a
 * product with an inverse, which would lose digits where L is
 * ill-conditioned). */
__attribute__((target_clones("avx512f", "avx2", "default"))) static void
solve_left_lower(const double *L, size_t lda, size_t k, double *B, size_t ldb, size_t m)
{
    if (k <= INVERSE_BLOCK) {
        for (size_t i = 0; i < k; i++) {
            double *Bi = B + i * ldb, d = L[i * lda + i];
            for (size_t l = 0; l < i; l++) {
                const double *Bl = B + l * ldb;
                double c = L[i * lda + l];
#pragma omp simd
                for (size_t r = 0; r < m; r++)
                    Bi[r] -= c * Bl[r];
            }
#pragma omp simd
            for (size_t r = 0; r < m; r++)
                Bi[r] /= d;
        }
        return;
    }
    size_t k1 = k / 2, k2 = k - k1;
    solve_left_lower(L, lda, k1, B, ldb, m);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)k2, (int)m, (int)k1, -1.0,
                L + k1 * lda, (int)lda, B, (int)ldb, 1.0, B + k1 * ldb, (int)ldb);
    solve_left_lower(L + k1 * lda + k1, lda, k2, B + k1 * ldb, ldb, m);
}

/* The lower triangle of L^-1 in place, as LAPACK's dtrtri orders it:
 * X21 = -L22^-1 (L21 X11), a product with the inverted block and a solve
 * with the other. */
static void lower_inverse_recursive(double *A, size_t lda, size_t n)
{
    if (n <= INVERSE_BLOCK) {
        double T[INVERSE_BLOCK * INVERSE_BLOCK];
        small_lower_inverse(A, lda, n, T);
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j <= i; j++)
                A[i * lda + j] = T[i * INVERSE_BLOCK + j];
        return;
    }
    size_t n1 = n / 2, n2 = n - n1;
    double *A21 = A + n1 * lda, *A22 = A21 + n1;
    lower_inverse_recursive(A, lda, n1);
    cblas_dtrmm(CblasRowMajor, CblasRight, CblasLower, CblasNoTrans, CblasNonUnit, (int)n2,
                (int)n1, -1.0, A, (int)lda, A21, (int)lda);
    solve_left_lower(A22, lda, n2, A21, lda, n1);
    lower_inverse_recursive(A22, lda, n2);
}

/* ---- Cholesky factor below GPC_PARALLEL_MIN_ROWS ------------------------
 *
 * Right-looking, in panels of PANEL columns: the panel's rows are solved
 * against its diagonal block in a transposed copy Pt (one panel column
 * contiguous per row of Pt, so the solve runs on whole vectors), then the
 * trailing lower triangle takes the panel's rank-PANEL update, eight
 * columns by four rows at a time with the eight columns in one vector.  At
 * 200 rows this takes about 0.7 of the time of LAPACK's dpotrf from
 * OpenBLAS, whose small blocks spend most of their time in its trsm
 * (make bench's bench-blas), and it writes the lower triangle in place, with
 * no copy between triangles.  The vectors may run past the diagonal into
 * the upper triangle: it is scratch, never read. */

#define PANEL 8
/* Pt's row length: GPC_PARALLEL_MIN_ROWS and some, so that its rows are not
 * a multiple of 4096 bytes apart (which made the transposed copies collide
 * in the cache and took a fifth of the time). */
#define PANEL_LD (GPC_PARALLEL_MIN_ROWS + 8)

typedef double vec8 __attribute__((vector_size(8 * sizeof(double)), aligned(sizeof(double))));

/* Unaligned moves of eight numbers (vectors passed by address: a vector
 * argument's calling convention would depend on the clone's target). */
static inline __attribute__((always_inline)) void load8(vec8 *v, const double *p)
{
    memcpy(v, p, sizeof *v);
}

static inline __attribute__((always_inline)) void store8(double *p, const vec8 *v)
{
    memcpy(p, v, sizeof *v);
}

/* The kb x kb diagonal block at (k0, k0) factored in place (its panel
 * columns already updated); inv gets the reciprocals of its diagonal.
 * Returns 0, or the 1-based row where B is not positive definite. */
static inline __attribute__((always_inline)) size_t
factor_diagonal_block(double *A, size_t ld, size_t k0, size_t kb, double *inv)
{
    for (size_t c = 0; c < kb; c++) {
        double *Ac = A + (k0 + c) * ld + k0;
        for (size_t q = 0; q < c; q++) {
            const double *Aq = A + (k0 + q) * ld + k0;
            double t = Ac[q];
            for (size_t r = 0; r < q; r++)
                t -= Ac[r] * Aq[r];
            Ac[q] = t * inv[q];
        }
        double d = Ac[c];
        for (size_t r = 0; r < c; r++)
            d -= Ac[r] * Ac[r];
        if (!(d > 0.0))
            return k0 + c + 1;
        Ac[c] = sqrt(d);
        inv[c] = 1.0 / Ac[c];
    }
    return 0;
}

/* Rows r0 .. r0 + m - 1 of the panel at column k0 solved against the
 * factored diagonal block: L_panel = A_panel L_kk^-T, in Pt and in A. */
static inline __attribute__((always_inline)) void
solve_panel(double *A, size_t ld, size_t k0, size_t r0, size_t m, const double *inv,
            double (*Pt)[PANEL_LD])
{
    for (size_t i = 0; i < m; i++)
        for (size_t c = 0; c < PANEL; c++)
            Pt[c][i] = A[(r0 + i) * ld + k0 + c];
    for (size_t c = 0; c < PANEL; c++) {
        const double *Dc = A + (k0 + c) * ld + k0;
        for (size_t q = 0; q < c; q++) {
            double dq = Dc[q];
#pragma omp simd
            for (size_t i = 0; i < m; i++)
                Pt[c][i] -= dq * Pt[q][i];
        }
#pragma omp simd
        for (size_t i = 0; i < m; i++)
            Pt[c][i] *= inv[c];
    }
    for (size_t i = 0; i < m; i++)
        for (size_t c = 0; c < PANEL; c++)
            A[(r0 + i) * ld + k0 + c] = Pt[c][i];
}

/* Columns j0 .. i of row i of the trailing triangle (row i counted from r0)
 * minus the panel's contribution, one number at a time. */
static inline __attribute__((always_inline)) void
update_row_tail(double *A, size_t ld, size_t k0, size_t r0, size_t i, size_t j0,
                double (*Pt)[PANEL_LD])
{
    double *Ai = A + (r0 + i) * ld + r0;
    const double *li = A + (r0 + i) * ld + k0;
    for (size_t j = j0; j <= i; j++) {
        double t = Ai[j];
        for (size_t c = 0; c < PANEL; c++)
            t -= li[c] * Pt[c][j];
        Ai[j] = t;
    }
}

/* The trailing triangle (rows and columns r0 .. r0 + m - 1) minus the
 * panel's rank-PANEL product with itself. */
static inline __attribute__((always_inline)) void
update_trailing(double *A, size_t ld, size_t k0, size_t r0, size_t m, double (*Pt)[PANEL_LD])
{
    size_t i = 0;
    for (; i + 4 <= m; i += 4) {
        double *A0 = A + (r0 + i) * ld + r0, *A1 = A0 + ld, *A2 = A1 + ld, *A3 = A2 + ld;
        const double *l0 = A0 - r0 + k0, *l1 = l0 + ld, *l2 = l1 + ld, *l3 = l2 + ld;
        size_t j = 0;
        for (; j <= i + 3 && j + 8 <= m; j += 8) {
            vec8 a0, a1, a2, a3, p;
            load8(&a0, A0 + j);
            load8(&a1, A1 + j);
            load8(&a2, A2 + j);
            load8(&a3, A3 + j);
            for (size_t c = 0; c < PANEL; c++) {
                load8(&p, &Pt[c][j]);
                a0 -= l0[c] * p;
                a1 -= l1[c] * p;
                a2 -= l2[c] * p;
                a3 -= l3[c] * p;
            }
            store8(A0 + j, &a0);
            store8(A1 + j, &a1);
            store8(A2 + j, &a2);
            store8(A3 + j, &a3);
        }
        for (size_t r = 0; r < 4; r++)
            update_row_tail(A, ld, k0, r0, i + r, j, Pt);
    }
    for (; i < m; i++) {
        double *Ai = A + (r0 + i) * ld + r0;
        const double *li = Ai - r0 + k0;
        size_t j = 0;
        for (; j <= i && j + 8 <= m; j += 8) {
            vec8 a, p;
            load8(&a, Ai + j);
            for (size_t c = 0; c < PANEL; c++) {
                load8(&p, &Pt[c][j]);
                a -= li[c] * p;
            }
            store8(Ai + j, &a);
        }
        update_row_tail(A, ld, k0, r0, i, j, Pt);
    }
}

/* The lower Cholesky factor of the n x n lower triangle of A (rows ld
 * apart, n < GPC_PARALLEL_MIN_ROWS) in place.  Returns 0, or the 1-based
 * row where A is not positive definite, as dpotrf does.  Contracted
 * multiply-adds: the update is one fused step per product. */
__attribute__((target_clones("avx512f", "avx2", "default"), optimize("fp-contract=fast")))
static size_t cholesky_lower(double *A, size_t ld, size_t n)
{
    double Pt[PANEL][PANEL_LD] __attribute__((aligned(64)));
    for (size_t k0 = 0; k0 < n; k0 += PANEL) {
        size_t kb = n - k0 < PANEL ? n - k0 : PANEL, r0 = k0 + kb;
        double inv[PANEL];
        size_t bad = factor_diagonal_block(A, ld, k0, kb, inv);
        if (bad)
            return bad;
        if (r0 == n)
            break; /* kb < PANEL only here */
        solve_panel(A, ld, k0, r0, n - r0, inv, Pt);
        update_trailing(A, ld, k0, r0, n - r0, Pt);
    }
    return 0;
}

/* Below GPC_PARALLEL_MIN_ROWS, where OpenBLAS runs on one thread, by
 * cholesky_lower; above, on several threads, by LAPACK's dpotrf, whose
 * upper variant (row-major lower) is the faster there. */
int gpc_bmatrix_factor(const gsl_matrix *K, const double *s, gsl_matrix *L)
{
    int nn = (int)K->size1, lda = (int)L->tda, info;
    assemble(K, s, NULL, L);
    if (K->size1 < GPC_PARALLEL_MIN_ROWS)
        return (int)cholesky_lower(L->data, L->tda, K->size1);
    dpotrf_("U", &nn, L->data, &lda, &info, 1);
    return info;
}

double gpc_bmatrix_half_log_det(const gsl_matrix *L)
{
    double h = 0.0;
    for (size_t i = 0; i < L->size1; i++)
        h += log(gsl_matrix_get(L, i, i));
    return h;
}

/* B^-1 = L^-T L^-1 = X' X: X in place, then LAPACK's dlauum forms X' X
 * (row-major lower is column-major upper, where dlauum forms U U').  On
 * several threads (from GPC_PARALLEL_MIN_ROWS) LAPACK's dpotri is as fast
 * or faster, and is used. */
void gpc_bmatrix_inverse(gsl_matrix *L)
{
    int nn = (int)L->size1, ld = (int)L->tda, info;
    if (L->size1 >= GPC_PARALLEL_MIN_ROWS) {
        dpotri_("U", &nn, L->data, &ld, &info, 1);
        return;
    }
    lower_inverse_recursive(L->data, L->tda, L->size1);
    dlauum_("U", &nn, L->data, &ld, &info, 1);
}

void gpc_bmatrix_scale(gsl_matrix *L, const double *s)
{
    size_t n = L->size1;
#pragma omp parallel for num_threads(gpc_parallel_threads()) schedule(static) \
    if (n >= GPC_PARALLEL_MIN_ROWS)
    for (size_t i = 0; i < n; i++) {
        double *Li = L->data + i * L->tda;
        for (size_t j = 0; j <= i; j++)
            Li[j] *= s[i] * s[j];
    }
}

gpc_bmatrix_pivots *gpc_bmatrix_pivots_alloc(size_t n)
{
    gpc_bmatrix_pivots *p = gpc_malloc(sizeof *p);
    int nn = (int)n, lda = nn > 1 ? nn : 1, query = -1, info, ipiv = 0;
    double best = 0.0, dummy = 0.0;
    dsytrf_("U", &nn, &dummy, &lda, &ipiv, &best, &query, &info, 1);
    p->n = n;
    p->lwork = best > (double)n ? (int)best : (int)n + 1;
    p->ipiv = gpc_malloc((n + 1) * sizeof *p->ipiv);
    p->work = gpc_malloc((size_t)p->lwork * sizeof *p->work);
    return p;
}

void gpc_bmatrix_pivots_free(gpc_bmatrix_pivots *p)
{
    if (!p)
        return;
    free(p->ipiv);
    free(p->work);
    free(p);
}

int gpc_bmatrix_factor_signed(const gsl_matrix *K, const double *d, const double *e,
                              gsl_matrix *A, gpc_bmatrix_pivots *p)
{
    assemble(K, d, e, A);
    int nn = (int)K->size1, lda = (int)A->tda, info;
    dsytrf_("U", &nn, A->data, &lda, p->ipiv, p->work, &p->lwork, &info, 1);
    return info;
}

/* A pivot k < 0 in an upper (column-major) factor starts a 2 x 2 block of D
 * in rows k, k+1, whose off-diagonal element is row-major (k+1, k). */
double gpc_bmatrix_half_log_det_signed(const gsl_matrix *A, const gpc_bmatrix_pivots *p)
{
    double h = 0.0;
    for (size_t k = 0; k < A->size1; k++) {
        double a = gsl_matrix_get(A, k, k);
        if (p->ipiv[k] > 0) {
            h += log(fabs(a));
        } else {
            double b = gsl_matrix_get(A, k + 1, k), c = gsl_matrix_get(A, k + 1, k + 1);
            h += log(fabs(a * c - b * b));
            k++;
        }
    }
    return 0.5 * h;
}

/* Sylvester's law of inertia: A = U D U' has the inertia of the block
 * diagonal D; a 2 x 2 block has one eigenvalue of each sign when its
 * determinant is negative, else two of its diagonal's sign. */
size_t gpc_bmatrix_negative_eigenvalues_signed(const gsl_matrix *A, const gpc_bmatrix_pivots *p)
{
    size_t neg = 0;
    for (size_t k = 0; k < A->size1; k++) {
        double a = gsl_matrix_get(A, k, k);
        if (p->ipiv[k] > 0) {
            neg += a < 0.0;
        } else {
            double b = gsl_matrix_get(A, k + 1, k), c = gsl_matrix_get(A, k + 1, k + 1);
            neg += a * c - b * b < 0.0 ? 1 : (a < 0.0 ? 2 : 0);
            k++;
        }
    }
    return neg;
}

void gpc_bmatrix_solve_signed(const gsl_matrix *A, const gpc_bmatrix_pivots *p, double *B,
                              size_t nrhs, size_t ld)
{
    int nn = (int)A->size1, lda = (int)A->tda, nr = (int)nrhs, ldb = (int)ld, info;
    dsytrs_("U", &nn, &nr, A->data, &lda, p->ipiv, B, &ldb, &info, 1);
}

void gpc_bmatrix_inverse_signed(gsl_matrix *A, const gpc_bmatrix_pivots *p)
{
    int nn = (int)A->size1, lda = (int)A->tda, info;
    dsytri_("U", &nn, A->data, &lda, p->ipiv, p->work, &info, 1);
}
