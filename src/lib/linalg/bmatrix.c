#include "linalg/bmatrix.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/parallel.h"

/* LAPACK through OpenBLAS.  Row-major lower is column-major upper, hence "U". */
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info,
             size_t uplo_len);
void dpotri_(const char *uplo, const int *n, double *a, const int *lda, int *info,
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

/* ---- Cholesky factor below GPC_PARALLEL_MIN_ROWS ------------------------
 *
 * Right-looking, in panels of PANEL columns: the panel's rows are solved
 * against its diagonal block in a transposed copy Pt (one panel column
 * contiguous per row of Pt, so the solve runs on whole vectors), then the
 * trailing lower triangle takes the panel's rank-PANEL update, eight
 * columns by four rows at a time with the eight columns in one vector.  At
 * 200 rows this takes 0.6 of the time of LAPACK's dpotrf from OpenBLAS (the
 * faster, column-major lower variant), whose small blocks spend most of
 * their time in its trsm (make bench's bench-blas), and it writes the lower
 * triangle in place, with no copy between triangles.  The vectors may run
 * past the diagonal into the upper triangle: it is scratch, never read. */

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
        if (d <= 0.0) /* as dpotrf: NaN (an overflowed kernel) goes on, for the
                       * callers' checks of a finite log determinant to name */
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

/* Row i's columns j0 .. i of rank_panel_update, one number at a time. */
static inline __attribute__((always_inline)) void
update_row_tail(double *Ci, const double *Mi, size_t mc, size_t j0, size_t i, double sign,
                double (*Pt)[PANEL_LD])
{
    for (size_t j = j0; j <= i; j++) {
        double t = Ci[j];
        for (size_t c = 0; c < PANEL; c++)
            t -= sign * Mi[c * mc] * Pt[c][j];
        Ci[j] = t;
    }
}

/* The rank-PANEL update of a lower triangle shared by the factor and the
 * inverse: C_ij -= sign sum_c M_ic Pt[c][j] for 0 <= j <= i, i0 <= i < m,
 * with C's rows ld apart and M_ic = M[i ms + c mc].  Eight columns by four
 * rows at a time, the eight in one vector; whole vectors may pass the
 * diagonal into the upper triangle (scratch), never column m.  sign is a
 * constant at every call, so the product by it folds away. */
static inline __attribute__((always_inline)) void
rank_panel_update(double *C, size_t ld, size_t i0, size_t m, const double *M, size_t ms,
                  size_t mc, double sign, double (*Pt)[PANEL_LD])
{
    size_t i = i0;
    for (; i + 4 <= m; i += 4) {
        double *C0 = C + i * ld, *C1 = C0 + ld, *C2 = C1 + ld, *C3 = C2 + ld;
        const double *M0 = M + i * ms, *M1 = M0 + ms, *M2 = M1 + ms, *M3 = M2 + ms;
        size_t j = 0;
        for (; j <= i + 3 && j + 8 <= m; j += 8) {
            vec8 a0, a1, a2, a3, p;
            load8(&a0, C0 + j);
            load8(&a1, C1 + j);
            load8(&a2, C2 + j);
            load8(&a3, C3 + j);
            for (size_t c = 0; c < PANEL; c++) {
                load8(&p, &Pt[c][j]);
                a0 -= sign * M0[c * mc] * p;
                a1 -= sign * M1[c * mc] * p;
                a2 -= sign * M2[c * mc] * p;
                a3 -= sign * M3[c * mc] * p;
            }
            store8(C0 + j, &a0);
            store8(C1 + j, &a1);
            store8(C2 + j, &a2);
            store8(C3 + j, &a3);
        }
        for (size_t r = 0; r < 4; r++)
            update_row_tail(C + (i + r) * ld, M + (i + r) * ms, mc, j, i + r, sign, Pt);
    }
    for (; i < m; i++) {
        double *Ci = C + i * ld;
        const double *Mi = M + i * ms;
        size_t j = 0;
        for (; j <= i && j + 8 <= m; j += 8) {
            vec8 a, p;
            load8(&a, Ci + j);
            for (size_t c = 0; c < PANEL; c++) {
                load8(&p, &Pt[c][j]);
                a -= sign * Mi[c * mc] * p;
            }
            store8(Ci + j, &a);
        }
        update_row_tail(Ci, Mi, mc, j, i, sign, Pt);
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
        /* the trailing triangle minus L_panel L_panel' */
        rank_panel_update(A + r0 * ld + r0, ld, 0, n - r0, A + r0 * ld + k0, ld, 1, 1.0, Pt);
    }
    return 0;
}

/* ---- Inverse from the factor below GPC_PARALLEL_MIN_ROWS -----------------
 *
 * B^-1 = X' X with X = L^-1, both formed in place in panels of PANEL rows,
 * X' X with the factor's update kernel.  At 200 rows the factor and the
 * inverse together take 0.4 of the time of LAPACK's dpotrf and dpotri from
 * OpenBLAS (bench-blas), whose inverse relies on its slow trsm. */

/* X = L^-1 in place, PANEL rows at a time: with Y = L_21 X_11 (the panel's
 * rows left of its diagonal block times the rows of X already formed), the
 * panel's rows of X are X_21 = -L_22^-1 Y, solved by substitution (not a
 * product with the block's inverse, which loses digits where L is
 * ill-conditioned), and X_22 = L_22^-1.  The diagonal blocks' upper
 * triangles are set to zero, so that Y's whole vectors of eight read zeros
 * there. */
__attribute__((target_clones("avx512f", "avx2", "default"), optimize("fp-contract=fast")))
static void lower_inverse(double *A, size_t ld, size_t n)
{
    double Y[PANEL][PANEL_LD] __attribute__((aligned(64)));
    double Lpad[PANEL][PANEL_LD] __attribute__((aligned(64)));
    for (size_t i0 = 0; i0 < n; i0 += PANEL) {
        size_t kb = n - i0 < PANEL ? n - i0 : PANEL;
        /* Y = L_21 X_11, eight columns at a time (i0 is a multiple of
         * eight); a short last panel is padded with rows of zeros */
        const double *L0 = A + i0 * ld;
        size_t l_ld = ld;
        if (kb < PANEL) {
            for (size_t r = 0; r < PANEL; r++)
                for (size_t k = 0; k < i0; k++)
                    Lpad[r][k] = r < kb ? L0[r * ld + k] : 0.0;
            L0 = &Lpad[0][0];
            l_ld = PANEL_LD;
        }
        for (size_t j = 0; j < i0; j += 8) {
            vec8 y0 = {0}, y1 = {0}, y2 = {0}, y3 = {0}, y4 = {0}, y5 = {0}, y6 = {0}, y7 = {0}, x;
            for (size_t k = j; k < i0; k++) {
                load8(&x, A + k * ld + j);
                y0 += L0[k] * x;
                y1 += L0[l_ld + k] * x;
                y2 += L0[2 * l_ld + k] * x;
                y3 += L0[3 * l_ld + k] * x;
                y4 += L0[4 * l_ld + k] * x;
                y5 += L0[5 * l_ld + k] * x;
                y6 += L0[6 * l_ld + k] * x;
                y7 += L0[7 * l_ld + k] * x;
            }
            store8(&Y[0][j], &y0);
            store8(&Y[1][j], &y1);
            store8(&Y[2][j], &y2);
            store8(&Y[3][j], &y3);
            store8(&Y[4][j], &y4);
            store8(&Y[5][j], &y5);
            store8(&Y[6][j], &y6);
            store8(&Y[7][j], &y7);
        }
        /* X_21 = -L_22^-1 Y and X_22 = L_22^-1, row by row */
        for (size_t r = 0; r < kb; r++) {
            double *Xr = A + (i0 + r) * ld, d = Xr[i0 + r];
            for (size_t q = 0; q < r; q++) {
                const double *Xq = A + (i0 + q) * ld;
                double lq = Xr[i0 + q];
#pragma omp simd
                for (size_t j = 0; j < i0; j++)
                    Y[r][j] += lq * Xq[j];
            }
#pragma omp simd
            for (size_t j = 0; j < i0; j++)
                Xr[j] = -Y[r][j] / d;
            /* the block's row r: X_rq = -sum_{q <= t < r} L_rt X_tq / L_rr */
            double xb[PANEL];
            for (size_t q = 0; q < r; q++) {
                double t = 0.0;
                for (size_t u = q; u < r; u++)
                    t += Xr[i0 + u] * A[(i0 + u) * ld + i0 + q];
                xb[q] = -t / d;
            }
            for (size_t q = 0; q < r; q++)
                Xr[i0 + q] = xb[q];
            Xr[i0 + r] = 1.0 / d;
            for (size_t q = r + 1; q < PANEL && i0 + q < n; q++)
                Xr[i0 + q] = 0.0;
        }
    }
}

/* R = X' X in place for the lower triangular X (lower triangles), PANEL
 * rows of X at a time: R_ij = sum_{k >= i} X_ki X_kj, so the panel's rows
 * (copied to Pt, zero right of the diagonal) add their rank-PANEL product
 * to the rows above them and start their own rows. */
__attribute__((target_clones("avx512f", "avx2", "default"), optimize("fp-contract=fast")))
static void lower_gram(double *A, size_t ld, size_t n)
{
    double Pt[PANEL][PANEL_LD] __attribute__((aligned(64)));
    for (size_t k0 = 0; k0 < n; k0 += PANEL) {
        size_t w = n - k0 < PANEL ? n : k0 + PANEL;
        for (size_t c = 0; c < PANEL; c++)
            for (size_t j = 0; j < w; j++)
                Pt[c][j] = k0 + c < n && j <= k0 + c ? A[(k0 + c) * ld + j] : 0.0;
        rank_panel_update(A, ld, 0, k0, &Pt[0][0], 1, PANEL_LD, -1.0, Pt);
        for (size_t i = k0; i < w; i++)
            for (size_t j = 0; j <= i; j++)
                A[i * ld + j] = 0.0;
        rank_panel_update(A, ld, k0, w, &Pt[0][0], 1, PANEL_LD, -1.0, Pt);
    }
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

/* B^-1 = L^-T L^-1: by lower_inverse and lower_gram below
 * GPC_PARALLEL_MIN_ROWS, by LAPACK's dpotri on several threads above. */
void gpc_bmatrix_inverse(gsl_matrix *L)
{
    int nn = (int)L->size1, ld = (int)L->tda, info;
    if (L->size1 >= GPC_PARALLEL_MIN_ROWS) {
        dpotri_("U", &nn, L->data, &ld, &info, 1);
        return;
    }
    lower_inverse(L->data, L->tda, L->size1);
    lower_gram(L->data, L->tda, L->size1);
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
