#include "kernels/kernel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_math.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/parallel.h"
#include "kernels/kernel-impl.h"
#include "linalg/vmath.h"

static const double *row(const gsl_matrix *X, size_t i) { return X->data + i * X->tda; }

/* The O(n^2) loops below run their rows in parallel.  Every entry is computed
 * by one thread from the same operands, so results do not depend on the
 * number of threads. */
#define ROW_CHUNK 256

/* Whether a term's rows go by its transposed columns: ard, Matern and rq
 * terms without discrete columns. */
static int by_columns(const term *t)
{
    return (t->type == T_ARD || t->type == T_MATERN || t->type == T_RQ) && !t->disc;
}

/* The columns such a term reads, transposed (ncols x n), so that a row of
 * its matrix runs along contiguous memory; NULL for other terms. */
static double *ard_columns(const term *t, const gsl_matrix *X)
{
    if (!by_columns(t))
        return NULL;
    size_t n = X->size1;
    double *xt = gpc_mallocarray(t->ncols * n, sizeof *xt);
    for (size_t j = 0; j < n; j++)
        for (size_t l = 0; l < t->ncols; l++)
            xt[l * n + j] = row(X, j)[t->cols[l]];
    return xt;
}

/* out[j] += the ARD term's value between the point whose term columns are xi
 * and point j < count of a set whose term columns are transposed in xt
 * (ncols rows, stride apart): the exponents of a chunk first, eight at a
 * time summed over the columns in a register (the same sums, in the same
 * order, as one column at a time over the chunk, which stored and reloaded
 * them at every column), then their exps at once. */
typedef double vec8d __attribute__((vector_size(8 * sizeof(double)), aligned(sizeof(double))));

__attribute__((target_clones("avx512f", "avx2", "default"))) static void
add_ard_values(const gpc_kernel *k, const term *t, const double *xi, const double *xt,
               size_t stride, size_t count, double *out)
{
    const double *eth = k->etheta + t->offset;
    double e[ROW_CHUNK];
    for (size_t j0 = 0; j0 < count; j0 += ROW_CHUNK) {
        size_t m = count - j0 < ROW_CHUNK ? count - j0 : ROW_CHUNK;
        size_t j = 0;
        for (; j + 8 <= m; j += 8) { /* eight exponents summed in a register */
            vec8d q = {0};
            for (size_t l = 0; l < t->ncols; l++) {
                vec8d d;
                memcpy(&d, xt + l * stride + j0 + j, sizeof d);
                d = xi[l] - d;
                q += eth[1 + l] * d * d;
            }
            q *= -0.5;
            memcpy(e + j, &q, sizeof q);
        }
        for (; j < m; j++) {
            double q = 0.0;
            for (size_t l = 0; l < t->ncols; l++) {
                double d = xi[l] - xt[l * stride + j0 + j];
                q += eth[1 + l] * d * d;
            }
            e[j] = q * -0.5;
        }
        gpc_exp_array(e, m);
        for (j = 0; j < m; j++)
            out[j0 + j] += eth[0] * e[j];
    }
}

/* out[j] += a Matern or rq term's value, as add_ard_values does for ard:
 * the distances q of a chunk summed eight at a time, then the term's
 * profile over the chunk (Matern: one sqrt and one exp per pair). */
__attribute__((target_clones("avx512f", "avx2", "default"))) static void
add_dist_values(const gpc_kernel *k, const term *t, const double *xi, const double *xt,
                size_t stride, size_t count, double *out)
{
    const double *eth = k->etheta + t->offset;
    double q[ROW_CHUNK], e[ROW_CHUNK];
    for (size_t j0 = 0; j0 < count; j0 += ROW_CHUNK) {
        size_t m = count - j0 < ROW_CHUNK ? count - j0 : ROW_CHUNK;
        size_t j = 0;
        for (; j + 8 <= m; j += 8) {
            vec8d acc = {0};
            for (size_t l = 0; l < t->ncols; l++) {
                vec8d d;
                memcpy(&d, xt + l * stride + j0 + j, sizeof d);
                d = xi[l] - d;
                acc += eth[t->iso ? 1 : 1 + l] * d * d;
            }
            memcpy(q + j, &acc, sizeof acc);
        }
        for (; j < m; j++) {
            double acc = 0.0;
            for (size_t l = 0; l < t->ncols; l++) {
                double d = xi[l] - xt[l * stride + j0 + j];
                acc += eth[t->iso ? 1 : 1 + l] * d * d;
            }
            q[j] = acc;
        }
        if (t->type == T_RQ) {
            for (j = 0; j < m; j++)
                out[j0 + j] += gpc_distance_profile(t, eth, q[j], NULL, NULL);
            continue;
        }
        double c = t->nu2 == 1 ? 1.0 : sqrt((double)t->nu2);
        for (j = 0; j < m; j++) {
            q[j] = sqrt(q[j]) * c; /* s = sqrt(2 nu) r */
            e[j] = -q[j];
        }
        gpc_exp_array(e, m);
        for (j = 0; j < m; j++) {
            double sj = q[j];
            double f = t->nu2 == 1 ? 1.0 : t->nu2 == 3 ? 1.0 + sj : 1.0 + sj + sj * sj / 3.0;
            out[j0 + j] += eth[0] * f * e[j];
        }
    }
}

/* A case's columns of one ARD term: on the stack up to ROW_ON_STACK of
 * them, else on the heap (a term may weigh up to GPC_KERNEL_MAX_DIM
 * columns, far more than a thread's stack holds). */
#define ROW_ON_STACK 128
static double *row_buffer(const term *t, double *stack)
{
    return t->ncols <= ROW_ON_STACK ? stack : gpc_mallocarray(t->ncols, sizeof *stack);
}

/* out[j] += the term's value between the point whose term columns are xi
 * and the count points of xt, for a term by_columns takes. */
static void add_column_values(const gpc_kernel *k, const term *t, const double *xi,
                              const double *xt, size_t stride, size_t count, double *out)
{
    if (t->type == T_ARD)
        add_ard_values(k, t, xi, xt, stride, count, out);
    else
        add_dist_values(k, t, xi, xt, stride, count, out);
}

/* Row i of a term by_columns takes from its transposed columns xt (n
 * points). */
static void add_ard_row(const gpc_kernel *k, const term *t, const double *xt, size_t n, size_t i,
                        double *Ki)
{
    double stack[ROW_ON_STACK] = {0}, *xi = row_buffer(t, stack);
    for (size_t l = 0; l < t->ncols; l++)
        xi[l] = xt[l * n + i];
    add_column_values(k, t, xi, xt, n, i + 1, Ki);
    if (xi != stack)
        free(xi);
}

/* Add one term's values k(x_i, x_j), j <= i, to Ki[0..i], for the terms
 * add_ard_row does not take: an ARD term with discrete columns has its own
 * loop without a call per pair. */
static void add_term_row(const gpc_kernel *k, const term *t, const gsl_matrix *X, size_t i,
                         double *Ki)
{
    const double *eth = k->etheta + t->offset, *xi = row(X, i);
    if (t->type != T_ARD) {
        for (size_t j = 0; j <= i; j++)
            Ki[j] += gpc_term_pair(t, eth, xi, row(X, j), j, i == j, NULL);
        return;
    }
    const unsigned char *disc = t->disc; /* the other ARD terms go by add_ard_row */
    for (size_t j = 0; j <= i; j++) {
        const double *xj = row(X, j);
        double q = 0.0;
        for (size_t l = 0; l < t->ncols; l++) {
            double a = xi[t->cols[l]], b = xj[t->cols[l]], d = a - b;
            q += disc[l] ? (a != b ? eth[1 + l] : 0.0) : eth[1 + l] * d * d;
        }
        Ki[j] += eth[0] * exp(-0.5 * q);
    }
}

/* The strict lower triangle of the n x n matrix S (rows ld apart) copied to
 * the upper, in tiles so that the strided side stays in cache. */
#define MIRROR_TILE 32
static void mirror_lower(double *S, size_t n, size_t ld)
{
    size_t tiles = (n + MIRROR_TILE - 1) / MIRROR_TILE;
#pragma omp parallel for num_threads(gpc_parallel_threads()) schedule(dynamic, 1) \
    if (n >= GPC_PARALLEL_MIN_ROWS)
    for (size_t ta = 0; ta < tiles; ta++)
        for (size_t b0 = ta * MIRROR_TILE; b0 < n; b0 += MIRROR_TILE)
            for (size_t a = ta * MIRROR_TILE; a < (ta + 1) * MIRROR_TILE && a < n; a++)
                for (size_t b = b0 > a + 1 ? b0 : a + 1; b < b0 + MIRROR_TILE && b < n; b++)
                    S[a * ld + b] = S[b * ld + a];
}

/* Row i of one term, k_t(x_i, x_j) for j <= i, added to Ki[0..i]. */
static void add_row(const gpc_kernel *k, const term *t, const double *xt, const gsl_matrix *X,
                    size_t i, double *Ki)
{
    if (xt)
        add_ard_row(k, t, xt, X->size1, i, Ki);
    else
        add_term_row(k, t, X, i, Ki);
}

/* Combine the terms' values Lt[t * width + j] (j < count) by the kernel's
 * tree into out[j]. */
static void combine_terms(const gpc_kernel *k, const double *Lt, size_t width, size_t count,
                          double *out)
{
    double tv[GPC_KERNEL_MAX_TERMS], val[GPC_KERNEL_MAX_NODES];
    for (size_t j = 0; j < count; j++) {
        for (size_t t = 0; t < k->nterms; t++)
            tv[t] = Lt[t * width + j];
        out[j] = gpc_kernel_tree_value(k, tv, val);
    }
}

void gpc_kernel_matrix(const gpc_kernel *k, const gsl_matrix *X, gsl_matrix *K)
{
    size_t n = X->size1;
    double *xt[GPC_KERNEL_MAX_TERMS];
    for (size_t t = 0; t < k->nterms; t++)
        xt[t] = ard_columns(&k->terms[t], X);
#pragma omp parallel for num_threads(gpc_parallel_threads()) schedule(dynamic, 16) \
    if (n >= GPC_PARALLEL_MIN_ROWS)
    for (size_t i = 0; i < n; i++) {
        double *Ki = K->data + i * K->tda;
        if (k->tree) { /* each term's row apart, then combined */
            double *Lt = gpc_calloc(k->nterms * (i + 1), sizeof *Lt);
            for (size_t t = 0; t < k->nterms; t++)
                add_row(k, &k->terms[t], xt[t], X, i, Lt + t * (i + 1));
            combine_terms(k, Lt, i + 1, i + 1, Ki);
            free(Lt);
            continue;
        }
        for (size_t j = 0; j <= i; j++)
            Ki[j] = 0.0;
        for (size_t t = 0; t < k->nterms; t++)
            add_row(k, &k->terms[t], xt[t], X, i, Ki);
    }
    mirror_lower(K->data, n, K->tda);
    for (size_t t = 0; t < k->nterms; t++)
        free(xt[t]);
}

/* Training case i against every test case for one term, added to out[0..m):
 * terms by_columns takes from the test inputs' columns transposed in xt. */
static void cross_term_row(const gpc_kernel *k, const term *t, const gsl_matrix *X,
                           const gsl_matrix *Xs, const double *xt, size_t i, double *out)
{
    size_t m = Xs->size1;
    if (xt) {
        double stack[ROW_ON_STACK] = {0}, *xi = row_buffer(t, stack);
        for (size_t l = 0; l < t->ncols; l++)
            xi[l] = row(X, i)[t->cols[l]];
        add_column_values(k, t, xi, xt, m, m, out);
        if (xi != stack)
            free(xi);
        return;
    }
    for (size_t j = 0; j < m; j++)
        out[j] += gpc_term_pair(t, k->etheta + t->offset, row(Xs, j), row(X, i), i, 0, NULL);
}

/* Row i, training case i against every test case: the terms in the kernel's
 * order, as gpc_kernel_pair adds them, or combined by its tree. */
static void cross_row(const gpc_kernel *k, const gsl_matrix *X, const gsl_matrix *Xs,
                      double *const *xt, size_t i, double *Ki)
{
    size_t m = Xs->size1;
    if (k->tree) {
        double *Lt = gpc_calloc(k->nterms * (m ? m : 1), sizeof *Lt);
        for (size_t t = 0; t < k->nterms; t++)
            cross_term_row(k, &k->terms[t], X, Xs, xt[t], i, Lt + t * m);
        combine_terms(k, Lt, m, m, Ki);
        free(Lt);
        return;
    }
    for (size_t j = 0; j < m; j++)
        Ki[j] = 0.0;
    for (size_t ti = 0; ti < k->nterms; ti++)
        cross_term_row(k, &k->terms[ti], X, Xs, xt[ti], i, Ki);
}

void gpc_kernel_cross(const gpc_kernel *k, const gsl_matrix *X, const gsl_matrix *Xs,
                      gsl_matrix *Ks)
{
    double *xt[GPC_KERNEL_MAX_TERMS];
    for (size_t t = 0; t < k->nterms; t++)
        xt[t] = ard_columns(&k->terms[t], Xs);
#pragma omp parallel for num_threads(gpc_parallel_threads()) schedule(static) \
    if (X->size1 >= GPC_PARALLEL_MIN_ROWS)
    for (size_t i = 0; i < X->size1; i++)
        cross_row(k, X, Xs, xt, i, Ks->data + i * Ks->tda);
    for (size_t t = 0; t < k->nterms; t++)
        free(xt[t]);
}

void gpc_kernel_diag(const gpc_kernel *k, const gsl_matrix *Xs, gsl_vector *d)
{
    for (size_t i = 0; i < Xs->size1; i++)
        gsl_vector_set(d, i, gpc_kernel_pair(k, row(Xs, i), row(Xs, i), GRAM_SELF, 1));
}

void gpc_kernel_grad_matrix(const gpc_kernel *k, const gsl_matrix *X, size_t j, gsl_matrix *dK)
{
    double *g = gpc_malloc(k->nparams * sizeof *g);
    for (size_t a = 0; a < X->size1; a++)
        for (size_t b = 0; b <= a; b++) {
            gpc_kernel_pair_grad(k, row(X, a), row(X, b), b, a == b, g);
            gsl_matrix_set(dK, a, b, g[j]);
            gsl_matrix_set(dK, b, a, g[j]);
        }
    free(g);
}

/* Rows are split into a fixed number of blocks, whatever the number of
 * threads; each block accumulates into its own buffers, which are then added
 * in block order, so the sums are the same on any machine. */
#define CONTRACT_BLOCKS 16

/* First row of block b of nb, balancing the triangle's a + 1 pairs per row. */
static size_t block_start(size_t n, size_t b, size_t nb)
{
    return b >= nb ? n : (size_t)(n * sqrt((double)b / nb));
}

/* The operands of a contraction, read-only and shared by all blocks. */
typedef struct {
    const gpc_kernel *k;
    const gsl_matrix *X, *R;
    const double *u, *v;
    double alpha, beta;
} contraction;

/* Row a of the contraction for one ARD term, fused: the term's value and its
 * d + 1 derivatives are formed and used pair by pair without a call per pair.
 * dK/dlog w_l = -1/2 w_l d_l k with d_l = (x_l - x'_l)^2 (or the 0/1 mismatch
 * for a discrete column), dK/dlog v0 = k. */
static void contract_row_ard(const contraction *c, const term *t, size_t a, double *s, double *B)
{
    size_t p = c->k->nparams, m = t->ncols, o = t->offset;
    const double *eth = c->k->etheta + o, *xa = row(c->X, a);
    const double *Ra = c->R->data + a * c->R->tda;
    const unsigned char *disc = t->disc;
    double hw[m], dd[m], sl[m + 1];
    for (size_t l = 0; l < m; l++)
        hw[l] = -0.5 * eth[1 + l];
    for (size_t l = 0; l <= m; l++)
        sl[l] = 0.0;
    double *Ba = B + a * p + o;
    for (size_t b = 0; b <= a; b++) {
        const double *xb = row(c->X, b);
        double q = 0.0;
        if (disc)
            for (size_t l = 0; l < m; l++) {
                double x = xa[t->cols[l]], y = xb[t->cols[l]], d = x - y;
                dd[l] = disc[l] ? (x != y ? 1.0 : 0.0) : d * d;
                q += eth[1 + l] * dd[l];
            }
        else
            for (size_t l = 0; l < m; l++) {
                double d = xa[t->cols[l]] - xb[t->cols[l]];
                dd[l] = d * d;
                q += eth[1 + l] * dd[l];
            }
        double kv = eth[0] * exp(-0.5 * q);
        double w2 = a == b ? 1.0 : 2.0; /* an off-diagonal pair stands for two */
        double mk = w2 * (c->alpha * c->u[a] * c->u[b] + c->beta * Ra[b]) * kv;
        double *Bb = B + b * p + o;
        double kvb = kv * c->v[b], kva = a == b ? 0.0 : kv * c->v[a];
        sl[0] += mk;
        Ba[0] += kvb;
        Bb[0] += kva;
        for (size_t l = 0; l < m; l++) {
            double e = hw[l] * dd[l];
            sl[1 + l] += mk * e;
            Ba[1 + l] += kvb * e;
            Bb[1 + l] += kva * e;
        }
    }
    for (size_t l = 0; l <= m; l++)
        s[o + l] += sl[l];
}

/* Row a for any other term, through the generic pair derivatives. */
static void contract_row_term(const contraction *c, const term *t, size_t a, double *g,
                              double *s, double *B)
{
    size_t p = c->k->nparams, o = t->offset, np = t->nparams;
    const double *Ra = c->R->data + a * c->R->tda;
    double *Ba = B + a * p + o;
    for (size_t b = 0; b <= a; b++) {
        gpc_term_pair(t, c->k->etheta + o, row(c->X, a), row(c->X, b), b, a == b, g);
        double w2 = a == b ? 1.0 : 2.0;
        double mm = w2 * (c->alpha * c->u[a] * c->u[b] + c->beta * Ra[b]);
        double *Bb = B + b * p + o;
        double vb = c->v[b], va = a == b ? 0.0 : c->v[a];
        for (size_t j = 0; j < np; j++) {
            s[o + j] += g[j] * mm;
            Ba[j] += g[j] * vb;
            Bb[j] += g[j] * va;
        }
    }
}

/* A chunk's values kv and dk/dq of a Matern or rq term from its distances
 * q[0..m): for Matern the exps at once (gpc_exp_array), rq pair by pair
 * with its alpha derivative into da. */
static void profile_chunk(const term *t, const double *eth, const double *q, size_t m,
                          double *kv, double *dk, double *da)
{
    if (t->type == T_RQ) {
        for (size_t j = 0; j < m; j++)
            kv[j] = gpc_distance_profile(t, eth, q[j], dk + j, da + j);
        return;
    }
    double c = t->nu2 == 1 ? 1.0 : sqrt((double)t->nu2), v0 = eth[0];
    for (size_t j = 0; j < m; j++)
        dk[j] = -c * sqrt(q[j]); /* -s, s = sqrt(2 nu) r */
    memcpy(kv, dk, m * sizeof *kv);
    gpc_exp_array(kv, m);
    for (size_t j = 0; j < m; j++) {
        double sj = -dk[j], e = kv[j];
        if (t->nu2 == 1) { /* dk/dq = -k / (2 r), and 0 at r = 0 (kernel.h) */
            kv[j] = v0 * e;
            dk[j] = sj > 0.0 ? -0.5 * kv[j] / sj : 0.0;
        } else if (t->nu2 == 3) {
            kv[j] = v0 * (1.0 + sj) * e;
            dk[j] = -1.5 * v0 * e;
        } else {
            kv[j] = v0 * (1.0 + sj + sj * sj / 3.0) * e;
            dk[j] = -(5.0 / 6.0) * v0 * (1.0 + sj) * e;
        }
    }
}

/* Row a for a Matern or rq term: the pairs (a, b), b <= a, in chunks, each
 * chunk's distances q first, then its values and dk/dq (profile_chunk),
 * then the sums: dK/dlog w_l = dk/dq w_l d_l (ARD) or dk/dq q (isotropic),
 * dK/dlog v0 = k, and rq's dK/dlog alpha. */
static void contract_row_dist(const contraction *c, const term *t, size_t a, double *s,
                              double *B)
{
    size_t p = c->k->nparams, m = t->ncols, o = t->offset, np = t->nparams;
    const double *eth = c->k->etheta + o, *xa = row(c->X, a);
    const double *Ra = c->R->data + a * c->R->tda;
    size_t nw = t->iso ? 1 : m; /* the weights */
    double q[ROW_CHUNK], kv[ROW_CHUNK], dk[ROW_CHUNK], da[ROW_CHUNK];
    /* the weights and sums on the stack up to ROW_ON_STACK columns */
    double wl_stack[ROW_ON_STACK], sl_stack[ROW_ON_STACK + 2];
    double *wl = m <= ROW_ON_STACK ? wl_stack : gpc_mallocarray(m, sizeof *wl);
    double *sl = np <= ROW_ON_STACK + 2 ? sl_stack : gpc_mallocarray(np, sizeof *sl);
    for (size_t l = 0; l < m; l++)
        wl[l] = eth[t->iso ? 1 : 1 + l];
    for (size_t j = 0; j < np; j++)
        sl[j] = 0.0;
    double *Ba = B + a * p + o;
    for (size_t b0 = 0; b0 <= a; b0 += ROW_CHUNK) {
        size_t mc = a + 1 - b0 < ROW_CHUNK ? a + 1 - b0 : ROW_CHUNK;
        for (size_t j = 0; j < mc; j++) {
            const double *xb = row(c->X, b0 + j);
            double acc = 0.0;
            for (size_t l = 0; l < m; l++)
                acc += col_dist(t, l, wl[l], xa, xb);
            q[j] = acc;
        }
        profile_chunk(t, eth, q, mc, kv, dk, da);
        for (size_t j = 0; j < mc; j++) {
            size_t b = b0 + j;
            const double *xb = row(c->X, b);
            double w2 = a == b ? 1.0 : 2.0; /* an off-diagonal pair stands for two */
            double mm = w2 * (c->alpha * c->u[a] * c->u[b] + c->beta * Ra[b]);
            double *Bb = B + b * p + o;
            double vb = c->v[b], va = a == b ? 0.0 : c->v[a];
            sl[0] += mm * kv[j];
            Ba[0] += kv[j] * vb;
            Bb[0] += kv[j] * va;
            for (size_t l = 0; l < nw; l++) {
                double e = t->iso ? dk[j] * q[j] : col_dist(t, l, dk[j] * wl[l], xa, xb);
                sl[1 + l] += mm * e;
                Ba[1 + l] += e * vb;
                Bb[1 + l] += e * va;
            }
            if (t->type == T_RQ) {
                sl[np - 1] += mm * da[j];
                Ba[np - 1] += da[j] * vb;
                Bb[np - 1] += da[j] * va;
            }
        }
    }
    for (size_t j = 0; j < np; j++)
        s[o + j] += sl[j];
    if (wl != wl_stack)
        free(wl);
    if (sl != sl_stack)
        free(sl);
}

/* Row a for a kernel with a product: every hyperparameter's derivative
 * at each pair by the product rule (gpc_kernel_pair_grad), into g. */
static void contract_row_tree(const contraction *c, size_t a, double *g, double *s, double *B)
{
    size_t p = c->k->nparams;
    const double *Ra = c->R->data + a * c->R->tda;
    double *Ba = B + a * p;
    for (size_t b = 0; b <= a; b++) {
        gpc_kernel_pair_grad(c->k, row(c->X, a), row(c->X, b), b, a == b, g);
        double w2 = a == b ? 1.0 : 2.0;
        double mm = w2 * (c->alpha * c->u[a] * c->u[b] + c->beta * Ra[b]);
        double *Bb = B + b * p;
        double vb = c->v[b], va = a == b ? 0.0 : c->v[a];
        for (size_t j = 0; j < p; j++) {
            s[j] += g[j] * mm;
            Ba[j] += g[j] * vb;
            Bb[j] += g[j] * va;
        }
    }
}

static void contract_rows(const contraction *c, size_t lo, size_t hi, double *s, double *B)
{
    double *g = gpc_malloc(c->k->nparams * sizeof *g);
    for (size_t a = lo; a < hi; a++) {
        if (c->k->tree) {
            contract_row_tree(c, a, g, s, B);
            continue;
        }
        for (size_t ti = 0; ti < c->k->nterms; ti++) {
            const term *t = &c->k->terms[ti];
            if (t->type == T_ARD)
                contract_row_ard(c, t, a, s, B);
            else if (t->type == T_MATERN || t->type == T_RQ)
                contract_row_dist(c, t, a, s, B);
            else
                contract_row_term(c, t, a, g, s, B);
        }
    }
    free(g);
}

/* Whether a term is an ard or se term without discrete columns. */
static int se_term(const term *t) { return (t->type == T_ARD || t->type == T_SE) && !t->disc; }

/* Whether node i is a product of such terms, their indices into f[*nf]. */
static int se_product(const gpc_kernel *k, size_t i, const term **f, size_t *nf)
{
    const node *nd = &k->nodes[i];
    if (nd->kind != N_PROD)
        return 0;
    for (size_t c = 0; c < nd->count; c++) {
        const node *kid = &k->nodes[k->kids[nd->first + c]];
        if (kid->kind != N_TERM || !se_term(&k->terms[kid->term]))
            return 0;
        f[(*nf)++] = &k->terms[kid->term];
    }
    return 1;
}

/* A kernel that is one ard or se term without discrete columns, or a
 * product of such terms, alone or plus jitter, has a contraction that two
 * matrix products give: its value is then v0 exp(-q/2) with one v0 (the
 * product of the amplitudes) and q summed over all the factors' columns,
 * and dK/dlog v0_t = K, dK/dlog w_l = -1/2 w_l d_l K for every factor t.
 * Its factors go into f[*nf] (at most GPC_KERNEL_MAX_TERMS); 0 for any
 * other kernel.  Jitter adds to the diagonal only, so off it the kernel's
 * matrix holds the factors' values bit for bit. */
static int product_terms(const gpc_kernel *k, const term **f, size_t *nf)
{
    *nf = 0;
    if (k->copies != 1 || k->simplex)
        return 0;
    if (k->tree) {
        const node *root = &k->nodes[k->nnodes - 1];
        if (root->kind == N_PROD)
            return se_product(k, k->nnodes - 1, f, nf);
        size_t found = 0; /* a sum: one product and jitter */
        for (size_t c = 0; c < root->count; c++) {
            size_t i = k->kids[root->first + c];
            const node *kid = &k->nodes[i];
            if (kid->kind == N_TERM && k->terms[kid->term].type == T_JITTER)
                continue;
            if (found++ || !se_product(k, i, f, nf))
                return 0;
        }
        return found == 1;
    }
    if (k->nterms > 2)
        return 0;
    for (size_t ti = 0; ti < k->nterms; ti++) {
        const term *t = &k->terms[ti];
        if (se_term(t) && *nf == 0)
            f[(*nf)++] = t;
        else if (t->type != T_JITTER)
            return 0;
    }
    return *nf == 1;
}

/* The term's values Kt (K off the diagonal) and G = M o Kt with M = alpha
 * u u' + beta R, both n x n in full and with zeros on the diagonal.  Full,
 * for dgemm: OpenBLAS multiplies matrices this small by a few columns
 * without packing them (on AVX-512 CPUs), and at 200 rows the contraction
 * runs 1.5 times as fast as with dsymm on one triangle. */
static void product_matrices(const contraction *c, const gsl_matrix *K, double *Kt, double *G)
{
    size_t n = K->size1;
    const double *u = c->u;
    double alpha = c->alpha, beta = c->beta;
#pragma omp parallel for num_threads(gpc_parallel_threads()) schedule(static) \
    if (n >= GPC_PARALLEL_MIN_ROWS)
    for (size_t a = 0; a < n; a++) {
        const double *Ka = K->data + a * K->tda, *Ra = c->R->data + a * c->R->tda;
        double *Ga = G + a * n, au = alpha * u[a];
        memcpy(Kt + a * n, Ka, n * sizeof *Kt);
        Kt[a * n + a] = Ga[a] = 0.0;
#pragma omp simd /* -O2 alone leaves the loop scalar */
        for (size_t b = 0; b < a; b++)
            Ga[b] = (au * u[b] + beta * Ra[b]) * Ka[b];
    }
    mirror_lower(G, n, n);
}

/* The term's m columns, each less its mean, into xc (n rows, stride apart): distances do
 * not change, and the expansion below then subtracts terms of the size of
 * the spread of x, not of x itself. */
static void centred_columns(const term *t, const gsl_matrix *X, double *xc, size_t stride)
{
    size_t n = X->size1, m = t->ncols;
    for (size_t l = 0; l < m; l++) {
        double mean = 0.0;
        for (size_t a = 0; a < n; a++)
            mean += row(X, a)[t->cols[l]];
        mean /= (double)n;
        for (size_t a = 0; a < n; a++)
            xc[a * stride + l] = row(X, a)[t->cols[l]] - mean;
    }
}

/* The term's derivatives with respect to its log w from the per-column sums
 * e[l] of d_l times the term's values: -1/2 w_l e[l] for ard, -1/2 w sum_l
 * e[l] for se (one w for all its columns). */
static void weight_derivs(const term *t, const double *eth, const double *e, double *out)
{
    if (t->type == T_ARD) {
        for (size_t l = 0; l < t->ncols; l++)
            out[1 + l] = -0.5 * eth[1 + l] * e[l];
        return;
    }
    double sum = 0.0;
    for (size_t l = 0; l < t->ncols; l++)
        sum += e[l];
    out[1] = -0.5 * eth[1] * sum;
}

/* The right-hand sides of the two products, from the centred columns xc
 * (n x m): Z = [v, v o x_l, v o x_l^2] (n x (2m + 1)), Y = [1, x_l]
 * (n x (m + 1)). */
static void right_sides(const double *xc, const double *v, size_t n, size_t m, double *Z,
                        double *Y)
{
    size_t wz = 2 * m + 1, wy = m + 1;
    for (size_t a = 0; a < n; a++) {
        const double *xa = xc + a * m;
        double *Za = Z + a * wz, *Ya = Y + a * wy;
        Za[0] = v[a];
        Ya[0] = 1.0;
        for (size_t l = 0; l < m; l++) {
            Za[1 + l] = v[a] * xa[l];
            Za[1 + m + l] = v[a] * xa[l] * xa[l];
            Ya[1 + l] = xa[l];
        }
    }
}

/* P = Kt Z and Q = G Y (n rows, wz and wy columns). */
static void multiply(const double *Kt, const double *G, size_t n, const double *Z, size_t wz,
                     const double *Y, size_t wy, double *P, double *Q)
{
    gsl_matrix_const_view Ktv = gsl_matrix_const_view_array(Kt, n, n),
                          Gv = gsl_matrix_const_view_array(G, n, n),
                          Zv = gsl_matrix_const_view_array(Z, n, wz),
                          Yv = gsl_matrix_const_view_array(Y, n, wy);
    gsl_matrix_view Pv = gsl_matrix_view_array(P, n, wz), Qv = gsl_matrix_view_array(Q, n, wy);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &Ktv.matrix, &Zv.matrix, 0.0, &Pv.matrix);
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, &Gv.matrix, &Yv.matrix, 0.0, &Qv.matrix);
}

/* The contraction for product_terms' kernel from its matrix K, with no call
 * to exp and no pass over the pairs.  With d_l,ab = (x_al - x_bl)^2 over
 * the m columns of all the factors,
 *     sum_b Kt_ab v_b d_l,ab = x_al^2 (Kt v)_a - 2 x_al (Kt (v o x_l))_a
 *                              + (Kt (v o x_l^2))_a
 *     sum_ab G_ab d_l,ab    = 2 sum_a (x_al^2 (G 1)_a - x_al (G x_l)_a):
 * the products of Kt with n x (2m + 1) columns and of G with n x (m + 1).
 * The diagonal, where d = 0 exactly but its three parts would cancel only to
 * rounding, is left out of both and added where it counts, in dK/dlog v0 =
 * Kt (Kt_aa = v0, the product of the factors' amplitudes) and in jitter's
 * dK = j I. */
static void contract_products(const contraction *c, const term *const *f, size_t nf,
                              const gsl_matrix *K, double *s, gsl_matrix *B)
{
    const gpc_kernel *k = c->k;
    size_t n = K->size1, m = 0, off[GPC_KERNEL_MAX_TERMS];
    double v0 = 1.0;
    for (size_t i = 0; i < nf; i++) {
        off[i] = m;
        m += f[i]->ncols;
        v0 = i ? v0 * k->etheta[f[i]->offset] : k->etheta[f[i]->offset];
    }
    size_t wz = 2 * m + 1, wy = m + 1;
    double *Kt = gpc_mallocarray(2 * n * n + n * m + 2 * n * (wz + wy) + m, sizeof *Kt);
    double *G = Kt + n * n, *xc = G + n * n, *Z = xc + n * m, *P = Z + n * wz, *Y = P + n * wz,
           *Q = Y + n * wy, *e = Q + n * wy;
    product_matrices(c, K, Kt, G);
    for (size_t i = 0; i < nf; i++)
        centred_columns(f[i], c->X, xc + off[i], m);
    right_sides(xc, c->v, n, m, Z, Y);
    multiply(Kt, G, n, Z, wz, Y, wy, P, Q);

    /* s, with e[l] = sum_ab G_ab d_l,ab and M's diagonal for the v0 and
     * jitter derivatives */
    double mdiag = 0.0, sumG = 0.0;
    for (size_t l = 0; l < m; l++)
        e[l] = 0.0;
    for (size_t a = 0; a < n; a++) {
        const double *xa = xc + a * m, *Qa = Q + a * wy;
        mdiag += c->alpha * c->u[a] * c->u[a] + c->beta * c->R->data[a * c->R->tda + a];
        sumG += Qa[0];
        for (size_t l = 0; l < m; l++)
            e[l] += 2.0 * xa[l] * (xa[l] * Qa[0] - Qa[1 + l]);
    }
    for (size_t i = 0; i < nf; i++) {
        s[f[i]->offset] = sumG + v0 * mdiag;
        weight_derivs(f[i], k->etheta + f[i]->offset, e + off[i], s + f[i]->offset);
    }
    /* B, row by row with e[l] = sum_b Kt_ab v_b d_l,ab */
    for (size_t a = 0; a < n; a++) {
        const double *xa = xc + a * m, *Pa = P + a * wz;
        double *Ba = B->data + a * B->tda;
        for (size_t l = 0; l < m; l++)
            e[l] = xa[l] * xa[l] * Pa[0] - 2.0 * xa[l] * Pa[1 + l] + Pa[1 + m + l];
        for (size_t i = 0; i < nf; i++) {
            Ba[f[i]->offset] = Pa[0] + v0 * c->v[a];
            weight_derivs(f[i], k->etheta + f[i]->offset, e + off[i], Ba + f[i]->offset);
        }
    }
    for (size_t ti = 0; ti < k->nterms; ti++) {
        const term *jt = &k->terms[ti];
        if (jt->type != T_JITTER)
            continue;
        double jv = k->etheta[jt->offset];
        s[jt->offset] = jv * mdiag;
        for (size_t a = 0; a < n; a++)
            B->data[a * B->tda + jt->offset] = jv * c->v[a];
    }
    free(Kt);
}

void gpc_kernel_grad_contract(const gpc_kernel *k, const gsl_matrix *X, const gsl_matrix *K,
                              const gsl_vector *u, double alpha, const gsl_matrix *R,
                              double beta, const gsl_vector *v, double *s, gsl_matrix *B)
{
    size_t n = X->size1, p = k->nparams, nb = n < 4 * CONTRACT_BLOCKS ? 1 : CONTRACT_BLOCKS;
    double *ub = gpc_malloc(2 * n * sizeof *ub), *vb = ub + n;
    for (size_t i = 0; i < n; i++) {
        ub[i] = gsl_vector_get(u, i);
        vb[i] = gsl_vector_get(v, i);
    }
    contraction c = {k, X, R, ub, vb, alpha, beta};
    /* The products run up to GPC_KERNEL_CONTRACT_PRODUCT_ROWS = 1400 rows,
     * where they take about half the time of the pass over the pairs on one
     * thread or two (3.8 against 7.2 ms at 1000 rows on two), for two more
     * n x n matrices, at most 31 MiB.  Above that the scratch passes 32 MiB,
     * which glibc's malloc maps afresh at every call: the page faults made
     * the products slower than the pass at 1450 rows, and the pass keeps the
     * peak memory of a method at two n x n matrices. */
    const term *f[GPC_KERNEL_MAX_TERMS];
    size_t nf = 0;
    if (K && n > 0 && n <= GPC_KERNEL_CONTRACT_PRODUCT_ROWS && product_terms(k, f, &nf)) {
        contract_products(&c, f, nf, K, s, B);
        free(ub);
        return;
    }
    double *sbuf = gpc_calloc(nb * p, sizeof *sbuf), *Bbuf = gpc_calloc(nb * n * p, sizeof *Bbuf);
#pragma omp parallel for num_threads(gpc_parallel_threads()) schedule(dynamic, 1) \
    if (n >= GPC_PARALLEL_MIN_ROWS)
    for (size_t b = 0; b < nb; b++)
        contract_rows(&c, block_start(n, b, nb), block_start(n, b + 1, nb), sbuf + b * p,
                      Bbuf + b * n * p);
    for (size_t j = 0; j < p; j++) {
        s[j] = 0.0;
        for (size_t b = 0; b < nb; b++)
            s[j] += sbuf[b * p + j];
    }
    gpc_kernel_simplex_correct(k, s);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < p; j++) {
            double sum = 0.0;
            for (size_t b = 0; b < nb; b++)
                sum += Bbuf[(b * n + i) * p + j];
            gsl_matrix_set(B, i, j, sum);
        }
        gpc_kernel_simplex_correct(k, B->data + i * B->tda);
    }
    free(ub);
    free(sbuf);
    free(Bbuf);
}

/* The kernel's one term when it is a plain ard or se term over every column
 * in order (no discrete column, no product, no simplex weight, one copy),
 * whose contractions are matrix products; NULL otherwise. */
static const term *plain_sq_exp(const gpc_kernel *k)
{
    if (k->nterms != 1 || k->tree || k->simplex || k->copies != 1)
        return NULL;
    const term *t = &k->terms[0];
    if ((t->type != T_ARD && t->type != T_SE) || t->disc || t->ncols != k->dim)
        return NULL;
    for (size_t l = 0; l < t->ncols; l++)
        if (t->cols[l] != l)
            return NULL;
    return t;
}

/* For a plain ard or se term, k(x, z) = v exp(-1/2 sum_l w_l (x_l - z_l)^2):
 * B = A o K(X, Xs), its row sums r and column sums c, and X and Xs less the
 * column means of Xs (the kernel sees differences only, and centred
 * inputs keep the expanded squares below from cancelling), with
 * P = B Xs (centred).  Then
 *     sum_ab B_ab (x_al - xs_bl)   = x_al r_a - P_al            (row a),
 *     sum_ab B_ab (x_al - xs_bl)^2 = sum_a r_a x_al^2 - 2 sum_a x_al P_al
 *                                    + sum_b c_b xs_bl^2,
 * one matrix product in place of a pass over the pairs and their columns. */
typedef struct {
    gsl_matrix *B, *Xc, *Xsc, *P;
    double *r, *c;
} sq_exp_sums;

static void sq_exp_sums_of(const gpc_kernel *k, const gsl_matrix *X, const gsl_matrix *Xs,
                           const gsl_matrix *K, const gsl_matrix *A, sq_exp_sums *q)
{
    size_t n = X->size1, m = Xs->size1, d = k->dim;
    q->B = gpc_matrix_alloc(n, m);
    q->Xc = gpc_matrix_alloc(n, d);
    q->Xsc = gpc_matrix_alloc(m, d);
    q->P = gpc_matrix_alloc(n, d);
    q->r = gpc_calloc(n, sizeof *q->r);
    q->c = gpc_calloc(m, sizeof *q->c);
    if (K)
        gsl_matrix_memcpy(q->B, K);
    else
        gpc_kernel_cross(k, X, Xs, q->B);
    gsl_matrix_mul_elements(q->B, A);
    gsl_matrix_memcpy(q->Xc, X);
    gsl_matrix_memcpy(q->Xsc, Xs);
    for (size_t l = 0; l < d; l++) {
        double mean = 0.0;
        for (size_t b = 0; b < m; b++)
            mean += gsl_matrix_get(Xs, b, l) / (double)m;
        gsl_vector_view xc = gsl_matrix_column(q->Xc, l), xsc = gsl_matrix_column(q->Xsc, l);
        gsl_vector_add_constant(&xc.vector, -mean);
        gsl_vector_add_constant(&xsc.vector, -mean);
    }
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b < m; b++) {
            q->r[a] += gsl_matrix_get(q->B, a, b);
            q->c[b] += gsl_matrix_get(q->B, a, b);
        }
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, q->B, q->Xsc, 0.0, q->P);
}

static void sq_exp_sums_free(sq_exp_sums *q)
{
    gsl_matrix_free(q->B);
    gsl_matrix_free(q->Xc);
    gsl_matrix_free(q->Xsc);
    gsl_matrix_free(q->P);
    free(q->r);
    free(q->c);
}

/* s for a plain ard or se term: d k / d log v = k, and
 * d k / d log w_l = -1/2 w_l (x_l - z_l)^2 k (se: summed over l). */
static void sq_exp_contract(const gpc_kernel *k, const term *t, const gsl_matrix *X,
                            const gsl_matrix *Xs, const gsl_matrix *K, const gsl_matrix *A,
                            double *s)
{
    size_t n = X->size1, m = Xs->size1, d = k->dim;
    const double *eth = k->etheta + t->offset;
    sq_exp_sums q;
    sq_exp_sums_of(k, X, Xs, K, A, &q);
    double total = 0.0, *e = gpc_calloc(d, sizeof *e);
    for (size_t a = 0; a < n; a++)
        total += q.r[a];
    s[0] = total;
    for (size_t l = 0; l < d; l++) {
        for (size_t a = 0; a < n; a++) {
            double x = gsl_matrix_get(q.Xc, a, l);
            e[l] += q.r[a] * x * x - 2.0 * x * gsl_matrix_get(q.P, a, l);
        }
        for (size_t b = 0; b < m; b++) {
            double z = gsl_matrix_get(q.Xsc, b, l);
            e[l] += q.c[b] * z * z;
        }
    }
    weight_derivs(t, eth, e, s);
    free(e);
    sq_exp_sums_free(&q);
}

/* dX for a plain ard or se term: dX_al = -w_l (x_al r_a - P_al). */
static void sq_exp_input_contract(const gpc_kernel *k, const term *t, const gsl_matrix *X,
                                  const gsl_matrix *Xs, const gsl_matrix *K,
                                  const gsl_matrix *A, gsl_matrix *dX)
{
    size_t n = X->size1, d = k->dim;
    const double *eth = k->etheta + t->offset;
    sq_exp_sums q;
    sq_exp_sums_of(k, X, Xs, K, A, &q);
    for (size_t a = 0; a < n; a++)
        for (size_t l = 0; l < d; l++) {
            double w = eth[t->type == T_SE ? 1 : 1 + l];
            gsl_matrix_set(dX, a, l, -w * (gsl_matrix_get(q.Xc, a, l) * q.r[a] -
                                           gsl_matrix_get(q.P, a, l)));
        }
    sq_exp_sums_free(&q);
}

/* K(X, Xs) for a plain ard or se term by the expanded square: with the
 * columns centred at Xs's means and scaled by sqrt(w_l),
 *     q_ab = |x_a|^2 + |xs_b|^2 - 2 x_a'xs_b,   K_ab = v exp(-q_ab / 2),
 * the inner products in one matrix product. */
static void sq_exp_cross(const gpc_kernel *k, const term *t, const gsl_matrix *X,
                         const gsl_matrix *Xs, gsl_matrix *K)
{
    size_t n = X->size1, m = Xs->size1, d = k->dim;
    const double *eth = k->etheta + t->offset;
    gsl_matrix *Xw = gpc_matrix_alloc(n, d), *Xsw = gpc_matrix_alloc(m, d);
    double *xx = gpc_calloc(n + m, sizeof *xx), *ss = xx + n;
    for (size_t l = 0; l < d; l++) {
        double mean = 0.0, root = sqrt(eth[t->type == T_SE ? 1 : 1 + l]);
        for (size_t b = 0; b < m; b++)
            mean += gsl_matrix_get(Xs, b, l) / (double)m;
        for (size_t a = 0; a < n; a++)
            gsl_matrix_set(Xw, a, l, root * (gsl_matrix_get(X, a, l) - mean));
        for (size_t b = 0; b < m; b++)
            gsl_matrix_set(Xsw, b, l, root * (gsl_matrix_get(Xs, b, l) - mean));
    }
    for (size_t a = 0; a < n; a++)
        for (size_t l = 0; l < d; l++)
            xx[a] += gsl_matrix_get(Xw, a, l) * gsl_matrix_get(Xw, a, l);
    for (size_t b = 0; b < m; b++)
        for (size_t l = 0; l < d; l++)
            ss[b] += gsl_matrix_get(Xsw, b, l) * gsl_matrix_get(Xsw, b, l);
    gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, Xw, Xsw, 0.0, K);
    double lv = log(eth[0]);
    for (size_t a = 0; a < n; a++) {
        double *Ka = K->data + a * K->tda;
        for (size_t b = 0; b < m; b++) /* q >= 0 but for rounding */
            Ka[b] = lv - 0.5 * fmax(xx[a] + ss[b] - 2.0 * Ka[b], 0.0);
        gpc_exp_array(Ka, m);
    }
    gsl_matrix_free(Xw);
    gsl_matrix_free(Xsw);
    free(xx);
}

void gpc_kernel_cross_expanded(const gpc_kernel *k, const gsl_matrix *X, const gsl_matrix *Xs,
                               gsl_matrix *K)
{
    const term *plain = plain_sq_exp(k);
    if (plain)
        sq_exp_cross(k, plain, X, Xs, K);
    else
        gpc_kernel_cross(k, X, Xs, K);
}

/* Rows lo..hi of the cross contraction into s (nparams, zeroed by the
 * caller), with g scratch of nparams.  The pair is (x_a, xs_b) as
 * gpc_kernel_cross evaluates it: test row first, training case a. */
static void cross_contract_rows(const gpc_kernel *k, const gsl_matrix *X, const gsl_matrix *Xs,
                                const gsl_matrix *A, size_t lo, size_t hi, double *g, double *s)
{
    for (size_t a = lo; a < hi; a++)
        for (size_t b = 0; b < Xs->size1; b++) {
            double w = gsl_matrix_get(A, a, b);
            if (w == 0.0)
                continue;
            gpc_kernel_pair_grad(k, row(Xs, b), row(X, a), a, 0, g);
            for (size_t j = 0; j < k->nparams; j++)
                s[j] += w * g[j];
        }
}

void gpc_kernel_cross_contract(const gpc_kernel *k, const gsl_matrix *X, const gsl_matrix *Xs,
                               const gsl_matrix *K, const gsl_matrix *A, double *s)
{
    const term *plain = plain_sq_exp(k);
    if (plain) {
        sq_exp_contract(k, plain, X, Xs, K, A, s);
        return;
    }
    size_t n = X->size1, p = k->nparams, nb = n < 4 * CONTRACT_BLOCKS ? 1 : CONTRACT_BLOCKS;
    double *sbuf = gpc_calloc(nb * p, sizeof *sbuf);
    /* fixed blocks of rows, summed in block order: the same result on any
     * number of threads */
#pragma omp parallel for num_threads(gpc_parallel_threads()) schedule(dynamic, 1) \
    if (n >= GPC_PARALLEL_MIN_ROWS)
    for (size_t b = 0; b < nb; b++) {
        double *g = gpc_malloc(p * sizeof *g);
        cross_contract_rows(k, X, Xs, A, n * b / nb, n * (b + 1) / nb, g, sbuf + b * p);
        free(g);
    }
    for (size_t j = 0; j < p; j++) {
        s[j] = 0.0;
        for (size_t b = 0; b < nb; b++)
            s[j] += sbuf[b * p + j];
    }
    free(sbuf);
}

void gpc_kernel_diag_contract(const gpc_kernel *k, const gsl_matrix *Xs, const double *a,
                              double *s)
{
    double *g = gpc_malloc(k->nparams * sizeof *g);
    for (size_t j = 0; j < k->nparams; j++)
        s[j] = 0.0;
    for (size_t i = 0; i < Xs->size1; i++) {
        gpc_kernel_pair_grad(k, row(Xs, i), row(Xs, i), GRAM_SELF, 1, g);
        for (size_t j = 0; j < k->nparams; j++)
            s[j] += a[i] * g[j];
    }
    free(g);
}

void gpc_kernel_cross_input_contract(const gpc_kernel *k, const gsl_matrix *X,
                                     const gsl_matrix *Xs, const gsl_matrix *K,
                                     const gsl_matrix *A, gsl_matrix *dX)
{
    const term *plain = plain_sq_exp(k);
    if (plain) {
        sq_exp_input_contract(k, plain, X, Xs, K, A, dX);
        return;
    }
    size_t n = X->size1, widest = 1;
    for (size_t t = 0; t < k->nterms; t++)
        widest = k->terms[t].ncols > widest ? k->terms[t].ncols : widest;
    /* each row of dX is its own thread's: no sums across threads */
#pragma omp parallel for num_threads(gpc_parallel_threads()) schedule(static) \
    if (n >= GPC_PARALLEL_MIN_ROWS)
    for (size_t a = 0; a < n; a++) {
        double *gx = gpc_mallocarray(k->dim + widest, sizeof *gx), *scratch = gx + k->dim;
        double *out = dX->data + a * dX->tda;
        for (size_t l = 0; l < k->dim; l++)
            out[l] = 0.0;
        for (size_t b = 0; b < Xs->size1; b++) {
            double w = gsl_matrix_get(A, a, b);
            if (w == 0.0)
                continue;
            gpc_kernel_pair_input_grad(k, row(X, a), row(Xs, b), gx, scratch);
            for (size_t l = 0; l < k->dim; l++)
                out[l] += w * gx[l];
        }
        free(gx);
    }
}

/* ---- precomputed Gram matrices ----------------------------------------- */

static int gram_width(const gpc_kernel *k, const term *t, size_t ntrain)
{
    if (t->ncols == ntrain + 1)
        return GPC_OK;
    return gpc_fail(GPC_EINPUT, "kernel '%s': its gram term %zu reads %zu columns, a case's "
                    "similarity to itself and to each training case, so it needs %zu training "
                    "cases, not %zu", k->spec, (size_t)(t - k->terms) + 1, t->ncols,
                    t->ncols - 1, ntrain);
}

int gpc_kernel_check_train(const gpc_kernel *k, const gsl_matrix *X)
{
    size_t n = X->size1;
    for (size_t ti = 0; ti < k->nterms; ti++) {
        const term *t = &k->terms[ti];
        if (t->type != T_GRAM)
            continue;
        int rc = gram_width(k, t, n);
        if (rc != GPC_OK)
            return rc;
        double scale = 0.0;
        for (size_t i = 0; i < n; i++)
            scale = fmax(scale, fabs(row(X, i)[t->cols[0]]));
        double tol = 1e-10 * scale;
        for (size_t i = 0; i < n; i++) {
            const double *xi = row(X, i);
            if (!(fabs(xi[t->cols[0]] - xi[t->cols[1 + i]]) <= tol))
                return gpc_fail(GPC_EINPUT, "gram term %zu: training case %zu's similarity to "
                                "itself is %.17g in column %zu but %.17g in column %zu (its "
                                "column among the training cases)", ti + 1, i + 1,
                                xi[t->cols[0]], t->cols[0] + 1, xi[t->cols[1 + i]],
                                t->cols[1 + i] + 1);
            for (size_t j = 0; j < i; j++) {
                double a = xi[t->cols[1 + j]], b = row(X, j)[t->cols[1 + i]];
                if (!(fabs(a - b) <= tol))
                    return gpc_fail(GPC_EINPUT, "gram term %zu: the training Gram matrix is not "
                                    "symmetric: case %zu to %zu is %.17g, case %zu to %zu is "
                                    "%.17g", ti + 1, i + 1, j + 1, a, j + 1, i + 1, b);
            }
        }
    }
    return GPC_OK;
}

int gpc_kernel_check_test(const gpc_kernel *k, size_t ntrain)
{
    for (size_t ti = 0; ti < k->nterms; ti++)
        if (k->terms[ti].type == T_GRAM) {
            int rc = gram_width(k, &k->terms[ti], ntrain);
            if (rc != GPC_OK)
                return rc;
        }
    return GPC_OK;
}

int gpc_kernel_has_gram(const gpc_kernel *k)
{
    for (size_t t = 0; t < k->nterms; t++)
        if (k->terms[t].type == T_GRAM)
            return 1;
    return 0;
}

