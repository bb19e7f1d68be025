/* The sparse variational method's operations for the method table, with
 * the data in memory (full batch): the evidence is the bound at q's
 * optimum for the hyperparameters given and the inducing inputs fixed
 * (started by k-means at the first fit), its gradient the bound's partial
 * derivative there (sparse/svgp).  The fitted state belongs to the
 * inducing inputs, not to the training cases: per inducing input and
 * latent function, m_c's entry and S_c's row.  Two table entries: the
 * binary method (logistic, probit; one latent function) and the multiclass
 * one (the multinomial probit of Girolami & Rogers, or the softmax; one
 * latent function per class, with one kernel shared by the classes). */
#include "methods/method.h"

#include <stdlib.h>

#include <omp.h>

#include "base/alloc.h"
#include "base/err.h"
#include "base/parallel.h"
#include "liks/lse.h"
#include "liks/mprobit.h"
#include "methods/softmax.h"
#include "sparse/inducing.h"
#include "sparse/mprobit-lik.h"
#include "sparse/softmax-lik.h"
#include "sparse/svgp.h"

#define DEFAULT_INDUCING 200
/* cases x classes from which the predictions' integrals run on threads */
#define PROB_PARALLEL_MIN_WORK 1500
#define DEFAULT_TOL 1e-10
#define MAX_STEPS 1000

typedef struct {
    size_t n, latent, m_want;
    unsigned long seed;
    double tol;
    gpc_lik lik;
    gpc_shard_mprobit mp; /* the multinomial probit's integrals (multiclass) */
    gpc_mprobit_rule **thread_rule; /* one per thread, for the predictions */
    int nthreads;
    gpc_lse_work *lse;    /* the softmax's expectations (multiclass) */
    gpc_softmax_rule *softmax_rule; /* its predictions, made at the first */
    gpc_svgp *s;   /* NULL until the first fit or state_set */
    gpc_svgp_fit_result last;
} svgp_ws;

static int svgp_check_lik(gpc_lik lik)
{
    if (lik != GPC_LIK_LOGISTIC && lik != GPC_LIK_PROBIT)
        return gpc_fail(GPC_EUSAGE, "the sparse variational method takes the logistic or the "
                        "probit likelihood (and for several classes the multinomial probit "
                        "or the softmax)");
    return GPC_OK;
}

static size_t inducing_count(size_t n, size_t want) { return want < n ? want : n; }

static int svgp_mc_check_lik(gpc_lik lik)
{
    if (lik != GPC_LIK_MPROBIT && lik != GPC_LIK_SOFTMAX)
        return gpc_fail(GPC_EUSAGE, "the multiclass sparse variational method takes the "
                        "multinomial probit (-l mprobit) or the softmax likelihood");
    return GPC_OK;
}

/* The shard likelihood of w's likelihood. */
static gpc_svgp_lik shard_lik(svgp_ws *w)
{
    gpc_svgp_lik l = {gpc_shard_binary_lik, &w->lik};
    if (w->lik == GPC_LIK_MPROBIT) {
        l.fn = gpc_shard_mprobit_lik;
        l.ctx = &w->mp;
    } else if (w->lik == GPC_LIK_SOFTMAX) {
        l.fn = gpc_shard_softmax_lik;
        l.ctx = w->lse;
    }
    return l;
}

static void *svgp_alloc(size_t n, size_t C, const gpc_kernel *k, int gradient, gpc_lik lik)
{
    (void)k;
    (void)gradient;
    svgp_ws *w = gpc_calloc(1, sizeof *w);
    w->n = n;
    w->latent = lik == GPC_LIK_MPROBIT || lik == GPC_LIK_SOFTMAX ? C : 1;
    if (lik == GPC_LIK_SOFTMAX)
        w->lse = gpc_lse_work_alloc(C);
    if (lik == GPC_LIK_MPROBIT) {
        w->mp.rule = gpc_mprobit_rule_alloc(C);
        w->nthreads = gpc_parallel_max_threads();
        w->thread_rule = gpc_mallocarray((size_t)w->nthreads, sizeof *w->thread_rule);
        for (int t = 0; t < w->nthreads; t++)
            w->thread_rule[t] = gpc_mprobit_rule_alloc(C);
    }
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

static size_t svgp_mc_workspace(size_t n, size_t C, const gpc_kernel *k, int gradient)
{
    (void)gradient;
    return gpc_svgp_bytes(C, inducing_count(n, DEFAULT_INDUCING), gpc_kernel_dim(k),
                          gpc_kernel_nparams(k));
}

static void svgp_free(void *ws)
{
    svgp_ws *w = ws;
    gpc_svgp_free(w->s);
    gpc_mprobit_rule_free(w->mp.rule);
    for (int t = 0; t < w->nthreads; t++)
        gpc_mprobit_rule_free(w->thread_rule[t]);
    free(w->thread_rule);
    gpc_lse_work_free(w->lse);
    gpc_softmax_rule_free(w->softmax_rule);
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

/* The inducing inputs, started from the rows of X at the first fit. */
static int choose_inducing(svgp_ws *w, const gsl_matrix *X)
{
    size_t m = inducing_count(X->size1, w->m_want);
    gpc_svgp *s = gpc_svgp_alloc(w->latent, m, X->size2);
    int st = gpc_inducing_kmeans(X, m, w->seed, GPC_KMEANS_ITERATIONS, s->Z);
    if (st != GPC_OK) {
        gpc_svgp_free(s);
        return st;
    }
    w->s = s;
    return GPC_OK;
}

/* q to its optimum at k and the inputs w holds, from where it was; the
 * bound and, if grad is not NULL, its gradient (in Z too if dZ is not NULL). */
static int fit_q(svgp_ws *w, const gpc_kernel *k, const gsl_matrix *X, const gsl_vector *y,
                 double *log_evidence, double *grad, gsl_matrix *dZ)
{
    int st = gpc_svgp_factor(w->s, k);
    gpc_svgp_lik lik = shard_lik(w);
    gpc_svgp_fit_opts o = {w->tol, MAX_STEPS};
    if (st == GPC_OK)
        st = gpc_svgp_fit_q(w->s, k, X, y->data, lik, &o, &w->last);
    if (st == GPC_OK && grad)
        st = gpc_svgp_gradient(w->s, k, X, y->data, lik, log_evidence, grad, dZ);
    else if (st == GPC_OK)
        *log_evidence = w->last.bound;
    return st;
}

static int svgp_evidence(void *ws, const gpc_kernel *k, const gsl_matrix *X, const gsl_vector *y,
                         double *log_evidence, double *grad)
{
    svgp_ws *w = ws;
    int st = w->s ? GPC_OK : choose_inducing(w, X);
    return st == GPC_OK ? fit_q(w, k, X, y, log_evidence, grad, NULL) : st;
}

/* The inputs moved to Z keep q: in the whitened coordinates it is a good
 * start for inputs nearby, which is where an optimiser's next trial is. */
static int svgp_evidence_inducing(void *ws, const gpc_kernel *k, const gsl_matrix *X,
                                  const gsl_vector *y, const gsl_matrix *Z, double *log_evidence,
                                  double *grad, gsl_matrix *dZ)
{
    svgp_ws *w = ws;
    gsl_matrix_memcpy(w->s->Z, Z);
    return fit_q(w, k, X, y, log_evidence, grad, dZ);
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

static void svgp_set_inducing_inputs(void *ws, const gsl_matrix *Z)
{
    svgp_ws *w = ws;
    gpc_svgp_free(w->s);
    w->s = gpc_svgp_alloc(w->latent, Z->size1, Z->size2);
    gsl_matrix_memcpy(w->s->Z, Z);
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
    const gpc_svgp *s = ((const svgp_ws *)ws)->s;
    if (s->C == 1) {
        gpc_svgp_predict(s, k, Xs, mean, cov);
        return GPC_OK;
    }
    /* the latent functions are independent under q: a diagonal C x C
     * covariance per case */
    gsl_matrix *var = gpc_matrix_alloc(Xs->size1, s->C);
    gpc_svgp_predict(s, k, Xs, mean, var);
    gsl_matrix_set_zero(cov);
    for (size_t i = 0; i < Xs->size1; i++)
        for (size_t c = 0; c < s->C; c++)
            gsl_matrix_set(cov, i, c * s->C + c, gsl_matrix_get(var, i, c));
    gsl_matrix_free(var);
    return GPC_OK;
}

/* The multinomial probit's class probabilities: each auxiliary value's
 * variance is 1 plus its latent function's (1 alone at the mean, plug-in). */
/* The softmax's class probabilities: averaged over the latent Gaussian by
 * the rule the multiclass Laplace method predicts with, or softmax at the
 * mean (plug-in). */
static int softmax_prob(svgp_ws *w, const gsl_matrix *mean, const gsl_matrix *cov, int plugin,
                        gsl_matrix *p)
{
    size_t C = mean->size2;
    int st = GPC_OK;
    if (!plugin && !w->softmax_rule)
        w->softmax_rule = gpc_softmax_rule_alloc(C);
    for (size_t i = 0; i < mean->size1 && st == GPC_OK; i++) {
        if (plugin)
            gpc_softmax_plugin(C, gsl_matrix_const_ptr(mean, i, 0), gsl_matrix_ptr(p, i, 0));
        else
            st = gpc_softmax_expect(w->softmax_rule, gsl_matrix_const_ptr(mean, i, 0),
                                    gsl_matrix_const_ptr(cov, i, 0), gsl_matrix_ptr(p, i, 0));
    }
    return st;
}

static int svgp_mc_prob(void *ws, gpc_lik lik, double eps, const gsl_matrix *mean,
                        const gsl_matrix *cov, int plugin, gsl_matrix *p)
{
    svgp_ws *w = ws;
    if (w->lik == GPC_LIK_SOFTMAX)
        return softmax_prob(w, mean, cov, plugin, p);
    size_t C = mean->size2, m = mean->size1;
    (void)lik;
    (void)eps;
    /* each case by one thread with its own rule: the same bits on any
     * number of threads */
    int now = gpc_parallel_threads(), threads = m * C >= PROB_PARALLEL_MIN_WORK
                                                    ? (now < w->nthreads ? now : w->nthreads)
                                                    : 1;
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
        gpc_mprobit_rule *rule = w->thread_rule[omp_get_thread_num()];
        double *nu2 = gpc_mallocarray(C, sizeof *nu2);
#pragma omp for schedule(dynamic, 8)
        for (size_t i = 0; i < m; i++) {
            for (size_t c = 0; c < C; c++)
                nu2[c] = 1.0 + (plugin ? 0.0 : gsl_matrix_get(cov, i, c * C + c));
            gpc_mprobit_probs(rule, gsl_matrix_const_ptr(mean, i, 0), nu2,
                              gsl_matrix_ptr(p, i, 0));
        }
        free(nu2);
    }
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

/* What the binary and the multiclass entries share: all but the latent
 * count, the likelihoods, the workspace size and the probabilities. */
#define SVGP_OPS_SHARED                                                                           \
    .name = "svgp", .title = "the sparse variational method", .state_columns = "m S",           \
    .state_width = 0, .inducing = 1, .has_evidence = 1, .label_noise = 0, .alloc = svgp_alloc,  \
    .free = svgp_free, .set = svgp_set, .evidence = svgp_evidence, .forget = svgp_forget,        \
    .state_get = svgp_state_get, .state_set = svgp_state_set,                                    \
    .inducing_inputs = svgp_inducing_inputs, .set_inducing_inputs = svgp_set_inducing_inputs,    \
    .evidence_inducing = svgp_evidence_inducing,                                                 \
    .predict = svgp_predict, .loo = svgp_loo, .report = svgp_report

const gpc_method_ops gpc_method_svgp_ops = {
    SVGP_OPS_SHARED,
    .latent = 1,
    .default_lik = "logistic",
    .check_lik = svgp_check_lik,
    .workspace = svgp_workspace,
    .prob = gpc_method_binary_prob,
};

const gpc_method_ops gpc_method_svgp_mc_ops = {
    SVGP_OPS_SHARED,
    .latent = 0,
    .default_lik = "mprobit",
    .check_lik = svgp_mc_check_lik,
    .workspace = svgp_mc_workspace,
    .prob = svgp_mc_prob,
};
