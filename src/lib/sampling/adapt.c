#include "sampling/adapt.h"

#include <math.h>

/* Hoffman & Gelman's recommended constants (sec. 3.2.1). */
static const double GAMMA = 0.05, T0 = 10.0, KAPPA = 0.75;

void gpc_step_adapt_init(gpc_step_adapt *a, double eps0, double target)
{
    /* mu above log eps0: the paper's choice, so that the first steps try
     * larger values, which are cheaper to learn from than smaller ones */
    a->mu = log(10.0 * eps0);
    a->target = target;
    a->m = 0;
    a->hbar = 0.0;
    a->log_step_bar = 0.0;
}

double gpc_step_adapt_update(gpc_step_adapt *a, double alpha)
{
    double m = (double)++a->m, w = 1.0 / (m + T0);
    a->hbar = (1.0 - w) * a->hbar + w * (a->target - alpha);
    double log_step = a->mu - sqrt(m) / GAMMA * a->hbar, eta = pow(m, -KAPPA);
    a->log_step_bar = eta * log_step + (1.0 - eta) * a->log_step_bar;
    return exp(log_step);
}

double gpc_step_adapt_final(const gpc_step_adapt *a) { return exp(a->log_step_bar); }
