#include "hyper/evidence.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_math.h>

#include "base/alloc.h"
#include "base/err.h"
#include "hyper/prior.h"

gpc_evidence *gpc_evidence_alloc(const gpc_kernel *k, const gsl_matrix *X, const gsl_vector *y,
                                 size_t C, gpc_lik lik, gpc_method method)
{
    gpc_evidence *e = gpc_calloc(1, sizeof *e);
    e->kernel = gpc_kernel_clone(k);
    e->X = X;
    e->y = y;
    e->method = method;
    e->lik = lik;
    e->ops = gpc_method_get(method);
    e->ws = e->ops->alloc(X->size1, C, k, 1, lik);
    return e;
}

int gpc_evidence_set_label_noise(gpc_evidence *e, double eps)
{
    int st = e->ops->set(e->ws, GPC_SET_LABEL_NOISE, eps);
    if (st != GPC_METHOD_NO_SETTING)
        return st;
    return eps == 0.0 ? GPC_OK
                      : gpc_fail(GPC_EUSAGE, "label noise needs -M ep, tap or naive with "
                                 "-l probit or -l step");
}

int gpc_evidence_set_tol(gpc_evidence *e, double tol)
{
    if (!(tol > 0.0 && tol < 1.0))
        return gpc_fail(GPC_EUSAGE, "--tol must be in (0, 1), e.g. 1e-9");
    int st = e->ops->set(e->ws, GPC_SET_TOL, tol);
    if (st == GPC_METHOD_NO_SETTING)
        return gpc_fail(GPC_EUSAGE, "--tol applies to -M ep, tap, vb or svgp");
    return st;
}

int gpc_evidence_set_damping(gpc_evidence *e, double damping)
{
    if (!(damping > 0.0 && damping <= 1.0))
        return gpc_fail(GPC_EUSAGE, "--damping must be in (0, 1]");
    int st = e->ops->set(e->ws, GPC_SET_DAMPING, damping);
    if (st != GPC_METHOD_NO_SETTING)
        return st;
    return damping == 1.0 ? GPC_OK
                          : gpc_fail(GPC_EUSAGE, "--damping applies to -M ep, tap or naive");
}

int gpc_evidence_set_objective(gpc_evidence *e, const char *name)
{
    gpc_evidence_kind obj;
    if (strcmp(name, "laplace") == 0)
        obj = GPC_EVIDENCE_LAPLACE;
    else if (strcmp(name, "bound") == 0)
        obj = GPC_EVIDENCE_BOUND;
    else
        return gpc_fail(GPC_EUSAGE, "--objective: '%s' is not laplace or bound", name);
    int st = e->ops->set(e->ws, GPC_SET_EVIDENCE, (double)obj);
    if (st == GPC_METHOD_NO_SETTING)
        return gpc_fail(GPC_EUSAGE, "--objective applies to -M vb");
    return st;
}

int gpc_evidence_set_inducing(gpc_evidence *e, size_t m, unsigned long seed)
{
    if (!e->ops->inducing)
        return m ? gpc_fail(GPC_EUSAGE, "--inducing applies to -M svgp") : GPC_OK;
    if (m)
        e->ops->set(e->ws, GPC_SET_INDUCING, (double)m);
    return e->ops->set(e->ws, GPC_SET_SEED, (double)seed);
}

int gpc_evidence_set_inducing_inputs(gpc_evidence *e, const gsl_matrix *Z)
{
    if (!e->ops->inducing)
        return gpc_fail(GPC_EUSAGE, "--inducing-inputs applies to -M svgp");
    if (Z->size2 != e->X->size2)
        return gpc_fail(GPC_EINPUT, "the inducing inputs have %zu columns, the inputs %zu",
                        Z->size2, e->X->size2);
    e->ops->set_inducing_inputs(e->ws, Z);
    return GPC_OK;
}

const gsl_matrix *gpc_evidence_inducing_inputs(const gpc_evidence *e)
{
    return e->ops->inducing ? e->ops->inducing_inputs(e->ws) : NULL;
}

int gpc_evidence_set_move_inducing(gpc_evidence *e, int move)
{
    if (move && !e->ops->evidence_inducing)
        return gpc_fail(GPC_EUSAGE, "%s has no inducing inputs to move", e->ops->title);
    e->move_inducing = move;
    return GPC_OK;
}

void *gpc_evidence_workspace(const gpc_evidence *e, const gpc_method_ops *ops)
{
    return e->ops == ops ? e->ws : NULL;
}

void gpc_evidence_state(const gpc_evidence *e, gsl_matrix *state)
{
    e->ops->state_get(e->ws, state);
}

void gpc_evidence_report(const gpc_evidence *e, double log_evidence)
{
    e->ops->report(e->ws, log_evidence);
}

void gpc_evidence_free(gpc_evidence *e)
{
    if (!e)
        return;
    gpc_kernel_free(e->kernel);
    e->ops->free(e->ws);
    free(e);
}

void gpc_evidence_forget(gpc_evidence *e) { e->ops->forget(e->ws); }

int gpc_posterior_eval(void *ctx, const double *theta, double *U, double *grad, double *aux)
{
    gpc_posterior *post = ctx;
    size_t p = gpc_kernel_nparams(post->evidence->kernel);
    int st = gpc_evidence_eval(post->evidence, theta, aux, grad);
    if (st != GPC_OK)
        return st;
    *U = -(*aux + gpc_log_prior(post->evidence->kernel, p, theta, post->prior_mean,
                                post->prior_sd, grad));
    for (size_t j = 0; j < p; j++)
        grad[j] = -grad[j];
    return GPC_OK;
}

void gpc_posterior_restart(void *ctx) { gpc_evidence_forget(((gpc_posterior *)ctx)->evidence); }

int gpc_evidence_eval(void *ctx, const double *theta, double *value, double *grad)
{
    gpc_evidence *e = ctx;
    gpc_kernel_set_params(e->kernel, theta);
    return e->ops->evidence(e->ws, e->kernel, e->X, e->y, value, grad);
}

int gpc_evidence_eval_inducing(void *ctx, const double *x, double *value, double *grad)
{
    gpc_evidence *e = ctx;
    const gsl_matrix *Z = e->ops->inducing_inputs(e->ws);
    size_t p = gpc_kernel_nparams(e->kernel);
    gsl_matrix_const_view at = gsl_matrix_const_view_array(x + p, Z->size1, Z->size2);
    gpc_kernel_set_params(e->kernel, x);
    if (!grad)
        return e->ops->evidence_inducing(e->ws, e->kernel, e->X, e->y, &at.matrix, value,
                                         NULL, NULL);
    gsl_matrix_view dZ = gsl_matrix_view_array(grad + p, Z->size1, Z->size2);
    return e->ops->evidence_inducing(e->ws, e->kernel, e->X, e->y, &at.matrix, value, grad,
                                     &dZ.matrix);
}

/* Hyperparameters and inducing inputs together: a first evaluation at
 * theta has the method choose its inputs, whose coordinates then follow
 * theta's in the optimiser's vector (fixed: never). */
static int optimize_with_inducing(gpc_evidence *e, double *theta, const gpc_optimize_opts *o,
                                  gpc_optimize_result *r)
{
    double v;
    int st = gpc_evidence_eval(e, theta, &v, NULL);
    if (st != GPC_OK)
        return st;
    const gsl_matrix *Z = e->ops->inducing_inputs(e->ws);
    size_t p = gpc_kernel_nparams(e->kernel), nz = Z->size1 * Z->size2;
    double *x = gpc_mallocarray(p + nz, sizeof *x);
    unsigned char *fixed = gpc_calloc(p + nz, 1);
    memcpy(x, theta, p * sizeof *x);
    for (size_t i = 0; i < Z->size1; i++)
        memcpy(x + p + i * Z->size2, gsl_matrix_const_ptr(Z, i, 0), Z->size2 * sizeof *x);
    if (o->fixed)
        memcpy(fixed, o->fixed, p);
    gpc_optimize_opts oz = *o;
    oz.fixed = fixed;
    oz.inducing = nz;
    oz.inducing_dim = Z->size2;
    st = gpc_optimize(gpc_evidence_eval_inducing, e, p + nz, x, &oz, r);
    if (st == GPC_OK) /* the method back at the best point, not the last tried */
        st = gpc_evidence_eval_inducing(e, x, &v, NULL);
    if (st == GPC_OK)
        memcpy(theta, x, p * sizeof *x);
    free(x);
    free(fixed);
    return st;
}

int gpc_evidence_optimize(gpc_evidence *e, double *theta, const gpc_optimize_opts *o,
                          gpc_optimize_result *r)
{
    if (e->move_inducing)
        return optimize_with_inducing(e, theta, o, r);
    return gpc_optimize(gpc_evidence_eval, e, gpc_kernel_nparams(e->kernel), theta, o, r);
}
