/* Multiclass Laplace with the softmax likelihood (softmax.h): its operations
 * for the method table.  Labels are class indices 0..C-1 in y; the state is
 * the mode, one column f_c per class.  The latent functions share the
 * kernel, or with a per-class kernel (":per-class=C") each class has its own
 * hyperparameters, evaluated through one base kernel per class. */
#include "method.h"

#include <math.h>
#include <stdlib.h>

#include "alloc.h"
#include "err.h"
#include "softmax.h"

typedef struct {
    gpc_softmax *sm;
    gpc_kernel **kernels;   /* nK base kernels (one per class, or one shared) */
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
    int per_class = gpc_kernel_copies(k) > 1;
    (void)lik;
    (void)gradient; /* the gradient's scratch is allocated by the first gradient */
    w->sm = gpc_softmax_alloc(n, C, gpc_kernel_nparams(k) / gpc_kernel_copies(k), per_class);
    w->kernels = gpc_calloc(w->sm->nK, sizeof *w->kernels);
    for (size_t c = 0; c < w->sm->nK; c++)
        w->kernels[c] = gpc_kernel_base(k);
    w->cls = gpc_mallocarray(n ? n : 1, sizeof *w->cls);
    return w;
}

static void softmax_free(void *ws)
{
    softmax_ws *w = ws;
    if (!w)
        return;
    for (size_t c = 0; c < w->sm->nK; c++)
        gpc_kernel_free(w->kernels[c]);
    free(w->kernels);
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

/* y as class indices; anything else is a caller's error. */
static int take_labels(softmax_ws *w, const gsl_vector *y)
{
    for (size_t i = 0; i < y->size; i++) {
        double c = gsl_vector_get(y, i);
        if (!(c >= 0.0 && c < (double)w->sm->C && c == floor(c)))
            return gpc_fail(GPC_EUSAGE, "label %g of case %zu is not a class index below %zu",
                            c, i + 1, w->sm->C);
        w->cls[i] = (size_t)c;
    }
    return GPC_OK;
}

/* The base kernels at k's hyperparameters: class c's copy for each. */
static int take_kernel(softmax_ws *w, const gpc_kernel *k)
{
    size_t copies = gpc_kernel_copies(k), p = gpc_kernel_nparams(k) / copies;
    if (copies != w->sm->nK || (copies > 1 && copies != w->sm->C) || p != w->sm->nparams)
        return gpc_fail(GPC_EUSAGE, "kernel '%s' has %zu sets of %zu hyperparameters; the "
                        "softmax workspace expects %zu of %zu", gpc_kernel_spec(k), copies, p,
                        w->sm->nK, w->sm->nparams);
    for (size_t c = 0; c < copies; c++)
        gpc_kernel_set_params(w->kernels[c], gpc_kernel_params(k) + c * p);
    return GPC_OK;
}

static int softmax_evidence(void *ws, const gpc_kernel *k, const gsl_matrix *X,
                            const gsl_vector *y, double *log_evidence, double *grad)
{
    softmax_ws *w = ws;
    int st = take_labels(w, y);
    if (st == GPC_OK)
        st = take_kernel(w, k);
    if (st != GPC_OK)
        return st;
    return gpc_softmax_evidence(w->sm, w->kernels, X, w->cls, log_evidence, grad);
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
    int st = take_labels(w, y);
    if (st == GPC_OK)
        st = take_kernel(w, k);
    if (st != GPC_OK)
        return st;
    for (size_t c = 0; c < sm->nK; c++)
        gpc_kernel_matrix(w->kernels[c], X, sm->K[c]);
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
    size_t m = Xs->size1, nK = w->sm->nK;
    /* the fit's (or state_set's) base kernels hold k's hyperparameters */
    (void)k;
    gsl_matrix **Ks = gpc_calloc(nK, sizeof *Ks);
    gsl_vector **kss = gpc_calloc(nK, sizeof *kss);
    for (size_t c = 0; c < nK; c++) {
        Ks[c] = gpc_matrix_alloc(X->size1, m);
        kss[c] = gpc_vector_alloc(m);
        gpc_kernel_cross(w->kernels[c], X, Xs, Ks[c]);
        gpc_kernel_diag(w->kernels[c], Xs, kss[c]);
    }
    int st = gpc_softmax_predict(w->sm, (const gsl_matrix *const *)Ks,
                                 (const gsl_vector *const *)kss, mean, cov, NULL, NULL);
    for (size_t c = 0; c < nK; c++) {
        gsl_matrix_free(Ks[c]);
        gsl_vector_free(kss[c]);
    }
    free(Ks);
    free(kss);
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
    gpc_info(1, "log evidence %.10g, %d Newton iterations at the mode (%zu classes)",
             log_evidence, sm->iterations, sm->C);
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
    .check_lik = softmax_check_lik,
    .alloc = softmax_alloc,
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
