#include "methods/vb.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_eigen.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/parallel.h"
#include "linalg/bmatrix.h"

#define VB_TOL 1e-9
#define VB_MAX_SWEEPS 10000
/* Newton's method takes over from the extrapolated sweeps after this many
 * passes over the cases (see gpc_vb_fit) */
#define NEWTON_AFTER 300

/* Newton's method on the fixed point (shared kernel; see gpc_vb_fit). */
struct gpc_vb_newton {
    double *F;        /* n blocks C x C: W_i^1/2, the cases' curvatures' square roots */
    gsl_vector *sq;   /* length n: sqrt(s_i), s_i the mean nonzero eigenvalue of W_i */
    gsl_matrix *L;    /* n x n: Cholesky factor of I + S^1/2 K S^1/2 (the preconditioner) */
    gsl_vector *b, *x, *r, *z, *p, *Ap, *t, *a_new, *m_new, *z_old, *a_old;
    /* per OpenMP thread: an eigensolver and its C x C matrices */
    gsl_eigen_symmv_workspace **eig;
    double *scratch;  /* per thread 3 C^2 + C: W_i and its square root's scratch */
};

static struct gpc_vb_newton *newton_alloc(size_t n, size_t C, int nthreads)
{
    struct gpc_vb_newton *nw = gpc_calloc(1, sizeof *nw);
    size_t Cn = C * n;
    nw->F = gpc_mallocarray(n, C * C * sizeof *nw->F);
    nw->sq = gpc_vector_calloc(n);
    nw->L = gpc_matrix_alloc(n, n);
    gsl_vector **v[] = {&nw->b, &nw->x, &nw->r, &nw->z, &nw->p, &nw->Ap, &nw->t,
                        &nw->a_new, &nw->m_new, &nw->z_old, &nw->a_old};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        *v[i] = gpc_vector_calloc(Cn);
    nw->eig = gpc_calloc((size_t)nthreads, sizeof *nw->eig);
    for (int t = 0; t < nthreads; t++)
        nw->eig[t] = gsl_eigen_symmv_alloc(C);
    nw->scratch = gpc_mallocarray((size_t)nthreads * (3 * C * C + C), sizeof *nw->scratch);
    return nw;
}

static void newton_free(struct gpc_vb_newton *nw, int nthreads)
{
    if (!nw)
        return;
    free(nw->F);
    gsl_vector_free(nw->sq);
    gsl_matrix_free(nw->L);
    gsl_vector *v[] = {nw->b, nw->x, nw->r, nw->z, nw->p, nw->Ap, nw->t,
                       nw->a_new, nw->m_new, nw->z_old, nw->a_old};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        gsl_vector_free(v[i]);
    for (int t = 0; t < nthreads; t++)
        gsl_eigen_symmv_free(nw->eig[t]);
    free(nw->eig);
    free(nw->scratch);
    free(nw);
}

/* Kept beside newton_alloc and gpc_vb_alloc, whose allocations it counts
 * (with the gradient's R), so that a change to one is seen in the other. */
size_t gpc_vb_workspace(size_t n, size_t C, size_t nparams, int per_class, int gradient)
{
    size_t Cn = gpc_size_mul(C, n);
    /* K and P per kernel; Newton's L (shared kernel); the gradient's R */
    size_t squares = gpc_size_mul(2, per_class ? C : 1);
    squares = gpc_size_add(squares, (per_class ? 0 : 1) + (gradient ? 1 : 0));
    size_t bytes = gpc_size_mul(squares, gpc_doubles_bytes(n, n));
    /* m, v, ybar_from, ybar and five for the extrapolation, of length Cn;
     * log_p, u and Bg */
    bytes = gpc_size_add(bytes, gpc_doubles_bytes(Cn, 9));
    bytes = gpc_size_add(bytes, gpc_doubles_bytes(n, 2 + (nparams > 0 ? nparams : 1)));
    if (!per_class) { /* Newton's curvatures F (n C x C), sq and eleven of length Cn */
        bytes = gpc_size_add(bytes, gpc_doubles_bytes(n, gpc_size_add(gpc_size_mul(C, C), 1)));
        bytes = gpc_size_add(bytes, gpc_doubles_bytes(Cn, 11));
    }
    return bytes;
}

gpc_vb *gpc_vb_alloc(size_t n, size_t C, size_t nparams, int per_class)
{
    gpc_vb *w = gpc_calloc(1, sizeof *w);
    size_t Cn = C * n;
    w->n = n;
    w->C = C;
    w->nparams = nparams;
    w->per_class = per_class != 0;
    w->nK = w->per_class ? C : 1;
    w->K = gpc_calloc(w->nK, sizeof *w->K);
    w->P = gpc_calloc(w->nK, sizeof *w->P);
    for (size_t k = 0; k < w->nK; k++) {
        w->K[k] = gpc_matrix_alloc(n, n);
        w->P[k] = gpc_matrix_alloc(n, n);
    }
    w->m = gpc_vector_calloc(Cn);
    w->v = gpc_vector_calloc(Cn);
    w->ybar_from = gpc_vector_calloc(Cn);
    w->ybar = gpc_vector_calloc(Cn);
    w->log_p = gpc_vector_calloc(n);
    w->z0 = gpc_vector_calloc(Cn);
    w->pv = gpc_vector_calloc(Cn);
    w->z1 = gpc_vector_calloc(Cn);
    w->r = gpc_vector_calloc(Cn);
    w->q = gpc_vector_calloc(Cn);
    w->u = gpc_vector_alloc(n);
    w->Bg = gpc_matrix_alloc(n, nparams > 0 ? nparams : 1);
    w->rule = gpc_mprobit_rule_alloc(C);
    w->scratch_threads = w->nthreads = gpc_parallel_max_threads();
    w->thread_rule = gpc_calloc((size_t)w->scratch_threads, sizeof *w->thread_rule);
    w->thread_scratch =
        gpc_mallocarray((size_t)w->scratch_threads * 2 * C, sizeof *w->thread_scratch);
    for (int t = 1; t < w->scratch_threads; t++)
        w->thread_rule[t] = gpc_mprobit_rule_alloc(C);
    w->thread_rule[0] = w->rule;
    w->tol = VB_TOL;
    w->max_sweeps = VB_MAX_SWEEPS;
    w->newton_after = NEWTON_AFTER;
    return w;
}

void gpc_vb_free(gpc_vb *w)
{
    if (!w)
        return;
    for (size_t k = 0; k < w->nK; k++) {
        gsl_matrix_free(w->K[k]);
        gsl_matrix_free(w->P[k]);
    }
    free(w->K);
    free(w->P);
    gsl_vector *v[] = {w->m, w->v, w->ybar_from, w->ybar, w->log_p, w->u,
                       w->z0, w->z1, w->r, w->q, w->pv};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        gsl_vector_free(v[i]);
    gsl_matrix_free(w->Bg);
    if (w->R)
        gsl_matrix_free(w->R);
    for (int t = 1; t < w->scratch_threads; t++)
        gpc_mprobit_rule_free(w->thread_rule[t]);
    free(w->thread_rule);
    free(w->thread_scratch);
    gpc_mprobit_rule_free(w->rule);
    newton_free(w->newton, w->scratch_threads);
    free(w);
}

static gsl_vector_view block(gsl_vector *x, size_t n, size_t c)
{
    return gsl_vector_subvector(x, c * n, n);
}

static size_t kidx(const gpc_vb *w, size_t c) { return w->per_class ? c : 0; }

/* P_k = (I + K_k)^-1 (lower triangle) and 1/2 sum_c log|I + K_c|. */
static int factor(gpc_vb *w)
{
    gsl_vector_set_all(w->u, 1.0);
    double hl = 0.0;
    for (size_t k = 0; k < w->nK; k++) {
        if (gpc_bmatrix_factor(w->K[k], w->u->data, w->P[k]) != 0)
            return gpc_fail(GPC_ENUM, "I + K is not positive definite: the kernel matrix is "
                            "far from positive semi-definite; add a jitter term to the kernel "
                            "(e.g. 'ard+jitter') or try other hyperparameters");
        hl += gpc_bmatrix_half_log_det(w->P[k]);
        gpc_bmatrix_inverse(w->P[k]);
    }
    w->half_log_det = w->per_class ? hl : (double)w->C * hl;
    return GPC_OK;
}

/* out_c = A_c z_c for every class (vectors of length Cn), A the kernels'
 * matrices K or P (symmetric, lower triangles read); with a shared kernel
 * one product with the C x n matrix whose rows are the z_c. */
static void apply_each(const gpc_vb *w, gsl_matrix *const *A, const gsl_vector *z,
                       gsl_vector *out)
{
    if (!w->per_class) {
        gsl_matrix_const_view Z = gsl_matrix_const_view_vector(z, w->C, w->n);
        gsl_matrix_view O = gsl_matrix_view_vector(out, w->C, w->n);
        gsl_blas_dsymm(CblasRight, CblasLower, 1.0, A[0], &Z.matrix, 0.0, &O.matrix);
        return;
    }
    for (size_t c = 0; c < w->C; c++) {
        gsl_vector_const_view zc = gsl_vector_const_subvector(z, c * w->n, w->n);
        gsl_vector_view oc = block(out, w->n, c);
        gsl_blas_dsymv(CblasLower, 1.0, A[c], &zc.vector, 0.0, &oc.vector);
    }
}

static void apply_P(const gpc_vb *w, const gsl_vector *z, gsl_vector *out)
{
    apply_each(w, w->P, z, out);
}

/* m and v = K^-1 m from ybar_from: v = P ybar_from (computed here, or
 * given as pv), m = ybar_from - v. */
static void means_from(gpc_vb *w, const gsl_vector *pv)
{
    if (pv && pv != w->v)
        gsl_vector_memcpy(w->v, pv);
    else if (!pv)
        apply_P(w, w->ybar_from, w->v);
    gsl_vector_memcpy(w->m, w->ybar_from);
    gsl_vector_sub(w->m, w->v);
}

/* W_i's square root F_i (symmetric, eigenvalues clipped to [0, 1]) and
 * the mean of its C - 1 nonzero eigenvalues (W_i 1 = 0), from the
 * quadrature that gave case i's expectations on thread t. */
static void case_curvature(gpc_vb *w, const size_t *cls, size_t i, int t)
{
    size_t C = w->C;
    struct gpc_vb_newton *nw = w->newton;
    double *Wi = nw->scratch + (size_t)t * (3 * C * C + C);
    gpc_mprobit_curvature(w->thread_rule[t], cls[i], Wi);
    double trace = gpc_mprobit_sqrt(C, Wi, nw->F + i * C * C, Wi + C * C, nw->eig[t]);
    nw->sq->data[i] = sqrt(trace / (double)(C - 1));
}

/* The integrals of case i with the rule and scratch of thread t. */
static void case_expectations(gpc_vb *w, const size_t *cls, size_t i, int t)
{
    size_t n = w->n, C = w->C;
    double *mi = w->thread_scratch + (size_t)t * 2 * C, *yi = mi + C;
    for (size_t c = 0; c < C; c++)
        mi[c] = w->m->data[c * n + i];
    w->log_p->data[i] = gpc_mprobit_case(w->thread_rule[t], cls[i], mi, yi);
    for (size_t c = 0; c < C; c++)
        w->ybar->data[c * n + i] = yi[c];
    if (w->newton && w->newton_active)
        case_curvature(w, cls, i, t);
}

/* The cases' integrals take most of a sweep (bench-vb), and each is
 * independent of the others: from VB_PARALLEL_MIN_WORK = n C (vb.h) they
 * run on OpenMP threads, each case computed by one thread from the same
 * operands and the logs summed afterwards in case order, so the thread
 * count changes no bit.  The BLAS calls inside a case's work (the C x C
 * eigendecomposition of its curvature) run on one thread, also when the
 * cases run one after another: OpenBLAS would otherwise spread those on its
 * threads and sum them in another order. */
int gpc_vb_threads(const gpc_vb *w)
{
    int now = gpc_parallel_threads();
    return now < w->nthreads ? now : w->nthreads;
}

/* ybar and log P at m, and the bound there. */
static double expectations(gpc_vb *w, const size_t *cls)
{
    size_t n = w->n, C = w->C;
    double sum = 0.0, quad;
    int threads = n * C >= VB_PARALLEL_MIN_WORK ? gpc_vb_threads(w) : 1;
    gpc_parallel_blas(0);
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
        int t = omp_get_thread_num();
#pragma omp for schedule(dynamic, 16)
        for (size_t i = 0; i < n; i++)
            case_expectations(w, cls, i, t);
    }
    gpc_parallel_blas(n);
    for (size_t i = 0; i < n; i++)
        sum += w->log_p->data[i];
    gsl_blas_ddot(w->m, w->v, &quad);
    w->bound = sum - 0.5 * quad - w->half_log_det;
    return w->bound;
}

static int check_labels(const gpc_vb *w, const size_t *cls)
{
    for (size_t i = 0; i < w->n; i++)
        if (cls[i] >= w->C)
            return gpc_fail(GPC_EUSAGE, "class index %zu of case %zu is not below the number "
                            "of classes %zu", cls[i], i + 1, w->C);
    return GPC_OK;
}

int gpc_vb_start(gpc_vb *w, const size_t *cls)
{
    int st;
    gpc_parallel_blas(w->n);
    if ((st = check_labels(w, cls)) != GPC_OK || (st = factor(w)) != GPC_OK)
        return st;
    if (!w->has_fit)
        gsl_vector_set_zero(w->ybar_from);
    means_from(w, NULL);
    return GPC_OK;
}

double gpc_vb_sweep(gpc_vb *w, const size_t *cls)
{
    double L = expectations(w, cls);
    gsl_vector_memcpy(w->ybar_from, w->ybar);
    means_from(w, NULL);
    return L;
}

/* The largest change the next update would make to m, ybar - P ybar - m,
 * relative to the largest |m| when that is above 1 (rounding in the products
 * with P grows with m), leaving P ybar in w->pv for that update. */
static double next_change(gpc_vb *w)
{
    double worst = 0.0, size = 1.0;
    apply_P(w, w->ybar, w->pv);
    for (size_t i = 0; i < w->C * w->n; i++) {
        worst = fmax(worst, fabs(w->ybar->data[i] - w->pv->data[i] - w->m->data[i]));
        size = fmax(size, fabs(w->m->data[i]));
    }
    return worst / size;
}

/* Go to z (the ybar that m is computed from): m, v (given as pv = P z, or
 * computed), then ybar and the bound at m.  Returns the bound. */
static double visit(gpc_vb *w, const size_t *cls, const gsl_vector *z, const gsl_vector *pv)
{
    if (z != w->ybar_from)
        gsl_vector_memcpy(w->ybar_from, z);
    means_from(w, pv);
    w->sweeps++;
    return expectations(w, cls);
}

/* ---- Newton's method (shared kernel) -------------------------------------
 *
 * The fixed point maximises Psi(m) = sum_i log P_i(m_i) - 1/2 sum_c m_c' K^-1 m_c
 * (the bound with Q(Y) optimal), whose Hessian is -(K^-1 + W) with W
 * block-diagonal over the cases, W_i = I - Cov(y_i | class) (mprobit.h).
 * With a = K^-1 m, g = ybar - m and b = W m + g, Newton's step is
 *     a_new = b - F B^-1 F K b,   m_new = K a_new,   B = I + F (I (x) K) F,
 * F = W^1/2, as in the Laplace approximation but with C x C blocks; the
 * state z = m + a (z = ybar_from, so that m = (I - P) z) moves with them.
 * B is solved by conjugate gradients, one product with K per iteration,
 * preconditioned by I + S^1/2 K S^1/2 on each case's differences between
 * classes (W_i ~ s_i (I - 1 1'/C)) and the identity on their means (W_i 1
 * = 0), one Cholesky factor per step.  Steps are halved until the bound
 * rises, so it never falls.  From the start (bench-vb, n = 2000, C = 10) it
 * needs 7 steps, 9 passes over the cases, but 70 to 160 conjugate-gradient
 * iterations per step, 864 in all: twice the sweeps' time there, which is
 * why it waits for the sweeps to crawl. */

#define CG_TOL 1e-10
#define CG_MAX 2000
#define NEWTON_HALVINGS 10

/* out = F x, F block-diagonal over the cases (x, out class-major). */
static void apply_F(const gpc_vb *w, const gsl_vector *x, gsl_vector *out)
{
    gpc_mprobit_blocks_apply(w->n, w->C, w->newton->F, x->data, out->data);
}

/* out = B x = x + F K F x (t is scratch). */
static void apply_B(const gpc_vb *w, const gsl_vector *x, gsl_vector *out, gsl_vector *t)
{
    apply_F(w, x, out);
    apply_each(w, w->K, out, t);
    apply_F(w, t, out);
    gsl_vector_add(out, x);
}

/* out = the preconditioner's inverse applied to x: each case's mean over
 * the classes kept, its differences solved with I + S^1/2 K S^1/2. */
static void precondition(const gpc_vb *w, const gsl_vector *x, gsl_vector *out)
{
    size_t n = w->n, C = w->C;
    double *mean = w->u->data;
    for (size_t i = 0; i < n; i++) {
        double s = 0.0;
        for (size_t c = 0; c < C; c++)
            s += x->data[c * n + i];
        mean[i] = s / (double)C;
        for (size_t c = 0; c < C; c++)
            out->data[c * n + i] = x->data[c * n + i] - mean[i];
    }
    gsl_matrix_view O = gsl_matrix_view_vector(out, C, n);
    gsl_blas_dtrsm(CblasRight, CblasLower, CblasTrans, CblasNonUnit, 1.0, w->newton->L,
                   &O.matrix);
    gsl_blas_dtrsm(CblasRight, CblasLower, CblasNoTrans, CblasNonUnit, 1.0, w->newton->L,
                   &O.matrix);
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < C; c++)
            out->data[c * n + i] += mean[i];
}

/* x = B^-1 rhs by preconditioned conjugate gradients, to a residual tol
 * times the right-hand side's; returns the iterations. */
static int solve_B(gpc_vb *w, const gsl_vector *rhs, gsl_vector *x, double tol)
{
    struct gpc_vb_newton *nw = w->newton;
    gsl_vector *r = nw->r, *z = nw->z, *p = nw->p, *Ap = nw->Ap;
    gsl_vector_set_zero(x);
    gsl_vector_memcpy(r, rhs);
    double r0 = gsl_blas_dnrm2(rhs), rz, rz_new, pAp;
    if (r0 == 0.0)
        return 0;
    precondition(w, r, z);
    gsl_vector_memcpy(p, z);
    gsl_blas_ddot(r, z, &rz);
    int it = 0;
    while (it < CG_MAX) {
        apply_B(w, p, Ap, nw->t);
        gsl_blas_ddot(p, Ap, &pAp);
        double alpha = rz / pAp;
        gsl_blas_daxpy(alpha, p, x);
        gsl_blas_daxpy(-alpha, Ap, r);
        it++;
        if (gsl_blas_dnrm2(r) <= tol * r0)
            break;
        precondition(w, r, z);
        gsl_blas_ddot(r, z, &rz_new);
        gsl_vector_scale(p, rz_new / rz);
        gsl_vector_add(p, z);
        rz = rz_new;
    }
    return it;
}

/* Newton's target from the current m, a = v and curvatures: a_new, m_new. */
static int newton_target(gpc_vb *w)
{
    struct gpc_vb_newton *nw = w->newton;
    size_t n = w->n, Cn = w->C * n;
    if (gpc_bmatrix_factor(w->K[0], nw->sq->data, nw->L) != 0)
        return gpc_fail(GPC_ENUM, "the Newton preconditioner is not positive definite");
    /* b = W m + ybar - m = F (F m) + ybar - m */
    apply_F(w, w->m, nw->t);
    apply_F(w, nw->t, nw->b);
    for (size_t j = 0; j < Cn; j++)
        nw->b->data[j] += w->ybar->data[j] - w->m->data[j];
    apply_each(w, w->K, nw->b, nw->t);
    apply_F(w, nw->t, nw->m_new); /* the right-hand side F K b */
    w->cg_iterations += solve_B(w, nw->m_new, nw->x, CG_TOL);
    apply_F(w, nw->x, nw->a_new);
    gsl_vector_scale(nw->a_new, -1.0);
    gsl_vector_add(nw->a_new, nw->b);
    apply_each(w, w->K, nw->a_new, nw->m_new);
    return GPC_OK;
}

/* One Newton step from the current state (bound L): the full step, or the
 * largest of its halvings that raises the bound; returns 0 if none does.
 * The system is solved to a residual of CG_TOL: looser solves (inexact
 * Newton) gave directions along which the bound fell. */
static int newton_step(gpc_vb *w, const size_t *cls, double *L)
{
    struct gpc_vb_newton *nw = w->newton;
    if (newton_target(w) != GPC_OK)
        return 0;
    w->newton_steps++;
    gsl_vector_memcpy(nw->z_old, w->ybar_from);
    gsl_vector_memcpy(nw->a_old, w->v);
    /* the targets as differences from the current point */
    gsl_vector_add(nw->m_new, nw->a_new);  /* z_new = m_new + a_new */
    gsl_vector_sub(nw->m_new, nw->z_old);  /* dz */
    gsl_vector_sub(nw->a_new, nw->a_old);  /* da */
    double t = 1.0;
    for (int h = 0; h <= NEWTON_HALVINGS; h++, t *= 0.5) {
        gsl_vector_memcpy(nw->z, nw->z_old);
        gsl_blas_daxpy(t, nw->m_new, nw->z);
        gsl_vector_memcpy(nw->p, nw->a_old);
        gsl_blas_daxpy(t, nw->a_new, nw->p);
        double Lt = visit(w, cls, nw->z, nw->p);
        if (isfinite(Lt) && Lt >= *L) {
            *L = Lt;
            return 1;
        }
    }
    visit(w, cls, nw->z_old, nw->a_old);
    return 0;
}

/* The updates as a fixed-point map on z: z -> ybar(m(z)), m(z) = (I - P) z.
 * Plain sweeps raise the bound but crawl where K is large (the map then
 * contracts at a rate near lambda / (1 + lambda) for K's eigenvalues
 * lambda), so two sweeps are extrapolated along their path (SQUAREM,
 * Varadhan & Roland 2008): with r = z1 - z0 and q = z2 - 2 z1 + z0, the
 * point z0 - 2 a r + a^2 q, a = -|r| / |q| (at most -1), is kept if its
 * bound beats the first sweep's, else the plain second sweep is, so the
 * bound never falls.  Anderson acceleration (anderson.h) does worse here:
 * remembering 10 sweeps it took 162 passes where SQUAREM takes 136
 * (bench-vb, n = 2000, C = 10), since the slow directions are many: K's
 * eigenvalues fall slowly (712, 48 at rank 10, 8.8 at rank 100, 2.3 at
 * rank 300) and the cases' curvatures W_i spread over [0, 1] in most of
 * their C - 1 directions, so the rates fill [0, 1) densely. */
int gpc_vb_fit(gpc_vb *w, const size_t *cls)
{
    int st = gpc_vb_start(w, cls);
    if (st != GPC_OK)
        return st;
    int newton_tried = 0; /* once it fails to raise the bound, sweeps to the end */
    w->newton_active = 0;
    w->newton_steps = w->cg_iterations = 0;
    gsl_vector *z0 = w->z0, *z1 = w->z1, *r = w->r, *q = w->q;
    w->sweeps = 0;
    double L = visit(w, cls, w->ybar_from, w->v);
    for (;;) {
        if (!isfinite(L)) {
            w->newton_active = 0;
            return gpc_fail(GPC_ENUM, "the variational bound is not finite; try "
                            "hyperparameters of moderate size");
        }
        if (next_change(w) <= w->tol)
            break;
        if (w->sweeps >= w->max_sweeps) {
            w->newton_active = 0;
            return gpc_fail(GPC_ENUM, "the variational updates did not converge in %d sweeps; "
                            "try smaller signal variances", w->max_sweeps);
        }
        if (!w->per_class && w->sweeps >= w->newton_after && !newton_tried) {
            if (!w->newton)
                w->newton = newton_alloc(w->n, w->C, w->scratch_threads);
            w->newton_active = newton_tried = 1;
            L = visit(w, cls, w->ybar_from, w->v); /* the curvatures here */
            continue;
        }
        if (w->newton_active) {
            if (newton_step(w, cls, &L))
                continue;
            w->newton_active = 0; /* no rise along Newton's direction: sweeps from here */
        }
        gsl_vector_memcpy(z0, w->ybar_from);
        gsl_vector_memcpy(z1, w->ybar);
        double L1 = visit(w, cls, z1, w->pv);
        if (next_change(w) <= w->tol) {
            L = L1;
            break;
        }
        /* r = z1 - z0, q = z2 - 2 z1 + z0 with z2 = ybar now */
        gsl_vector_memcpy(r, z1);
        gsl_vector_sub(r, z0);
        gsl_vector_memcpy(q, w->ybar);
        gsl_vector_sub(q, z1);
        gsl_vector_sub(q, r);
        double nr = gsl_blas_dnrm2(r), nq = gsl_blas_dnrm2(q);
        double a = nq > 0.0 ? fmin(-nr / nq, -1.0) : -1.0;
        gsl_vector_memcpy(z1, w->ybar); /* z2, the fallback */
        gsl_vector_scale(r, -2.0 * a);
        gsl_vector_scale(q, a * a);
        gsl_vector_add(z0, r);
        gsl_vector_add(z0, q);
        double Lx = visit(w, cls, z0, NULL);
        if (isfinite(Lx) && Lx >= L1)
            L = Lx;
        else
            L = visit(w, cls, z1, NULL);
    }
    w->newton_active = 0;
    w->has_fit = 1;
    return GPC_OK;
}

int gpc_vb_evidence(gpc_vb *w, gpc_kernel *const *kernels, const gsl_matrix *X,
                    const size_t *cls, double *bound, double *grad)
{
    for (size_t k = 0; k < w->nK; k++) {
        if (gpc_kernel_nparams(kernels[k]) != w->nparams)
            return gpc_fail(GPC_EUSAGE, "kernel %zu has %zu hyperparameters, the VB workspace "
                            "expects %zu", k + 1, gpc_kernel_nparams(kernels[k]), w->nparams);
        gpc_kernel_matrix(kernels[k], X, w->K[k]);
    }
    int st = gpc_vb_fit(w, cls);
    if (st != GPC_OK)
        return st;
    *bound = w->bound;
    if (!grad || w->nparams == 0)
        return GPC_OK;
    size_t n = w->n, p = w->nparams;
    if (!w->R)
        w->R = gpc_matrix_alloc(n, n);
    gsl_vector_set_zero(w->u);
    /* per kernel k, one pass over the pairs: 1/2 sum_{c of k} v_c' dK v_c -
     * 1/2 (classes of k) tr(P_k dK) = tr(R dK) with R = 1/2 sum_c v_c v_c' -
     * 1/2 (classes) P_k, the classes of a shared kernel in one update */
    for (size_t k = 0; k < w->nK; k++) {
        double classes = w->per_class ? 1.0 : (double)w->C;
        gsl_matrix_memcpy(w->R, w->P[k]);
        gsl_matrix_scale(w->R, -0.5 * classes);
        size_t c0 = w->per_class ? k : 0, nc = w->per_class ? 1 : w->C;
        gsl_matrix_const_view V = gsl_matrix_const_view_array(w->v->data + c0 * n, nc, n);
        gsl_blas_dsyrk(CblasLower, CblasTrans, 0.5, &V.matrix, 1.0, w->R);
        gpc_kernel_grad_contract(kernels[k], X, w->K[k], w->u, 0.0, w->R, 1.0, w->u,
                                 grad + k * p, w->Bg);
    }
    for (size_t j = 0; j < p * w->nK; j++)
        if (!isfinite(grad[j]))
            return gpc_fail(GPC_ENUM, "the gradient of the variational bound is not finite at "
                            "these hyperparameters; try values of moderate size");
    return GPC_OK;
}

int gpc_vb_set_state(gpc_vb *w, const size_t *cls, const gsl_vector *ybar_from)
{
    int st;
    gpc_parallel_blas(w->n);
    if ((st = check_labels(w, cls)) != GPC_OK || (st = factor(w)) != GPC_OK)
        return st;
    gsl_vector_memcpy(w->ybar_from, ybar_from);
    means_from(w, NULL);
    expectations(w, cls);
    w->has_fit = 1;
    return GPC_OK;
}

void gpc_vb_predict(const gpc_vb *w, const gsl_matrix *const *Ks, const gsl_vector *const *kss,
                    gsl_matrix *mean, gsl_matrix *cov)
{
    size_t n = w->n, m = mean->size1, C = w->C;
    gsl_matrix *PK = gpc_matrix_alloc(n, m);
    gsl_matrix_set_zero(cov);
    for (size_t k = 0; k < w->nK; k++) {
        gsl_blas_dsymm(CblasLeft, CblasLower, 1.0, w->P[k], Ks[k], 0.0, PK);
        for (size_t s = 0; s < m; s++) {
            gsl_vector_const_view ks = gsl_matrix_const_column(Ks[k], s);
            gsl_vector_view pk = gsl_matrix_column(PK, s);
            double q;
            gsl_blas_ddot(&ks.vector, &pk.vector, &q);
            double var = gsl_vector_get(kss[k], s) - q;
            for (size_t c = 0; c < C; c++) {
                if (kidx(w, c) != k)
                    continue;
                gsl_vector_const_view vc = gsl_vector_const_subvector(w->v, c * n, n);
                double mu;
                gsl_blas_ddot(&ks.vector, &vc.vector, &mu);
                gsl_matrix_set(mean, s, c, mu);
                gsl_matrix_set(cov, s, c * C + c, var);
            }
        }
    }
    gsl_matrix_free(PK);
}
