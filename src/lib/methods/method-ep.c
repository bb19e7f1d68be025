/* Expectation propagation's operations for the method table. */
#include "methods/method.h"

#include "base/err.h"
#include "methods/ep.h"

static int ep_check_lik(gpc_lik lik)
{
    if (lik != GPC_LIK_PROBIT && lik != GPC_LIK_STEP)
        return gpc_fail(GPC_EUSAGE, "EP takes the probit or the step likelihood; "
                        "add -l probit or -l step (or -l mprobit: nested EP, any number of "
                        "classes)");
    return GPC_OK;
}

static void *ep_alloc(size_t n, size_t C, const gpc_kernel *k, int gradient, gpc_lik lik)
{
    (void)C;
    gpc_ep *e = gpc_ep_alloc(n, gradient ? gpc_kernel_nparams(k) : 0);
    gpc_ep_set_likelihood(e, lik, 0.0);
    return e;
}

static size_t ep_workspace(size_t n, size_t C, const gpc_kernel *k, int gradient)
{
    (void)C;
    return gpc_ep_workspace(n, gradient ? gpc_kernel_nparams(k) : 0);
}

static void ep_free(void *ws) { gpc_ep_free(ws); }

static int ep_set(void *ws, gpc_method_setting key, double value)
{
    gpc_ep *e = ws;
    switch (key) {
    case GPC_SET_DAMPING:
        e->damping = value;
        return GPC_OK;
    case GPC_SET_TOL:
        e->tol = value;
        return GPC_OK;
    case GPC_SET_LABEL_NOISE: /* the likelihood is kept in the noise's sigma */
        return gpc_ep_set_likelihood(e, e->noise.sigma == 0.0 ? GPC_LIK_STEP : GPC_LIK_PROBIT,
                                     value);
    default:
        break;
    }
    return GPC_METHOD_NO_SETTING;
}

static int ep_evidence(void *ws, const gpc_kernel *k, const gsl_matrix *X, const gsl_vector *y,
                       double *log_evidence, double *grad)
{
    return gpc_ep_evidence(ws, k, X, y, log_evidence, grad);
}

/* EP always starts from empty sites: nothing to forget. */
static void ep_forget(void *ws) { (void)ws; }

static void ep_state_get(const void *ws, gsl_matrix *state)
{
    const gpc_ep *e = ws;
    gsl_matrix_set_col(state, 0, e->tau);
    gsl_matrix_set_col(state, 1, e->nu);
}

static int ep_state_set(void *ws, const gpc_kernel *k, const gsl_matrix *X, const gsl_vector *y,
                        const gsl_matrix *state)
{
    gpc_ep *e = ws;
    (void)y;
    gsl_vector_const_view tau = gsl_matrix_const_column(state, 0);
    gsl_vector_const_view nu = gsl_matrix_const_column(state, 1);
    gpc_kernel_matrix(k, X, e->K);
    return gpc_ep_set_sites(e, &tau.vector, &nu.vector);
}

static void ep_latent(const void *ws, gsl_matrix *Ks, const gsl_vector *kss, gsl_vector *mean,
                      gsl_vector *var)
{
    gpc_ep_predict(ws, Ks, kss, mean, var);
}

static int ep_predict(const void *ws, const gpc_kernel *k, const gsl_matrix *X,
                      const gsl_matrix *Xs, gsl_matrix *mean, gsl_matrix *cov)
{
    return gpc_method_predict_binary(ep_latent, ws, k, X, Xs, mean, cov);
}

static int ep_loo(const void *ws, const gsl_vector *y, gsl_matrix *mean, gsl_matrix *var)
{
    const gpc_ep *e = ws;
    (void)y;
    return gpc_method_loo_sites(ep_latent, ws, e->K, e->tau, e->nu, mean, var);
}

static void ep_report(const void *ws, double log_evidence)
{
    gpc_info(1, "log evidence %.10g, %d EP sweeps", log_evidence, ((const gpc_ep *)ws)->sweeps);
}

const gpc_method_ops gpc_method_ep_ops = {
    .name = "ep",
    .title = "EP",
    .state_columns = "tau nu",
    .state_width = 2,
    .latent = 1,
    .has_evidence = 1,
    .label_noise = 1,
    .default_lik = "probit",
    .check_lik = ep_check_lik,
    .alloc = ep_alloc,
    .workspace = ep_workspace,
    .free = ep_free,
    .set = ep_set,
    .evidence = ep_evidence,
    .forget = ep_forget,
    .state_get = ep_state_get,
    .state_set = ep_state_set,
    .predict = ep_predict,
    .loo = ep_loo,
    .prob = gpc_method_binary_prob,
    .report = ep_report,
};
