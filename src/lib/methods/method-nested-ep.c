/* Nested EP for the multinomial probit likelihood (nested-ep.h): its
 * operations for the method table, as "ep" with -l mprobit.  Labels are
 * class indices 0..C-1 in y; the state is each case's inner sites, alpha_c
 * and beta_c for every class c (0 for the case's own class).  Shared or
 * per-class kernels as in method-softmax.c. */
#include "methods/method.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/err.h"
#include "kernels/class-kernels.h"
#include "methods/nested-ep.h"

typedef struct {
    gpc_nep *nep;
    gpc_class_kernels *kernels;
    size_t *cls;
} nep_ws;

static int nep_check_lik(gpc_lik lik)
{
    if (lik != GPC_LIK_MPROBIT)
        return gpc_fail(GPC_EUSAGE, "nested EP takes the multinomial probit likelihood "
                        "(-l mprobit)");
    return GPC_OK;
}

static void *nep_alloc(size_t n, size_t C, const gpc_kernel *k, int gradient, gpc_lik lik)
{
    nep_ws *w = gpc_calloc(1, sizeof *w);
    (void)lik;
    (void)gradient;
    w->kernels = gpc_class_kernels_alloc(k, C);
    w->nep = gpc_nep_alloc(n, C, w->kernels->nparams, w->kernels->nK > 1);
    w->cls = gpc_mallocarray(n ? n : 1, sizeof *w->cls);
    return w;
}

static size_t nep_workspace(size_t n, size_t C, const gpc_kernel *k, int gradient)
{
    int per_class;
    size_t p = gpc_class_kernels_nparams(k, &per_class);
    (void)gradient;
    return gpc_size_add(gpc_nep_workspace(n, C, p, per_class), gpc_size_mul(n, sizeof(size_t)));
}

static void nep_free(void *ws)
{
    nep_ws *w = ws;
    if (!w)
        return;
    gpc_class_kernels_free(w->kernels);
    gpc_nep_free(w->nep);
    free(w->cls);
    free(w);
}

static int nep_set(void *ws, gpc_method_setting key, double value)
{
    gpc_nep *e = ((nep_ws *)ws)->nep;
    switch (key) {
    case GPC_SET_DAMPING:
        e->damping = value;
        return GPC_OK;
    case GPC_SET_TOL:
        e->tol = value;
        return GPC_OK;
    default:
        break;
    }
    return GPC_METHOD_NO_SETTING;
}

static int take(nep_ws *w, const gsl_vector *y, const gpc_kernel *k)
{
    int st = gpc_class_indices(y, w->nep->C, w->cls);
    return st == GPC_OK ? gpc_class_kernels_set(w->kernels, k, gpc_method_nested_ep_ops.title)
                        : st;
}

static int nep_evidence(void *ws, const gpc_kernel *k, const gsl_matrix *X, const gsl_vector *y,
                        double *log_evidence, double *grad)
{
    nep_ws *w = ws;
    int st = take(w, y, k);
    if (st != GPC_OK)
        return st;
    return gpc_nep_evidence(w->nep, w->kernels->k, X, w->cls, log_evidence, grad);
}

/* The next run starts from zero sites, not the last run's. */
static void nep_forget(void *ws) { ((nep_ws *)ws)->nep->warm = 0; }

static void nep_state_get(const void *ws, gsl_matrix *state)
{
    const gpc_nep *e = ((const nep_ws *)ws)->nep;
    for (size_t i = 0; i < e->n; i++)
        for (size_t c = 0; c < e->C; c++) {
            gsl_matrix_set(state, i, 2 * c, e->alpha[i * e->C + c]);
            gsl_matrix_set(state, i, 2 * c + 1, e->beta[i * e->C + c]);
        }
}

static int nep_state_set(void *ws, const gpc_kernel *k, const gsl_matrix *X,
                         const gsl_vector *y, const gsl_matrix *state)
{
    nep_ws *w = ws;
    gpc_nep *e = w->nep;
    int st = take(w, y, k);
    if (st != GPC_OK)
        return st;
    for (size_t c = 0; c < e->nK; c++)
        gpc_kernel_matrix(w->kernels->k[c], X, e->K[c]);
    double *alpha = gpc_mallocarray(e->n * e->C + 1, sizeof(double)),
           *beta = gpc_mallocarray(e->n * e->C + 1, sizeof(double));
    for (size_t i = 0; i < e->n; i++)
        for (size_t c = 0; c < e->C; c++) {
            alpha[i * e->C + c] = gsl_matrix_get(state, i, 2 * c);
            beta[i * e->C + c] = gsl_matrix_get(state, i, 2 * c + 1);
        }
    st = gpc_nep_set_sites(e, w->cls, alpha, beta);
    free(alpha);
    free(beta);
    return st;
}

static int nep_predict(const void *ws, const gpc_kernel *k, const gsl_matrix *X,
                       const gsl_matrix *Xs, gsl_matrix *mean, gsl_matrix *cov)
{
    const nep_ws *w = ws;
    (void)k; /* the fit's (or state_set's) base kernels hold k's hyperparameters */
    gpc_class_cross *cc = gpc_class_cross_alloc(w->kernels, X, Xs);
    gpc_nep_predict(w->nep, (const gsl_matrix *const *)cc->Ks,
                    (const gsl_vector *const *)cc->kss, mean, cov);
    gpc_class_cross_free(cc);
    return GPC_OK;
}

/* The cavities of the last fit are the leave-one-out moments. */
static int nep_loo(const void *ws, const gsl_vector *y, gsl_matrix *mean, gsl_matrix *cov)
{
    const gpc_nep *e = ((const nep_ws *)ws)->nep;
    (void)y;
    if (!e->has_cavities)
        return gpc_fail(GPC_EUSAGE, "nested EP's leave-one-out moments come from a fit, not "
                        "from a model file; refit, or use --loo=exact");
    for (size_t i = 0; i < e->n; i++)
        for (size_t c = 0; c < e->C; c++) {
            gsl_matrix_set(mean, i, c, e->cav_mean[i * e->C + c]);
            for (size_t a = 0; a < e->C; a++)
                gsl_matrix_set(cov, i, c * e->C + a, e->cav_cov[(i * e->C + c) * e->C + a]);
        }
    return GPC_OK;
}

static int nep_prob(void *ws, gpc_lik lik, double eps, const gsl_matrix *mean,
                    const gsl_matrix *cov, int plugin, gsl_matrix *p)
{
    (void)lik;
    (void)eps;
    return gpc_nep_probs(((nep_ws *)ws)->nep, mean, cov, plugin, p);
}

static void nep_report(const void *ws, double log_evidence)
{
    const gpc_nep *e = ((const nep_ws *)ws)->nep;
    gpc_info(1, "log evidence %.10g, %d nested EP sweeps (%lu inner sweeps, %zu classes)",
             log_evidence, e->sweeps, e->inner_sweeps, e->C);
}

const gpc_method_ops gpc_method_nested_ep_ops = {
    .name = "ep",
    .title = "nested EP (multinomial probit)",
    .state_columns = "alpha beta",
    .state_width = 2,
    .latent = 0,
    .has_evidence = 1,
    .label_noise = 0,
    .default_lik = "mprobit",
    .check_lik = nep_check_lik,
    .alloc = nep_alloc,
    .workspace = nep_workspace,
    .free = nep_free,
    .set = nep_set,
    .evidence = nep_evidence,
    .forget = nep_forget,
    .state_get = nep_state_get,
    .state_set = nep_state_set,
    .predict = nep_predict,
    .loo = nep_loo,
    .prob = nep_prob,
    .report = nep_report,
};
