/* Naive mean field's operations for the method table.  Its likelihood is
 * the label-noise family, held beside the solver's workspace. */
#include "methods/method.h"

#include <stdlib.h>

#include <gsl/gsl_math.h>

#include "base/alloc.h"
#include "base/err.h"
#include "methods/ep.h"
#include "methods/meanfield.h"

typedef struct {
    gpc_meanfield *mf;
    gpc_ep_label_noise noise; /* the moments' context */
} naive_ws;

static int naive_check_lik(gpc_lik lik)
{
    if (lik != GPC_LIK_PROBIT && lik != GPC_LIK_STEP)
        return gpc_fail(GPC_EUSAGE, "naive mean field takes the probit or the step likelihood; "
                        "add -l probit or -l step");
    return GPC_OK;
}

static void *naive_alloc(size_t n, size_t C, const gpc_kernel *k, int gradient, gpc_lik lik)
{
    naive_ws *w = gpc_calloc(1, sizeof *w);
    (void)C;
    (void)k;
    (void)gradient; /* no evidence, so no gradient */
    w->mf = gpc_meanfield_alloc(n);
    w->noise.eps = 0.0;
    w->noise.sigma = lik == GPC_LIK_STEP ? 0.0 : 1.0;
    w->mf->moments = gpc_ep_label_noise_moments;
    w->mf->moments_ctx = &w->noise;
    return w;
}

static size_t naive_workspace(size_t n, size_t C, const gpc_kernel *k, int gradient)
{
    (void)C;
    (void)k;
    (void)gradient; /* no evidence, so no gradient */
    return gpc_meanfield_workspace(n);
}

static void naive_free(void *ws)
{
    naive_ws *w = ws;
    if (!w)
        return;
    gpc_meanfield_free(w->mf);
    free(w);
}

static int naive_set(void *ws, gpc_method_setting key, double value)
{
    naive_ws *w = ws;
    switch (key) {
    case GPC_SET_DAMPING:
        w->mf->damping = value;
        return GPC_OK;
    case GPC_SET_LABEL_NOISE:
        if (!(value >= 0.0 && value < 0.5))
            return gpc_fail(GPC_EUSAGE, "label noise %g is not in [0, 1/2)", value);
        w->noise.eps = value;
        return GPC_OK;
    default:
        break;
    }
    return GPC_METHOD_NO_SETTING;
}

/* Solved at the given hyperparameters, but there is no evidence: NaN. */
static int naive_evidence(void *ws, const gpc_kernel *k, const gsl_matrix *X,
                          const gsl_vector *y, double *log_evidence, double *grad)
{
    naive_ws *w = ws;
    if (grad)
        return gpc_fail(GPC_EUSAGE, "naive mean field gives no evidence to optimise; "
                        "keep the hyperparameters as given (-O none) or use -M ep");
    gpc_kernel_matrix(k, X, w->mf->K);
    *log_evidence = GSL_NAN;
    return gpc_meanfield_run(w->mf, y);
}

/* Each solve starts afresh: nothing to forget. */
static void naive_forget(void *ws) { (void)ws; }

static void naive_state_get(const void *ws, gsl_matrix *state)
{
    gsl_matrix_set_col(state, 0, ((const naive_ws *)ws)->mf->x);
}

static int naive_state_set(void *ws, const gpc_kernel *k, const gsl_matrix *X,
                           const gsl_vector *y, const gsl_matrix *state)
{
    naive_ws *w = ws;
    (void)y;
    gsl_vector_const_view x = gsl_matrix_const_column(state, 0);
    gpc_kernel_matrix(k, X, w->mf->K);
    return gpc_meanfield_set_x(w->mf, &x.vector);
}

static void naive_latent(const void *ws, gsl_matrix *Ks, const gsl_vector *kss,
                         gsl_vector *mean, gsl_vector *var)
{
    gpc_meanfield_predict(((const naive_ws *)ws)->mf, Ks, kss, mean, var);
}

static int naive_predict(const void *ws, const gpc_kernel *k, const gsl_matrix *X,
                         const gsl_matrix *Xs, gsl_matrix *mean, gsl_matrix *cov)
{
    return gpc_method_predict_binary(naive_latent, ws, k, X, Xs, mean, cov);
}

/* By linear response of the solution to removing each case (meanfield.h):
 * the solution's own cavities ignore how the other cases respond. */
static int naive_loo(const void *ws, const gsl_vector *y, gsl_matrix *mean, gsl_matrix *var)
{
    const gpc_meanfield *mf = ((const naive_ws *)ws)->mf;
    gsl_vector_view mv = gsl_matrix_column(mean, 0), vv = gsl_matrix_column(var, 0);
    return gpc_meanfield_loo(mf, y, &mv.vector, &vv.vector);
}

static void naive_report(const void *ws, double log_evidence)
{
    (void)log_evidence;
    const gpc_meanfield *mf = ((const naive_ws *)ws)->mf;
    if (mf->solver == GPC_MF_SWEEPS)
        gpc_info(1, "naive mean field solved in %d sweeps", mf->sweeps);
    else if (mf->fallbacks == 0)
        gpc_info(1, "naive mean field solved in %d Newton steps", mf->newton_steps);
    else
        gpc_info(1, "naive mean field solved in %d Newton steps and %d sweeps (%d fallbacks)",
                 mf->newton_steps, mf->sweeps, mf->fallbacks);
}

const gpc_method_ops gpc_method_naive_ops = {
    .name = "naive",
    .title = "naive mean field",
    .state_columns = "x",
    .state_width = 1,
    .latent = 1,
    .has_evidence = 0,
    .label_noise = 1,
    .default_lik = "probit",
    .check_lik = naive_check_lik,
    .alloc = naive_alloc,
    .workspace = naive_workspace,
    .free = naive_free,
    .set = naive_set,
    .evidence = naive_evidence,
    .forget = naive_forget,
    .state_get = naive_state_get,
    .state_set = naive_state_set,
    .predict = naive_predict,
    .loo = naive_loo,
    .prob = gpc_method_binary_prob,
    .report = naive_report,
};
