/* Multiclass Laplace with the softmax likelihood (softmax.h): its operations
 * for the method table.  Labels are class indices 0..C-1 in y; the state is
 * the mode, one column f_c per class.  The latent functions share the
 * kernel, or with a per-class kernel (":per-class=C") each class has its own
 * hyperparameters, evaluated through one base kernel per class. */
#include "methods/method.h"

#include <math.h>
#include <stdlib.h>

#include "base/alloc.h"
#include "base/err.h"
#include "kernels/class-kernels.h"
#include "methods/softmax.h"

typedef struct {
    gpc_softmax *sm;
    gpc_class_kernels *kernels;
    size_t *cls;            /* the labels as indices */
    gpc_softmax_rule *rule; /* E[softmax] over the latent Gaussian, built when first asked */
} softmax_ws;

static int softmax_check_lik(gpc_lik lik)
{
    if (lik != GPC_LIK_SOFTMAX)
        return gpc_fail(GPC_EUSAGE, "multiclass Laplace takes the softmax likelihood (-l softmax)");
    return GPC_OK;
}

static void *softmax_alloc(size_t n, size_t C, const gpc_kernel *k, int gradient, gpc_lik lik)
{
    softmax_ws *w = gpc_calloc(1, sizeof *w);
    (void)lik;
    (void)gradient; /* the gradient's scratch is allocated by the first gradient */
    w->kernels = gpc_class_kernels_alloc(k, C);
    w->sm = gpc_softmax_alloc(n, C, w->kernels->nparams, w->kernels->nK > 1);
    w->cls = gpc_mallocarray(n ? n : 1, sizeof *w->cls);
    return w;
}

static size_t softmax_workspace(size_t n, size_t C, const gpc_kernel *k, int gradient)
{
    int per_class;
    size_t p = gpc_class_kernels_nparams(k, &per_class);
    /* the labels as indices beside the Laplace workspace */
    return gpc_size_add(gpc_softmax_workspace(n, C, p, per_class, gradient),
                        gpc_size_mul(n, sizeof(size_t)));
}

static void softmax_free(void *ws)
{
    softmax_ws *w = ws;
    if (!w)
        return;
    gpc_class_kernels_free(w->kernels);
    gpc_softmax_free(w->sm);
    gpc_softmax_rule_free(w->rule);
    free(w->cls);
    free(w);
}

/* Newton's method has no damping, tolerance or label noise to set. */
static int softmax_set(void *ws, gpc_method_setting key, double value)
{
    (void)ws;
    (void)key;
    (void)value;
    return GPC_METHOD_NO_SETTING;
}

/* The labels as indices and the base kernels at k's hyperparameters. */
static int take(softmax_ws *w, const gsl_vector *y, const gpc_kernel *k)
{
    int st = gpc_class_indices(y, w->sm->C, w->cls);
    return st == GPC_OK ? gpc_class_kernels_set(w->kernels, k, gpc_method_softmax_ops.title)
                        : st;
}

static int softmax_evidence(void *ws, const gpc_kernel *k, const gsl_matrix *X,
                            const gsl_vector *y, double *log_evidence, double *grad)
{
    softmax_ws *w = ws;
    int st = take(w, y, k);
    if (st != GPC_OK)
        return st;
    return gpc_softmax_evidence(w->sm, w->kernels->k, X, w->cls, log_evidence, grad);
}

static void softmax_forget(void *ws) { ((softmax_ws *)ws)->sm->has_mode = 0; }

static void softmax_state_get(const void *ws, gsl_matrix *state)
{
    const gpc_softmax *sm = ((const softmax_ws *)ws)->sm;
    for (size_t c = 0; c < sm->C; c++)
        for (size_t i = 0; i < sm->n; i++)
            gsl_matrix_set(state, i, c, gsl_vector_get(sm->f, c * sm->n + i));
}

static int softmax_state_set(void *ws, const gpc_kernel *k, const gsl_matrix *X,
                             const gsl_vector *y, const gsl_matrix *state)
{
    softmax_ws *w = ws;
    gpc_softmax *sm = w->sm;
    int st = take(w, y, k);
    if (st != GPC_OK)
        return st;
    for (size_t c = 0; c < sm->nK; c++)
        gpc_kernel_matrix(w->kernels->k[c], X, sm->K[c]);
    gsl_vector *f = gpc_vector_alloc(sm->C * sm->n);
    for (size_t c = 0; c < sm->C; c++)
        for (size_t i = 0; i < sm->n; i++)
            gsl_vector_set(f, c * sm->n + i, gsl_matrix_get(state, i, c));
    st = gpc_softmax_set_mode(sm, w->cls, f);
    gsl_vector_free(f);
    return st;
}

static int softmax_predict(const void *ws, const gpc_kernel *k, const gsl_matrix *X,
                           const gsl_matrix *Xs, gsl_matrix *mean, gsl_matrix *cov)
{
    const softmax_ws *w = ws;
    (void)k; /* the fit's (or state_set's) base kernels hold k's hyperparameters */
    gpc_class_cross *cc = gpc_class_cross_alloc(w->kernels, X, Xs);
    int st = gpc_softmax_predict(w->sm, (const gsl_matrix *const *)cc->Ks,
                                 (const gsl_vector *const *)cc->kss, mean, cov, NULL, NULL);
    gpc_class_cross_free(cc);
    return st;
}

static int softmax_loo(const void *ws, const gsl_vector *y, gsl_matrix *mean, gsl_matrix *cov)
{
    (void)ws;
    (void)y;
    (void)mean;
    (void)cov;
    return gpc_fail(GPC_EUSAGE, "multiclass Laplace has no leave-one-out estimate from its "
                    "cavities; use --loo=exact (one refit per training case)");
}

static int softmax_prob(void *ws, gpc_lik lik, double eps, const gsl_matrix *mean,
                        const gsl_matrix *cov, int plugin, gsl_matrix *p)
{
    softmax_ws *w = ws;
    size_t C = mean->size2;
    int st = GPC_OK;
    (void)lik;
    (void)eps;
    if (!plugin && !w->rule)
        w->rule = gpc_softmax_rule_alloc(C);
    for (size_t i = 0; i < mean->size1 && st == GPC_OK; i++) {
        const double *mu = gsl_matrix_const_ptr(mean, i, 0);
        double *pi = gsl_matrix_ptr(p, i, 0);
        if (plugin)
            gpc_softmax_plugin(C, mu, pi);
        else
            st = gpc_softmax_expect(w->rule, mu, gsl_matrix_const_ptr(cov, i, 0), pi);
    }
    return st;
}

static void softmax_report(const void *ws, double log_evidence)
{
    const gpc_softmax *sm = ((const softmax_ws *)ws)->sm;
    gpc_info(1, "log evidence %.10g, %d Newton iteration%s at the mode (%zu classes)",
             log_evidence, sm->iterations, sm->iterations == 1 ? "" : "s", sm->C);
}

const gpc_method_ops gpc_method_softmax_ops = {
    .name = "laplace",
    .title = "multiclass Laplace",
    .state_columns = "f",
    .state_width = 1,
    .latent = 0,
    .has_evidence = 1,
    .label_noise = 0,
    .default_lik = "softmax",
    .wide_averages = 1,
    .check_lik = softmax_check_lik,
    .alloc = softmax_alloc,
    .workspace = softmax_workspace,
    .free = softmax_free,
    .set = softmax_set,
    .evidence = softmax_evidence,
    .forget = softmax_forget,
    .state_get = softmax_state_get,
    .state_set = softmax_state_set,
    .predict = softmax_predict,
    .loo = softmax_loo,
    .prob = softmax_prob,
    .report = softmax_report,
};
