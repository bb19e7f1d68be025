#include "hyper/robust.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_math.h>

#include "base/alloc.h"
#include "base/err.h"

/* Learning the label noise is built on EP: its derivative in eps and its
 * posterior marginals. */
static gpc_ep *ep_of(const gpc_evidence *ev)
{
    return gpc_evidence_workspace(ev, &gpc_method_ep_ops);
}

void gpc_robust_defaults(gpc_robust_opts *o)
{
    o->mode = GPC_ROBUST_FIXED;
    o->eps = 0.0;
    o->optimize = 1;
    gpc_optimize_defaults(&o->opt);
    o->steps_per_em = 5;
    o->max_em = 500;
    o->tol = 1e-5; /* the gradient steps after EM do the fine work */
    o->evidence_rtol = 1e-5;
}

double gpc_robust_flip_rate(const gpc_ep *e, const gsl_vector *y)
{
    double sum = 0.0;
    for (size_t i = 0; i < e->n; i++) {
        double m = gsl_vector_get(e->mu, i), v = gsl_matrix_get(e->Sigma, i, i);
        double z = gsl_vector_get(y, i) * m / sqrt(v);
        sum += gsl_cdf_ugaussian_Q(z); /* 1 - w_i without cancellation */
    }
    return sum / (double)e->n;
}

/* The log evidence at theta with label noise eps (EP state left current). */
static int evaluate(gpc_evidence *ev, const double *theta, double eps, double *logz)
{
    int st = gpc_evidence_set_label_noise(ev, eps);
    return st != GPC_OK ? st : gpc_evidence_eval(ev, theta, logz, NULL);
}

/* Kernel hyperparameters uphill at the current label noise; how the climb
 * ended into res if not NULL. */
static int climb(gpc_evidence *ev, double *theta, const gpc_optimize_opts *opt,
                 gpc_robust_result *res)
{
    gpc_optimize_result r;
    int st = gpc_evidence_optimize(ev, theta, opt, &r);
    if (st == GPC_OK && res) {
        res->converged = r.converged;
        res->stop = r.stop;
    }
    return st;
}

static int fit_fixed(gpc_evidence *ev, double *theta, const gpc_robust_opts *o, double eps,
                     gpc_robust_result *res)
{
    int st = gpc_evidence_set_label_noise(ev, eps);
    res->converged = 1;
    res->stop = GPC_STOP_CONVERGED;
    if (st == GPC_OK && o->optimize)
        st = climb(ev, theta, &o->opt, res);
    res->eps = eps;
    return st != GPC_OK ? st : evaluate(ev, theta, eps, &res->log_evidence);
}

/* One E-step at eps: steps_per_em BFGS iterations on the kernel (their
 * progress shown only with -v -v), then EP at the result, evidence in *z. */
static int em_estep(gpc_evidence *ev, double *theta, const gpc_robust_opts *o, double eps,
                    double *z)
{
    gpc_optimize_opts inner = o->opt;
    inner.max_iter = o->steps_per_em;
    inner.restarts = 0;
    int st = GPC_OK, saved = gpc_verbosity;
    if (o->optimize) {
        gpc_verbosity = saved > 1 ? saved : 0;
        st = gpc_evidence_set_label_noise(ev, eps);
        if (st == GPC_OK)
            st = climb(ev, theta, &inner, NULL);
        gpc_verbosity = saved;
    }
    return st != GPC_OK ? st : evaluate(ev, theta, eps, z);
}

/* The joint objective of the finish: theta and u = logit(2 eps), so that
 * eps stays in (0, 1/2); the prior (MAP) is on theta alone. */
typedef struct {
    gpc_evidence *ev;
    const gpc_optimize_opts *opt;
    size_t p;
    double deps;  /* d log Z / d eps at the last evaluation */
} joint;

static double eps_of(double u) { return 0.5 / (1.0 + exp(-u)); }

static int joint_eval(void *ctx, const double *x, double *value, double *grad)
{
    joint *j = ctx;
    double eps = eps_of(x[j->p]);
    int st = gpc_evidence_set_label_noise(j->ev, eps);
    if (st == GPC_OK)
        st = gpc_evidence_eval(j->ev, x, value, grad);
    if (st != GPC_OK)
        return st;
    j->deps = gpc_ep_dlogz_deps(ep_of(j->ev), j->ev->y);
    *value += gpc_optimize_log_prior(j->opt, j->p, x, grad);
    if (grad)
        grad[j->p] = j->deps * eps * (1.0 - 2.0 * eps); /* d eps / d u */
    return GPC_OK;
}

/* BFGS on (theta, logit(2 eps)) from start and eps0; the end in x (p + 1
 * values), its objective in *value.  Non-zero status if no start worked. */
static int climb_joint(gpc_evidence *ev, const gpc_robust_opts *o, const double *start,
                       double eps0, double *x, double *value, gpc_stop *stop)
{
    size_t p = gpc_kernel_nparams(ev->kernel);
    unsigned char *fixed = gpc_calloc(p + 1, 1);
    for (size_t j = 0; j < p; j++) {
        x[j] = start[j];
        fixed[j] = !o->optimize || (o->opt.fixed && o->opt.fixed[j]);
    }
    x[p] = log(2.0 * eps0) - log1p(-2.0 * eps0);
    joint J = {ev, &o->opt, p, 0.0};
    gpc_optimize_opts jo = o->opt;
    jo.use_prior = 0;
    jo.fixed = fixed;
    jo.restarts = 0;
    jo.label = o->opt.use_prior ? "log posterior" : "log evidence";
    gpc_optimize_result r;
    int st = gpc_optimize(joint_eval, &J, p + 1, x, &jo, &r);
    *value = r.value;
    *stop = r.stop;
    free(fixed);
    return st;
}

/* From EM's end, BFGS on the kernel's free hyperparameters and eps together
 * with the analytic gradient: K&G's EM stops at a fixed point of its
 * approximate M-step, which is not a maximum of the EP evidence (on Pima it
 * stopped at eps 0.197 where the evidence peaks near 0.12).  EM's inner
 * steps can also leave a hyperparameter far out on a plateau (a jitter
 * driven to e^-33 at a large eps), where its gradient vanishes and BFGS
 * stays; so the climb is also made from the starting hyperparameters with
 * EM's eps, and the better end kept.  Sets theta, *eps and res. */
static int finish(gpc_evidence *ev, double *theta, const double *theta0,
                  const gpc_robust_opts *o, double *eps, gpc_robust_result *res)
{
    size_t p = gpc_kernel_nparams(ev->kernel);
    double *x = gpc_malloc((p + 1) * sizeof *x), *x2 = gpc_malloc((p + 1) * sizeof *x2);
    double v = -HUGE_VAL, v2 = -HUGE_VAL;
    gpc_stop conv = GPC_STOP_ITERATIONS, conv2 = GPC_STOP_ITERATIONS;
    int st = climb_joint(ev, o, theta, *eps, x, &v, &conv), st2 = GPC_ENUM;
    if (o->optimize && memcmp(theta, theta0, p * sizeof *theta) != 0) {
        int saved = gpc_verbosity; /* a check: its failure is no news (-v shows it) */
        gpc_verbosity = saved > 1 ? saved : 0;
        st2 = climb_joint(ev, o, theta0, *eps, x2, &v2, &conv2);
        gpc_verbosity = saved;
    }
    if (st2 == GPC_OK && (st != GPC_OK || v2 > v)) {
        memcpy(x, x2, (p + 1) * sizeof *x);
        conv = conv2;
        st = GPC_OK;
    }
    if (st == GPC_OK) {
        memcpy(theta, x, p * sizeof *theta);
        *eps = eps_of(x[p]);
        st = evaluate(ev, theta, *eps, &res->log_evidence);
    }
    if (st == GPC_OK) {
        res->deps = gpc_ep_dlogz_deps(ep_of(ev), ev->y);
        res->converged = conv == GPC_STOP_CONVERGED;
        res->stop = conv;
        gpc_info(1, "label noise %.8g at the evidence maximum, d log Z / d eps = %.3g",
                 *eps, res->deps);
    }
    free(x);
    free(x2);
    return st;
}

/* Times an M-step that EP cannot follow is halved back toward the last eps
 * at which it converged, or a start it cannot follow doubled: EP's fixed
 * point is unstable for some label noise (outliers give sites of negative
 * precision), usually small eps and a narrow range of it. */
#define EM_BACKOFFS 4

/* EM over eps (see robust.h). */
static int fit_em(gpc_evidence *ev, double *theta, const gpc_robust_opts *o,
                  gpc_robust_result *res)
{
    size_t p = gpc_kernel_nparams(ev->kernel);
    double *good = gpc_malloc(p * sizeof *good), *theta0 = gpc_malloc(p * sizeof *theta0);
    double eps = o->eps > 0.0 ? o->eps : 0.01, good_eps = -1.0, prev = -HUGE_VAL, z = 0.0;
    memcpy(theta0, theta, p * sizeof *theta0);
    int st = GPC_OK;
    res->converged = 0;
    res->stop = GPC_STOP_ITERATIONS;
    for (res->em_iterations = 1; res->em_iterations <= o->max_em; res->em_iterations++) {
        st = em_estep(ev, theta, o, eps, &z);
        for (int b = 0; st == GPC_ENUM && good_eps < 0.0 && b < EM_BACKOFFS; b++) {
            gpc_info(2, "EM: at the starting label noise %.8g, %s; starting from %.8g instead",
                     eps, gpc_errmsg(), 2.0 * eps);
            eps *= 2.0;
            st = em_estep(ev, theta, o, eps, &z);
        }
        for (int b = 0; st == GPC_ENUM && good_eps >= 0.0 && b < EM_BACKOFFS; b++) {
            gpc_info(2, "EM iteration %d: at label noise %.8g, %s; back to %.8g",
                     res->em_iterations, eps, gpc_errmsg(), 0.5 * (eps + good_eps));
            eps = 0.5 * (eps + good_eps);
            memcpy(theta, good, p * sizeof *theta);
            st = em_estep(ev, theta, o, eps, &z);
        }
        if (st == GPC_ENUM && good_eps >= 0.0) {
            gpc_info(2, "EM stopped at iteration %d: EP does not converge at label noise %.8g; "
                     "going on from %.8g", res->em_iterations, eps, good_eps);
            eps = good_eps;
            memcpy(theta, good, p * sizeof *theta);
            st = evaluate(ev, theta, eps, &z);
            break;
        }
        if (st != GPC_OK)
            break;
        good_eps = eps;
        memcpy(good, theta, p * sizeof *good);
        double next = gpc_robust_flip_rate(ep_of(ev), ev->y);
        if (!(next < 0.5)) {
            st = gpc_fail(GPC_ENUM, "EM: the flip probability reached 1/2 at iteration %d; "
                          "the labels carry no information under this kernel",
                          res->em_iterations);
            break;
        }
        gpc_info(res->em_iterations % 10 == 0 ? 1 : 2,
                 "EM iteration %d: label noise %.8g, log evidence %.10g", res->em_iterations,
                 eps, z);
        int done = fabs(next - eps) < o->tol && fabs(z - prev) < o->evidence_rtol * (1 + fabs(z));
        eps = next;
        prev = z;
        if (done) {
            res->converged = 1;
            res->stop = GPC_STOP_CONVERGED;
            break;
        }
    }
    free(good);
    if (st != GPC_OK) {
        free(theta0);
        return st;
    }
    if (res->em_iterations > o->max_em)
        gpc_info(2, "EM stopped after %d iterations before the label noise settled (%.8g); "
                 "the gradient steps go on from there", o->max_em, eps);
    st = finish(ev, theta, theta0, o, &eps, res);
    free(theta0);
    res->eps = eps;
    return st;
}

int gpc_robust_fit(gpc_evidence *ev, double *theta, const gpc_robust_opts *o,
                   gpc_robust_result *res)
{
    res->em_iterations = 0;
    res->plain_evidence = res->robust_evidence = GSL_NAN;
    if (o->mode == GPC_ROBUST_FIXED)
        return fit_fixed(ev, theta, o, o->eps, res);
    const gpc_ep *ep = ep_of(ev);
    if (!ep || ep->noise.sigma != 0.0)
        return gpc_fail(GPC_EUSAGE, "learning the label noise needs binary EP with the step "
                        "likelihood (-M ep -l step, not one-vs-rest)");
    if (o->mode == GPC_ROBUST_EM)
        return fit_em(ev, theta, o, res);

    size_t p = gpc_kernel_nparams(ev->kernel);
    double *theta_em = gpc_malloc(p * sizeof *theta_em);
    for (size_t j = 0; j < p; j++)
        theta_em[j] = theta[j];
    gpc_robust_result plain = *res;
    int st = fit_fixed(ev, theta, o, 0.0, &plain);
    if (st == GPC_ENUM) { /* without label noise EP can fail on outliers: that model loses */
        gpc_info(1, "the fit without label noise failed (%s); keeping the robust model",
                 gpc_errmsg());
        plain.log_evidence = -HUGE_VAL;
        st = GPC_OK;
    }
    if (st == GPC_OK)
        st = fit_em(ev, theta_em, o, res);
    if (st == GPC_OK) {
        res->plain_evidence = plain.log_evidence;
        res->robust_evidence = res->log_evidence;
        gpc_info(1, "log evidence without label noise %.10g, with %.6g: %.10g; keeping %s",
                 plain.log_evidence, res->eps, res->log_evidence,
                 res->log_evidence > plain.log_evidence ? "the robust model" : "eps = 0");
        if (res->log_evidence > plain.log_evidence) {
            for (size_t j = 0; j < p; j++)
                theta[j] = theta_em[j];
        } else {
            res->eps = 0.0;
            res->log_evidence = plain.log_evidence;
            res->converged = plain.converged;
            res->stop = plain.stop;
            st = evaluate(ev, theta, 0.0, &res->log_evidence);
            if (st == GPC_OK)
                res->deps = gpc_ep_dlogz_deps(ep_of(ev), ev->y);
        }
    }
    free(theta_em);
    return st;
}
