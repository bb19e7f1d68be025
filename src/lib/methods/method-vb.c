/* Variational Bayes multinomial probit (vb.h): its operations for the method
 * table.  Labels are class indices 0..C-1 (C >= 2) in y; the state is the
 * vector the means were computed from, one column ybar_c per class.  The
 * "evidence" is the multinomial probit model's Laplace approximation at the
 * variational mode (mprobit-laplace.h; GPC_EVIDENCE_LAPLACE, the default),
 * or the variational lower bound on log p(labels | hyperparameters)
 * (GPC_EVIDENCE_BOUND), which prefers weak kernels.  Shared or per-class
 * kernels as in method-softmax.c. */
#include "methods/method.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/alloc.h"
#include "base/err.h"
#include "kernels/class-kernels.h"
#include "methods/mprobit-laplace.h"
#include "methods/vb.h"

typedef struct {
    gpc_vb *vb;
    gpc_class_kernels *kernels;
    size_t *cls;            /* the labels as indices */
    gpc_evidence_kind evidence;
    gpc_mpl *mpl;           /* the Laplace evidence's workspace, from its first use */
    double bound;           /* the variational bound of the last fit */
} vb_ws;

static int vb_check_lik(gpc_lik lik)
{
    if (lik != GPC_LIK_MPROBIT)
        return gpc_fail(GPC_EUSAGE, "variational Bayes takes the multinomial probit "
                        "likelihood (-l mprobit)");
    return GPC_OK;
}

static void *vb_alloc(size_t n, size_t C, const gpc_kernel *k, int gradient, gpc_lik lik)
{
    vb_ws *w = gpc_calloc(1, sizeof *w);
    (void)lik;
    (void)gradient;
    w->kernels = gpc_class_kernels_alloc(k, C);
    w->vb = gpc_vb_alloc(n, C, w->kernels->nparams, w->kernels->nK > 1);
    w->cls = gpc_mallocarray(n ? n : 1, sizeof *w->cls);
    return w;
}

static size_t vb_workspace(size_t n, size_t C, const gpc_kernel *k, int gradient)
{
    int per_class;
    size_t p = gpc_class_kernels_nparams(k, &per_class);
    /* the labels as indices beside the variational workspace and the
     * default objective's, the Laplace evidence's Cn x Cn matrices (stated
     * before the objective is chosen: the bound alone takes less) */
    size_t bytes = gpc_size_add(gpc_vb_workspace(n, C, p, per_class, gradient),
                                gpc_size_mul(n, sizeof(size_t)));
    return gpc_size_add(bytes, gpc_mpl_workspace(n, C));
}

static void vb_free(void *ws)
{
    vb_ws *w = ws;
    if (!w)
        return;
    gpc_class_kernels_free(w->kernels);
    gpc_vb_free(w->vb);
    gpc_mpl_free(w->mpl);
    free(w->cls);
    free(w);
}

static int vb_set(void *ws, gpc_method_setting key, double value)
{
    vb_ws *w = ws;
    switch (key) {
    case GPC_SET_TOL:
        w->vb->tol = value;
        return GPC_OK;
    case GPC_SET_EVIDENCE:
        w->evidence = (gpc_evidence_kind)value;
        return GPC_OK;
    default:
        return GPC_METHOD_NO_SETTING;
    }
}

/* The labels as indices and the base kernels at k's hyperparameters. */
static int take(vb_ws *w, const gsl_vector *y, const gpc_kernel *k)
{
    int st = gpc_class_indices(y, w->vb->C, w->cls);
    return st == GPC_OK ? gpc_class_kernels_set(w->kernels, k, gpc_method_vb_ops.title) : st;
}

static int vb_evidence(void *ws, const gpc_kernel *k, const gsl_matrix *X, const gsl_vector *y,
                       double *log_evidence, double *grad)
{
    vb_ws *w = ws;
    gpc_vb *vb = w->vb;
    int laplace = w->evidence == GPC_EVIDENCE_LAPLACE;
    int st = take(w, y, k);
    if (st == GPC_OK && laplace && !w->mpl) { /* stated in the workspace; checked again for
                                               * callers that did not check it */
        st = gpc_method_check_bytes(gpc_mpl_workspace(vb->n, vb->C), "the multinomial probit "
                                    "Laplace evidence", vb->n, vb->C);
        if (st == GPC_OK)
            w->mpl = gpc_mpl_alloc(vb->n, vb->C, vb->per_class);
    }
    if (st != GPC_OK ||
        (st = gpc_vb_evidence(vb, w->kernels->k, X, w->cls, &w->bound, laplace ? NULL : grad)) !=
            GPC_OK)
        return st;
    if (!laplace) {
        *log_evidence = w->bound;
        return GPC_OK;
    }
    if ((st = gpc_mpl_fit(w->mpl, vb->K, w->cls, vb->m, vb->v, log_evidence)) != GPC_OK)
        return st;
    return grad ? gpc_mpl_gradient(w->mpl, w->kernels->k, X, vb->K, w->cls, vb->nparams, grad,
                                   vb->Bg)
                : GPC_OK;
}

static void vb_forget(void *ws) { ((vb_ws *)ws)->vb->has_fit = 0; }

static void vb_state_get(const void *ws, gsl_matrix *state)
{
    const gpc_vb *vb = ((const vb_ws *)ws)->vb;
    for (size_t c = 0; c < vb->C; c++)
        for (size_t i = 0; i < vb->n; i++)
            gsl_matrix_set(state, i, c, gsl_vector_get(vb->ybar_from, c * vb->n + i));
}

static int vb_state_set(void *ws, const gpc_kernel *k, const gsl_matrix *X, const gsl_vector *y,
                        const gsl_matrix *state)
{
    vb_ws *w = ws;
    gpc_vb *vb = w->vb;
    int st = take(w, y, k);
    if (st != GPC_OK)
        return st;
    for (size_t c = 0; c < vb->nK; c++)
        gpc_kernel_matrix(w->kernels->k[c], X, vb->K[c]);
    gsl_vector *z = gpc_vector_alloc(vb->C * vb->n);
    for (size_t c = 0; c < vb->C; c++)
        for (size_t i = 0; i < vb->n; i++)
            gsl_vector_set(z, c * vb->n + i, gsl_matrix_get(state, i, c));
    st = gpc_vb_set_state(vb, w->cls, z);
    gsl_vector_free(z);
    return st;
}

static int vb_predict(const void *ws, const gpc_kernel *k, const gsl_matrix *X,
                      const gsl_matrix *Xs, gsl_matrix *mean, gsl_matrix *cov)
{
    const vb_ws *w = ws;
    (void)k; /* the fit's (or state_set's) base kernels hold k's hyperparameters */
    gpc_class_cross *cc = gpc_class_cross_alloc(w->kernels, X, Xs);
    gpc_vb_predict(w->vb, (const gsl_matrix *const *)cc->Ks, (const gsl_vector *const *)cc->kss,
                   mean, cov);
    gpc_class_cross_free(cc);
    return GPC_OK;
}

static int vb_loo(const void *ws, const gsl_vector *y, gsl_matrix *mean, gsl_matrix *cov)
{
    (void)ws;
    (void)y;
    (void)mean;
    (void)cov;
    return gpc_fail(GPC_EUSAGE, "variational Bayes has no leave-one-out estimate from "
                    "cavities; use --loo=exact (one refit per training case)");
}

/* P(argmax(f + e) = k) with f ~ N(mean, diag(cov)) and e ~ N(0, I): the
 * latent variances add to the unit ones; plug-in takes f at its mean. */
static int vb_prob(void *ws, gpc_lik lik, double eps, const gsl_matrix *mean,
                   const gsl_matrix *cov, int plugin, gsl_matrix *p)
{
    gpc_vb *vb = ((vb_ws *)ws)->vb;
    size_t C = mean->size2, m = mean->size1;
    (void)lik;
    (void)eps;
    /* each case by one thread, with that thread's rule and scratch */
    int threads = m * C >= VB_PARALLEL_MIN_WORK ? gpc_vb_threads(vb) : 1;
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
        int t = omp_get_thread_num();
        double *nu2 = vb->thread_scratch + (size_t)t * 2 * C;
#pragma omp for schedule(dynamic, 8)
        for (size_t i = 0; i < m; i++) {
            for (size_t c = 0; c < C; c++)
                nu2[c] = 1.0 + (plugin ? 0.0 : gsl_matrix_get(cov, i, c * C + c));
            gpc_mprobit_probs(vb->thread_rule[t], gsl_matrix_const_ptr(mean, i, 0), nu2,
                              gsl_matrix_ptr(p, i, 0));
        }
    }
    return GPC_OK;
}

static void vb_report(const void *ws, double log_evidence)
{
    const vb_ws *w = ws;
    const gpc_vb *vb = w->vb;
    char laplace[128] = "";
    if (w->evidence == GPC_EVIDENCE_LAPLACE && w->mpl)
        snprintf(laplace, sizeof laplace, "Laplace evidence %.10g (%d factor%s of the %zu x %zu "
                 "system), ", log_evidence, w->mpl->newton_steps,
                 w->mpl->newton_steps == 1 ? "" : "s", vb->C * vb->n, vb->C * vb->n);
    if (vb->newton_steps > 0)
        gpc_info(1, "%svariational bound %.10g, %d Newton step%s (%d conjugate-gradient "
                 "iterations), %d sweep%s (%zu classes)", laplace, w->bound, vb->newton_steps,
                 vb->newton_steps == 1 ? "" : "s", vb->cg_iterations, vb->sweeps,
                 vb->sweeps == 1 ? "" : "s", vb->C);
    else
        gpc_info(1, "%svariational bound %.10g, %d sweep%s (%zu classes)", laplace, w->bound,
                 vb->sweeps, vb->sweeps == 1 ? "" : "s", vb->C);
}

const gpc_method_ops gpc_method_vb_ops = {
    .name = "vb",
    .title = "variational Bayes (multinomial probit)",
    .state_columns = "ybar",
    .state_width = 1,
    .latent = 0,
    .has_evidence = 1,
    .label_noise = 0,
    .default_lik = "mprobit",
    .check_lik = vb_check_lik,
    .alloc = vb_alloc,
    .workspace = vb_workspace,
    .free = vb_free,
    .set = vb_set,
    .evidence = vb_evidence,
    .forget = vb_forget,
    .state_get = vb_state_get,
    .state_set = vb_state_set,
    .predict = vb_predict,
    .loo = vb_loo,
    .prob = vb_prob,
    .report = vb_report,
};
