#include "evidence.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_math.h>

#include "alloc.h"
#include "err.h"

int gpc_method_parse(const char *name, gpc_lik lik, gpc_method *method)
{
    if (strcmp(name, "laplace") == 0)
        *method = GPC_METHOD_LAPLACE;
    else if (strcmp(name, "ep") == 0 || strcmp(name, "tap") == 0)
        *method = GPC_METHOD_EP; /* adaptive TAP has EP's fixed point */
    else if (strcmp(name, "naive") == 0)
        *method = GPC_METHOD_NAIVE;
    else
        return gpc_fail(GPC_EUSAGE, "unknown method '%s' (use laplace, ep, tap or naive)", name);
    if (*method != GPC_METHOD_LAPLACE && lik == GPC_LIK_LOGISTIC)
        return gpc_fail(GPC_EUSAGE, "%s takes the probit or the step likelihood; "
                        "add -l probit or -l step",
                        *method == GPC_METHOD_EP ? "EP" : "naive mean field");
    if (*method == GPC_METHOD_LAPLACE && lik == GPC_LIK_STEP)
        return gpc_fail(GPC_EUSAGE, "the Laplace approximation needs a smooth likelihood; "
                        "use -M ep with -l step");
    return GPC_OK;
}

const char *gpc_method_name(gpc_method method)
{
    return method == GPC_METHOD_EP ? "ep" : method == GPC_METHOD_NAIVE ? "naive" : "laplace";
}

gpc_evidence *gpc_evidence_alloc(const gpc_kernel *k, const gsl_matrix *X, const gsl_vector *y,
                                 gpc_lik lik, gpc_method method)
{
    gpc_evidence *e = gpc_calloc(1, sizeof *e);
    e->kernel = gpc_kernel_clone(k);
    e->X = X;
    e->y = y;
    e->method = method;
    e->lik = lik;
    if (method == GPC_METHOD_EP) {
        e->ep = gpc_ep_alloc(X->size1, gpc_kernel_nparams(k));
        gpc_ep_set_likelihood(e->ep, lik, 0.0);
    } else if (method == GPC_METHOD_NAIVE) {
        e->naive = gpc_meanfield_alloc(X->size1);
        gpc_evidence_set_label_noise(e, 0.0);
    } else
        e->laplace = gpc_laplace_alloc(X->size1, gpc_kernel_nparams(k), lik);
    return e;
}

int gpc_evidence_set_label_noise(gpc_evidence *e, double eps)
{
    if (e->naive) {
        if (!(eps >= 0.0 && eps < 0.5))
            return gpc_fail(GPC_EUSAGE, "label noise %g is not in [0, 1/2)", eps);
        e->noise.eps = eps;
        e->noise.sigma = e->lik == GPC_LIK_STEP ? 0.0 : 1.0;
        e->naive->moments = gpc_ep_label_noise_moments;
        e->naive->moments_ctx = &e->noise;
        return GPC_OK;
    }
    if (!e->ep)
        return eps == 0.0 ? GPC_OK
                          : gpc_fail(GPC_EUSAGE, "label noise needs -M ep, tap or naive with "
                                     "-l probit or -l step");
    return gpc_ep_set_likelihood(e->ep, e->lik, eps);
}

int gpc_evidence_set_tol(gpc_evidence *e, double tol)
{
    if (!(tol > 0.0 && tol < 1.0))
        return gpc_fail(GPC_EUSAGE, "--tol must be in (0, 1), e.g. 1e-9");
    if (!e->ep)
        return gpc_fail(GPC_EUSAGE, "--tol applies to -M ep or tap");
    e->ep->tol = tol;
    return GPC_OK;
}

void gpc_evidence_free(gpc_evidence *e)
{
    if (!e)
        return;
    gpc_kernel_free(e->kernel);
    gpc_laplace_free(e->laplace);
    gpc_ep_free(e->ep);
    gpc_meanfield_free(e->naive);
    free(e);
}

/* EP always starts from empty sites, so only Laplace has state to forget. */
void gpc_evidence_forget(gpc_evidence *e)
{
    if (e->laplace)
        e->laplace->has_mode = 0;
}

double gpc_log_prior_normal(size_t p, const double *theta, double mean, double sd, double *grad)
{
    double s = 0.0, var = sd * sd;
    for (size_t j = 0; j < p; j++) {
        double d = theta[j] - mean;
        s += -0.5 * d * d / var - log(sd) - 0.5 * log(2.0 * M_PI);
        if (grad)
            grad[j] -= d / var;
    }
    return s;
}

int gpc_posterior_eval(void *ctx, const double *theta, double *U, double *grad, double *aux)
{
    gpc_posterior *post = ctx;
    size_t p = gpc_kernel_nparams(post->evidence->kernel);
    int st = gpc_evidence_eval(post->evidence, theta, aux, grad);
    if (st != GPC_OK)
        return st;
    *U = -(*aux + gpc_log_prior_normal(p, theta, post->prior_mean, post->prior_sd, grad));
    for (size_t j = 0; j < p; j++)
        grad[j] = -grad[j];
    return GPC_OK;
}

void gpc_posterior_restart(void *ctx) { gpc_evidence_forget(((gpc_posterior *)ctx)->evidence); }

int gpc_evidence_eval(void *ctx, const double *theta, double *value, double *grad)
{
    gpc_evidence *e = ctx;
    gpc_kernel_set_params(e->kernel, theta);
    if (e->ep)
        return gpc_ep_evidence(e->ep, e->kernel, e->X, e->y, value, grad);
    if (e->naive) {
        if (grad)
            return gpc_fail(GPC_EUSAGE, "naive mean field gives no evidence to optimise; "
                            "keep the hyperparameters as given (-O none) or use -M ep");
        gpc_kernel_matrix(e->kernel, e->X, e->naive->K);
        *value = GSL_NAN;
        return gpc_meanfield_run(e->naive, e->y);
    }
    return gpc_laplace_evidence(e->laplace, e->kernel, e->X, e->y, value, grad);
}
