/* The Laplace approximation's operations for the method table. */
#include "methods/method.h"

#include <stdlib.h>

#include "base/alloc.h"
#include "base/err.h"
#include "methods/laplace.h"

static int laplace_check_lik(gpc_lik lik)
{
    if (lik == GPC_LIK_STEP)
        return gpc_fail(GPC_EUSAGE, "the Laplace approximation needs a smooth likelihood; "
                        "use -M ep with -l step");
    if (lik != GPC_LIK_LOGISTIC && lik != GPC_LIK_PROBIT)
        return gpc_fail(GPC_EUSAGE, "the binary Laplace approximation takes the logistic or "
                        "the probit likelihood%s", lik == GPC_LIK_MPROBIT ? " (the multinomial "
                        "probit is nested EP, -M ep, or variational Bayes, -M vb)" : "");
    return GPC_OK;
}

static void *laplace_alloc(size_t n, size_t C, const gpc_kernel *k, int gradient, gpc_lik lik)
{
    (void)C;
    return gpc_laplace_alloc(n, gradient ? gpc_kernel_nparams(k) : 0, lik);
}

static size_t laplace_workspace(size_t n, size_t C, const gpc_kernel *k, int gradient)
{
    (void)C;
    return gpc_laplace_workspace(n, gradient ? gpc_kernel_nparams(k) : 0);
}

static void laplace_free(void *ws) { gpc_laplace_free(ws); }

/* Newton's method has no damping, tolerance or label noise to set. */
static int laplace_set(void *ws, gpc_method_setting key, double value)
{
    (void)ws;
    (void)key;
    (void)value;
    return GPC_METHOD_NO_SETTING;
}

static int laplace_evidence(void *ws, const gpc_kernel *k, const gsl_matrix *X,
                            const gsl_vector *y, double *log_evidence, double *grad)
{
    return gpc_laplace_evidence(ws, k, X, y, log_evidence, grad);
}

static void laplace_forget(void *ws) { ((gpc_laplace *)ws)->has_mode = 0; }

static void laplace_state_get(const void *ws, gsl_matrix *state)
{
    gsl_matrix_set_col(state, 0, ((const gpc_laplace *)ws)->f);
}

static int laplace_state_set(void *ws, const gpc_kernel *k, const gsl_matrix *X,
                             const gsl_vector *y, const gsl_matrix *state)
{
    gpc_laplace *w = ws;
    gsl_vector_const_view f = gsl_matrix_const_column(state, 0);
    int status = gpc_laplace_kernel(w, k, X, y);
    return status != GPC_OK ? status : gpc_laplace_set_mode(w, y, &f.vector);
}

static void laplace_latent(const void *ws, gsl_matrix *Ks, const gsl_vector *kss,
                           gsl_vector *mean, gsl_vector *var)
{
    gpc_laplace_predict(ws, Ks, kss, mean, var);
}

static int laplace_predict(const void *ws, const gpc_kernel *k, const gsl_matrix *X,
                           const gsl_matrix *Xs, gsl_matrix *mean, gsl_matrix *cov)
{
    return gpc_method_predict_binary(laplace_latent, ws, k, X, Xs, mean, cov);
}

/* The Laplace approximation's sites are the curvature W_i and
 * W_i f_i + d log p / df at the mode. */
static int laplace_loo(const void *ws, const gsl_vector *y, gsl_matrix *mean, gsl_matrix *var)
{
    const gpc_laplace *w = ws;
    size_t n = w->n;
    if (w->grid)
        return gpc_fail(GPC_EUSAGE, "leave-one-out from the Laplace approximation's sites "
                        "needs the whole kernel matrix on one process; run it without a "
                        "process grid");
    gsl_vector *tau = gpc_vector_alloc(n), *nu = gpc_vector_alloc(n);
    for (size_t i = 0; i < n; i++) {
        double d1, d2, f = gsl_vector_get(w->f, i);
        gpc_lik_logp(w->lik, gsl_vector_get(y, i), f, &d1, &d2, NULL);
        gsl_vector_set(tau, i, -d2);
        gsl_vector_set(nu, i, -d2 * f + d1);
    }
    int st = gpc_method_loo_sites(laplace_latent, ws, w->K, tau, nu, mean, var);
    gsl_vector_free(tau);
    gsl_vector_free(nu);
    return st;
}

static void laplace_report(const void *ws, double log_evidence)
{
    int it = ((const gpc_laplace *)ws)->iterations;
    gpc_info(1, "log evidence %.10g, %d Newton iteration%s at the mode", log_evidence, it,
             it == 1 ? "" : "s");
}

const gpc_method_ops gpc_method_laplace_ops = {
    .name = "laplace",
    .title = "the Laplace approximation",
    .state_columns = "f",
    .state_width = 1,
    .latent = 1,
    .has_evidence = 1,
    .label_noise = 0,
    .default_lik = "logistic",
    .check_lik = laplace_check_lik,
    .alloc = laplace_alloc,
    .workspace = laplace_workspace,
    .free = laplace_free,
    .set = laplace_set,
    .evidence = laplace_evidence,
    .forget = laplace_forget,
    .state_get = laplace_state_get,
    .state_set = laplace_state_set,
    .predict = laplace_predict,
    .loo = laplace_loo,
    .prob = gpc_method_binary_prob,
    .report = laplace_report,
};
