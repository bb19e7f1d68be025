/* The sparse variational method's operations for the method table, with
 * the data in memory (full batch): the evidence is the bound at q's
 * optimum for the hyperparameters given and the inducing inputs fixed
 * (chosen by k-means++ at the first fit), its gradient the bound's partial
 * derivative there (sparse/svgp).  The fitted state belongs to the
 * inducing inputs, not to the training cases: per inducing input and
 * latent function, m_c's entry and S_c's row. */
#include "methods/method.h"

#include <stdlib.h>

#include "base/alloc.h"
#include "base/err.h"
#include "sparse/inducing.h"
#include "sparse/svgp.h"

#define DEFAULT_INDUCING 200
#define DEFAULT_TOL 1e-10
#define MAX_STEPS 1000

typedef struct {
    size_t n, latent, m_want;
    unsigned long seed;
    double tol;
    gpc_lik lik;
    gpc_svgp *s;   /* NULL until the first fit or state_set */
    gpc_svgp_fit_result last;
} svgp_ws;

static int svgp_check_lik(gpc_lik lik)
{
    if (lik != GPC_LIK_LOGISTIC && lik != GPC_LIK_PROBIT)
        return gpc_fail(GPC_EUSAGE, "the sparse variational method takes the logistic or the "
                        "probit likelihood");
    return GPC_OK;
}

static size_t inducing_count(size_t n, size_t want) { return want < n ? want : n; }

static void *svgp_alloc(size_t n, size_t C, const gpc_kernel *k, int gradient, gpc_lik lik)
{
    (void)C;
    (void)k;
    (void)gradient;
    svgp_ws *w = gpc_calloc(1, sizeof *w);
    w->n = n;
    w->latent = 1;
    w->m_want = DEFAULT_INDUCING;
    w->tol = DEFAULT_TOL;
    w->lik = lik;
    return w;
}

static size_t svgp_workspace(size_t n, size_t C, const gpc_kernel *k, int gradient)
{
    (void)C;
    (void)gradient;
    return gpc_svgp_bytes(1, inducing_count(n, DEFAULT_INDUCING), gpc_kernel_dim(k),
                          gpc_kernel_nparams(k));
}

static void svgp_free(void *ws)
{
    svgp_ws *w = ws;
    gpc_svgp_free(w->s);
    free(w);
}

static int svgp_set(void *ws, gpc_method_setting key, double value)
{
    svgp_ws *w = ws;
    switch (key) {
    case GPC_SET_TOL: w->tol = value; return GPC_OK;
    case GPC_SET_INDUCING: w->m_want = (size_t)value; return GPC_OK;
    case GPC_SET_SEED: w->seed = (unsigned long)value; return GPC_OK;
    default: return GPC_METHOD_NO_SETTING;
    }
}

/* The inducing inputs, chosen from the rows of X at the first fit. */
static int choose_inducing(svgp_ws *w, const gsl_matrix *X)
{
    size_t m = inducing_count(X->size1, w->m_want);
    gpc_svgp *s = gpc_svgp_alloc(w->latent, m, X->size2);
    int st = gpc_inducing_kmeanspp(X, m, w->seed, s->Z);
    if (st != GPC_OK) {
        gpc_svgp_free(s);
        return st;
    }
    w->s = s;
    return GPC_OK;
}

static int svgp_evidence(void *ws, const gpc_kernel *k, const gsl_matrix *X, const gsl_vector *y,
                         double *log_evidence, double *grad)
{
    svgp_ws *w = ws;
    int st = w->s ? GPC_OK : choose_inducing(w, X);
    if (st == GPC_OK)
        st = gpc_svgp_factor(w->s, k);
    gpc_svgp_lik lik = {gpc_shard_binary_lik, &w->lik};
    gpc_svgp_fit_opts o = {w->tol, MAX_STEPS};
    if (st == GPC_OK)
        st = gpc_svgp_fit_q(w->s, k, X, y->data, lik, &o, &w->last);
    if (st == GPC_OK && grad)
        st = gpc_svgp_gradient(w->s, k, X, y->data, lik, log_evidence, grad, NULL);
    else if (st == GPC_OK)
        *log_evidence = w->last.bound;
    return st;
}

static void svgp_forget(void *ws)
{
    svgp_ws *w = ws;
    if (w->s)
        gpc_svgp_reset_q(w->s);
}

static const gsl_matrix *svgp_inducing_inputs(const void *ws)
{
    const svgp_ws *w = ws;
    return w->s ? w->s->Z : NULL;
}

static void svgp_state_get(const void *ws, gsl_matrix *state)
{
    gpc_svgp_state_get(((const svgp_ws *)ws)->s, state);
}

/* X holds the inducing inputs (the model's rows), y is unused. */
static int svgp_state_set(void *ws, const gpc_kernel *k, const gsl_matrix *X,
                          const gsl_vector *y, const gsl_matrix *state)
{
    (void)y;
    svgp_ws *w = ws;
    size_t m = X->size1;
    gpc_svgp_free(w->s);
    w->s = gpc_svgp_alloc(w->latent, m, X->size2);
    gsl_matrix_memcpy(w->s->Z, X);
    gpc_svgp_state_set(w->s, state);
    gsl_matrix *work = gpc_matrix_alloc(m, m);
    int st = GPC_OK;
    for (size_t c = 0; c < w->latent && st == GPC_OK; c++)
        if (gpc_inducing_spd_inverse(w->s->S[c], work, NULL) != 0)
            st = gpc_fail(GPC_EINPUT, "the variational covariance of latent function %zu is "
                          "not positive definite: the model file was changed after it was "
                          "written; fit the model again", c + 1);
    gsl_matrix_free(work);
    return st == GPC_OK ? gpc_svgp_factor(w->s, k) : st;
}

static int svgp_predict(const void *ws, const gpc_kernel *k, const gsl_matrix *X,
                        const gsl_matrix *Xs, gsl_matrix *mean, gsl_matrix *cov)
{
    (void)X;
    gpc_svgp_predict(((const svgp_ws *)ws)->s, k, Xs, mean, cov);
    return GPC_OK;
}

static int svgp_loo(const void *ws, const gsl_vector *y, gsl_matrix *mean, gsl_matrix *cov)
{
    (void)ws;
    (void)y;
    (void)mean;
    (void)cov;
    return gpc_fail(GPC_EUSAGE, "the sparse variational method keeps nothing per training "
                    "case to leave one out from: estimate its error by cross-validation "
                    "(gpc-cv)");
}

static void svgp_report(const void *ws, double log_evidence)
{
    const svgp_ws *w = ws;
    gpc_info(1, "bound %.10g on the log evidence, %zu inducing inputs, %d natural step%s%s",
             log_evidence, w->s ? w->s->m : 0, w->last.steps, w->last.steps == 1 ? "" : "s",
             w->last.converged ? "" : " (not converged)");
    if (w->s && w->s->jitter > 0.0)
        gpc_info(1, "jitter %.3g added to the inducing inputs' kernel matrix", w->s->jitter);
}

const gpc_method_ops gpc_method_svgp_ops = {
    .name = "svgp",
    .title = "the sparse variational method",
    .state_columns = "m S",
    .state_width = 0,
    .inducing = 1,
    .latent = 1,
    .has_evidence = 1,
    .label_noise = 0,
    .default_lik = "logistic",
    .check_lik = svgp_check_lik,
    .alloc = svgp_alloc,
    .workspace = svgp_workspace,
    .free = svgp_free,
    .set = svgp_set,
    .evidence = svgp_evidence,
    .forget = svgp_forget,
    .state_get = svgp_state_get,
    .state_set = svgp_state_set,
    .inducing_inputs = svgp_inducing_inputs,
    .predict = svgp_predict,
    .loo = svgp_loo,
    .prob = gpc_method_binary_prob,
    .report = svgp_report,
};
