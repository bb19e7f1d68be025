/* adapt — the leapfrog step of HMC tuned during a warm-up by dual averaging
 * (Hoffman & Gelman 2014, sec. 3.2 and Algorithm 5; Nesterov 2009).
 *
 * After iteration m of the warm-up, with acceptance statistic alpha_m (the
 * Metropolis acceptance probability min(1, exp(-dH)) of its trajectory):
 *
 *   Hbar_m      = (1 - 1/(m + t0)) Hbar_{m-1} + (delta - alpha_m) / (m + t0)
 *   log eps_m   = mu - sqrt(m) / gamma * Hbar_m          (the next step)
 *   log ebar_m  = m^-kappa log eps_m + (1 - m^-kappa) log ebar_{m-1}
 *
 * with mu = log(10 eps_0), Hbar_0 = 0, log ebar_0 = 0 and the constants
 * the paper recommends, gamma = 0.05, t0 = 10, kappa = 0.75.  The step
 * eps_m drives the acceptance rate towards delta; after the warm-up the
 * step is frozen at ebar, the average of the later steps, so that the
 * chain from then on is an ordinary (time-homogeneous) Markov chain. */
#ifndef GPC_ADAPT_H
#define GPC_ADAPT_H

typedef struct {
    double mu, target;       /* shrinkage point log(10 eps_0), and delta */
    long m;                  /* updates done */
    double hbar, log_step_bar;
} gpc_step_adapt;

/* Start from the step eps0 > 0 towards the acceptance rate target in (0, 1). */
void gpc_step_adapt_init(gpc_step_adapt *a, double eps0, double target);

/* One update with the acceptance statistic alpha in [0, 1] of the iteration
 * just done; returns the step for the next iteration of the warm-up. */
double gpc_step_adapt_update(gpc_step_adapt *a, double alpha);

/* The step to freeze after the warm-up: exp(log ebar). */
double gpc_step_adapt_final(const gpc_step_adapt *a);

#endif
