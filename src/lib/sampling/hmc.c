#include "sampling/hmc.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "base/alloc.h"
#include "base/err.h"

gpc_hmc *gpc_hmc_alloc(size_t p)
{
    gpc_hmc *h = gpc_calloc(1, sizeof *h);
    h->p = p;
    double *block = gpc_calloc(6 * p, sizeof *block);
    h->theta = block;
    h->mom = block + p;
    h->grad = block + 2 * p;
    h->th1 = block + 3 * p;
    h->g1 = block + 4 * p;
    h->p1 = block + 5 * p;
    return h;
}

void gpc_hmc_free(gpc_hmc *h)
{
    if (!h)
        return;
    free(h->theta);
    free(h);
}

void gpc_hmc_set_state(gpc_hmc *h, const double *theta, const double *mom, long iteration)
{
    memcpy(h->theta, theta, h->p * sizeof *theta);
    if (mom)
        memcpy(h->mom, mom, h->p * sizeof *mom);
    else
        memset(h->mom, 0, h->p * sizeof *h->mom);
    h->iteration = iteration;
}

/* A generator for iteration `it` of the chain with this seed (SplitMix64
 * finaliser on the pair), so that iterations can be rerun independently. */
gsl_rng *gpc_hmc_iteration_rng(unsigned long seed, long it)
{
    uint64_t z = (uint64_t)seed * 0x9E3779B97F4A7C15u + (uint64_t)it + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    z ^= z >> 31;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, (unsigned long)(z & 0xffffffffu) ^ (unsigned long)(z >> 32));
    return r;
}

static double kinetic(const double *p, size_t n)
{
    double s = 0.0;
    for (size_t j = 0; j < n; j++)
        s += p[j] * p[j];
    return 0.5 * s;
}

/* Evaluate U at the current state from scratch. */
static int evaluate_start(gpc_hmc *h, const gpc_potential *U)
{
    if (U->restart)
        U->restart(U->ctx);
    h->n_evals++;
    return U->eval(U->ctx, h->theta, &h->U, h->grad, &h->aux);
}

/* A fixed coordinate has momentum 0 throughout, so the leapfrog never
 * moves it and it adds nothing to the kinetic energy. */
static int is_fixed(const gpc_hmc_opts *o, size_t j) { return o->fixed && o->fixed[j]; }

/* Leapfrog from (theta, grad) with momentum p1 (in/out) into th1, g1; U1 and
 * aux1 at the end.  Returns nonzero if U could not be evaluated on the way. */
static int leapfrog(gpc_hmc *h, const gpc_potential *U, const gpc_hmc_opts *o, double *U1,
                    double *aux1)
{
    size_t p = h->p;
    double eps = o->step;
    memcpy(h->th1, h->theta, p * sizeof(double));
    memcpy(h->g1, h->grad, p * sizeof(double));
    for (size_t j = 0; j < p; j++)
        if (!is_fixed(o, j))
            h->p1[j] -= 0.5 * eps * h->g1[j];
    for (int l = 1; l <= o->leapfrog; l++) {
        for (size_t j = 0; j < p; j++)
            h->th1[j] += eps * h->p1[j];
        h->n_evals++;
        if (U->eval(U->ctx, h->th1, U1, h->g1, aux1) != GPC_OK || !isfinite(*U1))
            return 1;
        double scale = l < o->leapfrog ? 1.0 : 0.5;
        for (size_t j = 0; j < p; j++)
            if (!is_fixed(o, j))
                h->p1[j] -= scale * eps * h->g1[j];
    }
    return 0;
}

static void draw_momentum(gpc_hmc *h, gsl_rng *r, const gpc_hmc_opts *o)
{
    double alpha = o->persistence, c = sqrt(1.0 - alpha * alpha);
    for (size_t j = 0; j < h->p; j++)
        h->mom[j] = is_fixed(o, j) ? 0.0
                                   : alpha * h->mom[j] + c * gsl_ran_gaussian_ziggurat(r, 1.0);
}

int gpc_hmc_iterate(gpc_hmc *h, const gpc_potential *U, const gpc_hmc_opts *o)
{
    int st = evaluate_start(h, U);
    if (st != GPC_OK)
        return st;
    gsl_rng *r = gpc_hmc_iteration_rng(o->seed, h->iteration);
    draw_momentum(h, r, o);
    memcpy(h->p1, h->mom, h->p * sizeof(double));
    double H0 = h->U + kinetic(h->mom, h->p), U1, aux1;
    int failed = leapfrog(h, U, o, &U1, &aux1);
    double H1 = failed ? HUGE_VAL : U1 + kinetic(h->p1, h->p);
    h->dH = H1 - H0;
    h->accept_prob = failed ? 0.0 : h->dH <= 0 ? 1.0 : exp(-h->dH);
    double u = gsl_rng_uniform_pos(r);
    h->accepted = !failed && log(u) < -h->dH;
    if (h->accepted) {
        memcpy(h->theta, h->th1, h->p * sizeof(double));
        memcpy(h->grad, h->g1, h->p * sizeof(double));
        memcpy(h->mom, h->p1, h->p * sizeof(double));
        h->U = U1;
        h->aux = aux1;
        h->n_accepted++;
    } else {
        for (size_t j = 0; j < h->p; j++) /* persistent momentum reverses */
            h->mom[j] = -h->mom[j];
    }
    h->iteration++;
    gsl_rng_free(r);
    return GPC_OK;
}

int gpc_hmc_energy_error(gpc_hmc *h, const gpc_potential *U, const gpc_hmc_opts *opts,
                         const double *mom, double *dH)
{
    int st = evaluate_start(h, U);
    if (st != GPC_OK)
        return st;
    memcpy(h->p1, mom, h->p * sizeof(double));
    double H0 = h->U + kinetic(mom, h->p), U1, aux1;
    if (leapfrog(h, U, opts, &U1, &aux1))
        return gpc_fail(GPC_ENUM, "the potential could not be evaluated on the trajectory");
    *dH = U1 + kinetic(h->p1, h->p) - H0;
    return GPC_OK;
}
