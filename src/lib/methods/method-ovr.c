/* One-vs-rest: C binary classifiers of any binary method, class c against
 * the others, as a multiclass method of the table.  For comparison with
 * the joint softmax model (and with scikit-learn's default): each class's
 * latent function is fitted alone, and the class probabilities are the C
 * binary probabilities normalised to sum to one.
 *
 * The classifiers share the kernel's hyperparameters, or with a per-class
 * kernel (":per-class=C") each has its own; the log evidence is the sum of
 * the C binary ones (the evidence of C independent binary models), so
 * maximising it with per-class hyperparameters fits each classifier as if
 * alone.  The state is the binary method's, class by class; the latent
 * covariance of a case is diagonal (the functions are independent). */
#include "methods/method.h"

#include <stdlib.h>

#include "base/alloc.h"
#include "base/err.h"
#include "kernels/class-kernels.h"

typedef struct {
    const gpc_method_ops *bin; /* the binary method */
    size_t n, C;
    void **ws;                 /* C binary workspaces */
    gpc_class_kernels *kernels; /* the kernel of each classifier: C, or 1 shared */
    size_t *cls;               /* the labels as indices */
    gsl_vector **y;            /* C label vectors: +1 for class c, -1 for the rest */
    gsl_matrix *state;         /* n x state_width scratch */
    double *grad;              /* one classifier's gradient */
} ovr_ws;

static void *ovr_alloc(const gpc_method_ops *bin, size_t n, size_t C, const gpc_kernel *k,
                       int gradient, gpc_lik lik)
{
    ovr_ws *w = gpc_calloc(1, sizeof *w);
    w->bin = bin;
    w->n = n;
    w->C = C;
    w->kernels = gpc_class_kernels_alloc(k, C);
    w->cls = gpc_mallocarray(n ? n : 1, sizeof *w->cls);
    w->ws = gpc_calloc(C, sizeof *w->ws);
    w->y = gpc_calloc(C, sizeof *w->y);
    for (size_t c = 0; c < C; c++) {
        w->ws[c] = bin->alloc(n, 2, w->kernels->k[0], gradient, lik);
        w->y[c] = gpc_vector_alloc(n ? n : 1);
    }
    w->state = gpc_matrix_alloc(n ? n : 1, bin->state_width);
    w->grad = gpc_mallocarray(w->kernels->nparams + 1, sizeof *w->grad);
    return w;
}

/* C binary workspaces for the base kernel (k's copy for one class), and
 * the label vectors, state and indices beside them. */
static size_t ovr_workspace(const gpc_method_ops *bin, size_t n, size_t C, const gpc_kernel *k,
                            int gradient)
{
    gpc_kernel *base = gpc_kernel_base(k);
    size_t bytes = gpc_size_mul(C, bin->workspace(n, 2, base, gradient));
    gpc_kernel_free(base);
    bytes = gpc_size_add(bytes, gpc_doubles_bytes(n, gpc_size_add(C, bin->state_width)));
    return gpc_size_add(bytes, gpc_size_mul(n, sizeof(size_t)));
}

static void ovr_free(void *ws)
{
    ovr_ws *w = ws;
    if (!w)
        return;
    for (size_t c = 0; c < w->C; c++) {
        w->bin->free(w->ws[c]);
        gsl_vector_free(w->y[c]);
    }
    gpc_class_kernels_free(w->kernels);
    free(w->cls);
    free(w->ws);
    free(w->y);
    gsl_matrix_free(w->state);
    free(w->grad);
    free(w);
}

/* A setting goes to every classifier. */
static int ovr_set(void *ws, gpc_method_setting key, double value)
{
    ovr_ws *w = ws;
    int st = GPC_OK;
    for (size_t c = 0; c < w->C && st == GPC_OK; c++)
        st = w->bin->set(w->ws[c], key, value);
    return st;
}

/* Class c against the rest, from class indices, and the classifiers'
 * kernels at k's hyperparameters. */
static int take(ovr_ws *w, const gsl_vector *y, const gpc_kernel *k)
{
    int st = gpc_class_indices(y, w->C, w->cls);
    if (st != GPC_OK)
        return st;
    for (size_t i = 0; i < w->n; i++)
        for (size_t c = 0; c < w->C; c++)
            gsl_vector_set(w->y[c], i, w->cls[i] == c ? 1.0 : -1.0);
    return gpc_class_kernels_set(w->kernels, k, "one-vs-rest");
}

static int ovr_evidence(void *ws, const gpc_kernel *k, const gsl_matrix *X, const gsl_vector *y,
                        double *log_evidence, double *grad)
{
    ovr_ws *w = ws;
    size_t p = w->kernels->nparams;
    int st = take(w, y, k);
    if (grad)
        for (size_t j = 0; j < p * w->kernels->nK; j++)
            grad[j] = 0.0;
    *log_evidence = 0.0;
    for (size_t c = 0; c < w->C && st == GPC_OK; c++) {
        double z;
        st = w->bin->evidence(w->ws[c], gpc_class_kernel(w->kernels, c), X, w->y[c], &z, grad ? w->grad : NULL);
        if (st != GPC_OK) {
            st = gpc_fail(st, "one-vs-rest, class %zu against the rest: %s", c + 1,
                          gpc_errmsg());
            break;
        }
        *log_evidence += z;
        double *g = grad ? grad + (w->kernels->nK > 1 ? c * p : 0) : NULL;
        for (size_t j = 0; g && j < p; j++)
            g[j] += w->grad[j];
    }
    return st;
}

static void ovr_forget(void *ws)
{
    ovr_ws *w = ws;
    for (size_t c = 0; c < w->C; c++)
        w->bin->forget(w->ws[c]);
}

/* Classifier c's state in columns c * width .. (c + 1) * width - 1. */
static void ovr_state_get(const void *ws, gsl_matrix *state)
{
    const ovr_ws *w = ws;
    size_t width = w->bin->state_width;
    for (size_t c = 0; c < w->C; c++) {
        w->bin->state_get(w->ws[c], w->state);
        gsl_matrix_view v = gsl_matrix_submatrix(state, 0, c * width, w->n, width);
        gsl_matrix_memcpy(&v.matrix, w->state);
    }
}

static int ovr_state_set(void *ws, const gpc_kernel *k, const gsl_matrix *X, const gsl_vector *y,
                         const gsl_matrix *state)
{
    ovr_ws *w = ws;
    size_t width = w->bin->state_width;
    int st = take(w, y, k);
    for (size_t c = 0; c < w->C && st == GPC_OK; c++) {
        gsl_matrix_const_view v = gsl_matrix_const_submatrix(state, 0, c * width, w->n, width);
        st = w->bin->state_set(w->ws[c], gpc_class_kernel(w->kernels, c), X, w->y[c], &v.matrix);
    }
    return st;
}

/* The C binary latent moments, a diagonal covariance per case. */
static int ovr_moments(const ovr_ws *w, gsl_matrix *mean, gsl_matrix *cov, size_t m,
                       int (*one)(const ovr_ws *, size_t, gsl_matrix *, gsl_matrix *, void *),
                       void *ctx)
{
    gsl_matrix *mu = gpc_matrix_alloc(m ? m : 1, 1), *v = gpc_matrix_alloc(m ? m : 1, 1);
    int st = GPC_OK;
    gsl_matrix_set_zero(cov);
    for (size_t c = 0; c < w->C && st == GPC_OK; c++) {
        st = one(w, c, mu, v, ctx);
        for (size_t i = 0; i < m && st == GPC_OK; i++) {
            gsl_matrix_set(mean, i, c, gsl_matrix_get(mu, i, 0));
            gsl_matrix_set(cov, i, c * w->C + c, gsl_matrix_get(v, i, 0));
        }
    }
    gsl_matrix_free(mu);
    gsl_matrix_free(v);
    return st;
}

typedef struct {
    const gsl_matrix *X, *Xs;
} test_inputs;

static int predict_one(const ovr_ws *w, size_t c, gsl_matrix *mu, gsl_matrix *v, void *ctx)
{
    const test_inputs *t = ctx;
    return w->bin->predict(w->ws[c], gpc_class_kernel(w->kernels, c), t->X, t->Xs, mu, v);
}

static int ovr_predict(const void *ws, const gpc_kernel *k, const gsl_matrix *X,
                       const gsl_matrix *Xs, gsl_matrix *mean, gsl_matrix *cov)
{
    test_inputs t = {X, Xs};
    (void)k; /* the fit's (or state_set's) kernels hold k's hyperparameters */
    return ovr_moments(ws, mean, cov, Xs->size1, predict_one, &t);
}

static int loo_one(const ovr_ws *w, size_t c, gsl_matrix *mu, gsl_matrix *v, void *ctx)
{
    (void)ctx;
    return w->bin->loo(w->ws[c], w->y[c], mu, v);
}

static int ovr_loo(const void *ws, const gsl_vector *y, gsl_matrix *mean, gsl_matrix *cov)
{
    const ovr_ws *w = ws;
    (void)y; /* the labels of the fit or state_set */
    return ovr_moments(w, mean, cov, w->n, loo_one, NULL);
}

/* Each classifier's p(class c | x), normalised over the classes. */
static int ovr_prob(void *ws, gpc_lik lik, double eps, const gsl_matrix *mean,
                    const gsl_matrix *cov, int plugin, gsl_matrix *p)
{
    ovr_ws *w = ws;
    size_t m = mean->size1, C = w->C;
    gsl_matrix *mu = gpc_matrix_alloc(m ? m : 1, 1), *v = gpc_matrix_alloc(m ? m : 1, 1),
               *pc = gpc_matrix_alloc(m ? m : 1, 1);
    int st = GPC_OK;
    for (size_t c = 0; c < C && st == GPC_OK; c++) {
        for (size_t i = 0; i < m; i++) {
            gsl_matrix_set(mu, i, 0, gsl_matrix_get(mean, i, c));
            gsl_matrix_set(v, i, 0, gsl_matrix_get(cov, i, c * C + c));
        }
        st = w->bin->prob(w->ws[c], lik, eps, mu, v, plugin, pc);
        for (size_t i = 0; i < m; i++)
            gsl_matrix_set(p, i, c, gsl_matrix_get(pc, i, 0));
    }
    for (size_t i = 0; i < m && st == GPC_OK; i++) {
        gsl_vector_view row = gsl_matrix_row(p, i);
        double s = 0.0;
        for (size_t c = 0; c < C; c++)
            s += gsl_vector_get(&row.vector, c);
        if (s > 0.0)
            gsl_vector_scale(&row.vector, 1.0 / s);
        else /* every classifier says "not mine" with certainty: no preference */
            gsl_vector_set_all(&row.vector, 1.0 / (double)C);
    }
    gsl_matrix_free(mu);
    gsl_matrix_free(v);
    gsl_matrix_free(pc);
    return st;
}

static void ovr_report(const void *ws, double log_evidence)
{
    const ovr_ws *w = ws;
    if (w->bin->has_evidence)
        gpc_info(1, "log evidence %.10g, the sum over %zu one-vs-rest fits of %s", log_evidence,
                 w->C, w->bin->title);
    else
        gpc_info(1, "%zu one-vs-rest fits of %s", w->C, w->bin->title);
}

/* One table entry per binary method: the same operations around it, and
 * its properties (constants here; test_method checks they are the binary
 * method's). */
#define OVR_METHOD(BIN, NAME, TITLE, COLUMNS, WIDTH, EVIDENCE, NOISE, LIK)                   \
    static void *ovr_alloc_##BIN(size_t n, size_t C, const gpc_kernel *k, int gradient,      \
                                 gpc_lik lik)                                                \
    {                                                                                        \
        return ovr_alloc(&gpc_method_##BIN##_ops, n, C, k, gradient, lik);                   \
    }                                                                                        \
    static size_t ovr_workspace_##BIN(size_t n, size_t C, const gpc_kernel *k, int gradient) \
    {                                                                                        \
        return ovr_workspace(&gpc_method_##BIN##_ops, n, C, k, gradient);                    \
    }                                                                                        \
    static int ovr_check_lik_##BIN(gpc_lik lik)                                              \
    {                                                                                        \
        return gpc_method_##BIN##_ops.check_lik(lik);                                        \
    }                                                                                        \
    const gpc_method_ops gpc_method_##BIN##_ovr_ops = {                                      \
        .name = NAME,                                                                        \
        .title = TITLE,                                                                      \
        .state_columns = COLUMNS,                                                            \
        .state_width = WIDTH,                                                                \
        .latent = 0,                                                                         \
        .has_evidence = EVIDENCE,                                                            \
        .label_noise = NOISE,                                                                \
        .default_lik = LIK,                                                                  \
        .check_lik = ovr_check_lik_##BIN,                                                    \
        .alloc = ovr_alloc_##BIN,                                                            \
        .workspace = ovr_workspace_##BIN,                                                    \
        .free = ovr_free,                                                                    \
        .set = ovr_set,                                                                      \
        .evidence = ovr_evidence,                                                            \
        .forget = ovr_forget,                                                                \
        .state_get = ovr_state_get,                                                          \
        .state_set = ovr_state_set,                                                          \
        .predict = ovr_predict,                                                              \
        .loo = ovr_loo,                                                                      \
        .prob = ovr_prob,                                                                    \
        .report = ovr_report,                                                                \
    }

OVR_METHOD(laplace, "laplace-ovr", "one-vs-rest Laplace", "f", 1, 1, 0, "logistic");
OVR_METHOD(ep, "ep-ovr", "one-vs-rest EP", "tau nu", 2, 1, 1, "probit");
OVR_METHOD(naive, "naive-ovr", "one-vs-rest naive mean field", "x", 1, 0, 1, "probit");
