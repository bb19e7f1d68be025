/* hmc — Hybrid Monte Carlo (Duane et al. 1987; Neal 2011) on an
 * unconstrained vector, here the log hyperparameters of a kernel, as in
 * Barber & Williams (1997): leapfrog trajectories on H = U(theta) + |p|^2 / 2
 * with unit masses, accepted or rejected by Metropolis on H.
 *
 * Momenta are drawn afresh every iteration, or with persistence alpha > 0
 * refreshed partially, p <- alpha p + sqrt(1 - alpha^2) n, and negated on
 * rejection (Horowitz 1991; Neal 2011, sec. 5.3).
 *
 * Every iteration draws its random numbers from a generator seeded by
 * (seed, iteration number) and starts by evaluating U at theta after the
 * potential's restart hook, so an iteration depends only on theta, the
 * momentum and its number: a chain continued from its last state gives
 * exactly what one longer run gives. */
#ifndef GPC_HMC_H
#define GPC_HMC_H

#include <stddef.h>

#include <gsl/gsl_rng.h>

typedef struct {
    /* U(theta), its gradient, and a value reported beside it (the log
     * evidence); returns GPC_OK or an error status. */
    int (*eval)(void *ctx, const double *theta, double *U, double *grad, double *aux);
    /* Optional: forget warm-start state, so the next eval depends on theta only. */
    void (*restart)(void *ctx);
    void *ctx;
} gpc_potential;

typedef struct {
    double step;        /* leapfrog step size epsilon */
    int leapfrog;       /* leapfrog steps per trajectory */
    double persistence; /* alpha in [0, 1): 0 draws momenta afresh */
    unsigned long seed;
    const unsigned char *fixed; /* if not NULL, fixed[j] != 0 keeps theta[j]: its
                                   momentum stays 0 and no random number is drawn for it */
} gpc_hmc_opts;

typedef struct {
    size_t p;
    double *theta, *mom;     /* the state: position and (persistent) momentum */
    double U, aux;           /* potential and reported value at theta */
    long iteration;          /* iterations done */
    int accepted;            /* the last iteration's trajectory was accepted */
    double dH;               /* H at its end minus H at its start */
    double accept_prob;      /* its Metropolis acceptance probability,
                                min(1, exp(-dH)); 0 if it failed */
    long n_accepted, n_evals; /* counts over this run */
    double *grad, *th1, *g1, *p1; /* workspace */
} gpc_hmc;

gpc_hmc *gpc_hmc_alloc(size_t p);
void gpc_hmc_free(gpc_hmc *h);

/* Set the state: position theta, momentum mom (NULL for zero) and the
 * number of iterations already done. */
void gpc_hmc_set_state(gpc_hmc *h, const double *theta, const double *mom, long iteration);

/* A generator for iteration it of a chain with this seed, its own for
 * every iteration (so that any iteration can be rerun from the state
 * before it); the caller frees it.  Also seeds gpc-hmc's Gibbs sampler. */
gsl_rng *gpc_hmc_iteration_rng(unsigned long seed, long it);

/* One iteration: a trajectory of opts->leapfrog steps and the Metropolis
 * decision.  A trajectory on which U cannot be evaluated (e.g. the Laplace
 * iteration fails at extreme hyperparameters) is rejected.  Returns an
 * error only when U cannot be evaluated at the current state. */
int gpc_hmc_iterate(gpc_hmc *h, const gpc_potential *U, const gpc_hmc_opts *opts);

/* The total energy change of one trajectory from the current state with
 * the given momentum, without accepting it (for tests of the integrator). */
int gpc_hmc_energy_error(gpc_hmc *h, const gpc_potential *U, const gpc_hmc_opts *opts,
                         const double *mom, double *dH);

#endif
