#include "hyper/prior.h"

#include <math.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_sf_psi.h>

/* The integrand over v = log alpha, h(v) = e^v (u - r) - lgamma(e^v) + s v,
 * less its maximum; power 1 multiplies by alpha (for E[alpha | u]). */
typedef struct {
    double ur, s, hmax;
    int power;
} integrand;

static double h_of(const integrand *q, double v)
{
    double a = exp(v);
    return a * q->ur - lgamma(a) + q->s * v;
}

static double integrand_fn(double v, void *p)
{
    const integrand *q = p;
    double e = h_of(q, v) - q->hmax + (q->power ? v : 0.0);
    /* far out, e^v (u - r) - lgamma(e^v) is inf - inf: the integrand is 0 */
    return e > -746.0 ? exp(e) : 0.0;
}

/* h'(v) = e^v (u - r - psi(e^v)) + s falls from 1 + s to -inf and every
 * zero is a maximum (h'' = -s - alpha^2 psi'(alpha) there), so bisection
 * finds the single mode. */
static double mode_of(const integrand *q)
{
    double lo = -60.0, hi = 60.0;
    for (int it = 0; it < 200 && hi - lo > 1e-9; it++) {
        double v = 0.5 * (lo + hi), a = exp(v);
        double d = a * (q->ur - gsl_sf_psi(a)) + q->s;
        if (d > 0)
            lo = v;
        else
            hi = v;
    }
    return 0.5 * (lo + hi);
}

/* int exp(h(v) - hmax) (times e^v if power) dv, split at the mode so the
 * peak sits at an end of each half-line, where the transformed rules look. */
static double integrate(integrand *q, double vmode, gsl_integration_workspace *w)
{
    gsl_function F = {integrand_fn, q};
    double left = 0.0, right = 0.0, err;
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    gsl_integration_qagil(&F, vmode, 0.0, 1e-11, w->limit, w, &left, &err);
    gsl_integration_qagiu(&F, vmode, 0.0, 1e-11, w->limit, w, &right, &err);
    gsl_set_error_handler(old);
    return left + right;
}

double gpc_prior_weight(double u, double shape, double rate, double *dlp)
{
    if (!isfinite(u)) {
        if (dlp)
            *dlp = NAN;
        return -INFINITY;
    }
    integrand q = {u - rate, shape, 0.0, 0};
    double vm = mode_of(&q);
    q.hmax = h_of(&q, vm);
    gsl_integration_workspace *w = gsl_integration_workspace_alloc(200);
    double I0 = integrate(&q, vm, w);
    if (dlp) {
        q.power = 1;
        *dlp = integrate(&q, vm, w) / I0 - exp(u);
    }
    gsl_integration_workspace_free(w);
    return -exp(u) + shape * log(rate) - lgamma(shape) + q.hmax + log(I0);
}

/* log of a Gamma(alpha, 1) draw, exact for small alpha too, where the draw
 * itself would underflow: G_alpha = G_{alpha+1} U^{1/alpha}. */
static double log_gamma_draw(gsl_rng *r, double alpha)
{
    if (alpha >= 1.0)
        return log(gsl_ran_gamma(r, alpha, 1.0));
    return log(gsl_ran_gamma(r, alpha + 1.0, 1.0)) + log(gsl_rng_uniform_pos(r)) / alpha;
}

void gpc_prior_draw_weights(gsl_rng *r, size_t J, double shape, double rate, double *u)
{
    double mx = -INFINITY, sum = 0.0;
    for (size_t t = 0; t < J; t++) {
        double alpha = gsl_ran_gamma(r, shape, 1.0 / rate); /* GSL takes the scale */
        u[t] = log_gamma_draw(r, alpha > 1e-300 ? alpha : 1e-300);
        mx = fmax(mx, u[t]);
    }
    for (size_t t = 0; t < J; t++)
        sum += exp(u[t] - mx);
    for (size_t t = 0; t < J; t++)
        u[t] -= mx + log(sum);
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

double gpc_log_prior(const gpc_kernel *k, size_t p, const double *theta, double mean, double sd,
                     double *grad)
{
    double shape, rate, lp = 0.0;
    if (!k || !gpc_kernel_simplex(k, &shape, &rate))
        return gpc_log_prior_normal(p, theta, mean, sd, grad);
    for (size_t j = 0; j < p; j++) {
        if (gpc_kernel_is_weight(k, j)) {
            double d;
            lp += gpc_prior_weight(theta[j], shape, rate, grad ? &d : NULL);
            if (grad)
                grad[j] += d;
        } else {
            lp += gpc_log_prior_normal(1, theta + j, mean, sd, grad ? grad + j : NULL);
        }
    }
    return lp;
}
