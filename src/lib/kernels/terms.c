#include "kernels/kernel-impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_math.h>

/* Value of one term at a pair of rows (xa, xb); `same` says the pair is one
 * training case with itself (only jitter cares), and jb is xb's number among
 * the training cases (only gram cares: it reads xa's similarity to training
 * case jb from xa's own columns).  If g is not NULL it gets the derivatives
 * with respect to the term's log hyperparameters. */
double gpc_term_pair(const term *t, const double *eth, const double *xa, const double *xb,
                     size_t jb, int same, double *g)
{
    switch (t->type) {
    case T_ARD: {
        double q = 0.0;
        for (size_t l = 0; l < t->ncols; l++)
            q += col_dist(t, l, eth[1 + l], xa, xb);
        double kv = eth[0] * exp(-0.5 * q);
        if (g) {
            g[0] = kv;
            for (size_t l = 0; l < t->ncols; l++)
                g[1 + l] = col_dist(t, l, -0.5 * kv * eth[1 + l], xa, xb);
        }
        return kv;
    }
    case T_SE: {
        double q = 0.0;
        for (size_t l = 0; l < t->ncols; l++)
            q += col_dist(t, l, 1.0, xa, xb);
        double w = eth[1], kv = eth[0] * exp(-0.5 * w * q);
        if (g) {
            g[0] = kv;
            g[1] = -0.5 * kv * w * q;
        }
        return kv;
    }
    case T_LINEAR: {
        double dot = 0.0;
        for (size_t l = 0; l < t->ncols; l++)
            dot += xa[t->cols[l]] * xb[t->cols[l]];
        double kv = eth[0] * dot;
        if (g)
            g[0] = kv;
        return kv;
    }
    case T_NN: {
        double dab = 0.0, daa = 0.0, dbb = 0.0;
        for (size_t l = 0; l < t->ncols; l++) {
            double a = xa[t->cols[l]], b = xb[t->cols[l]];
            dab += a * b;
            daa += a * a;
            dbb += b * b;
        }
        double v0 = eth[0], s0 = eth[1], s = eth[2];
        double uab = s0 + s * dab, uaa = s0 + s * daa, ubb = s0 + s * dbb;
        double ea = 1.0 + 2.0 * uaa, eb = 1.0 + 2.0 * ubb;
        double rho = 2.0 * uab / sqrt(ea * eb);
        double kv = v0 * M_2_PI * asin(rho);
        if (g) {
            double dk_drho = v0 * M_2_PI / sqrt(1.0 - rho * rho);
            /* d rho = 2 du_ab / sqrt(ea eb) - rho (du_aa / ea + du_bb / eb) */
            double drho_s0 = 2.0 * s0 / sqrt(ea * eb) - rho * (s0 / ea + s0 / eb);
            double drho_s = 2.0 * s * dab / sqrt(ea * eb) - rho * (s * daa / ea + s * dbb / eb);
            g[0] = kv;
            g[1] = dk_drho * drho_s0;
            g[2] = dk_drho * drho_s;
        }
        return kv;
    }
    case T_BIAS: {
        double kv = eth[0];
        if (g)
            g[0] = kv;
        return kv;
    }
    case T_JITTER: {
        double kv = same ? eth[0] : 0.0;
        if (g)
            g[0] = kv;
        return kv;
    }
    case T_GRAM: {
        double kv = eth[0] * xa[t->cols[jb == GRAM_SELF ? 0 : 1 + jb]];
        if (g)
            g[0] = kv;
        return kv;
    }
    }
    return 0.0;
}

double gpc_kernel_pair(const gpc_kernel *k, const double *xa, const double *xb, size_t jb,
                       int same)
{
    double sum = 0.0;
    for (size_t t = 0; t < k->nterms; t++)
        sum += gpc_term_pair(&k->terms[t], k->etheta + k->terms[t].offset, xa, xb, jb, same, NULL);
    return sum;
}

/* On the simplex a weight's log moves every weight: with beta_t^2 =
 * exp(theta_t) / sum_s exp(theta_s), dK/dtheta_t = K_t - beta_t^2 sum_s K_s,
 * where K_t is the term's value, which is what the terms give as their
 * derivative.  Correct the nparams derivatives g in place. */
void gpc_kernel_simplex_correct(const gpc_kernel *k, double *g)
{
    if (!k->simplex)
        return;
    double sum = 0.0;
    for (size_t t = 0; t < k->nterms; t++)
        if (k->terms[t].type != T_JITTER)
            sum += g[k->terms[t].offset];
    for (size_t t = 0; t < k->nterms; t++)
        if (k->terms[t].type != T_JITTER)
            g[k->terms[t].offset] -= k->etheta[k->terms[t].offset] * sum;
}

/* All derivatives of k(xa, xb) with respect to theta, into g[nparams]. */
void gpc_kernel_pair_grad(const gpc_kernel *k, const double *xa, const double *xb, size_t jb,
                          int same, double *g)
{
    for (size_t t = 0; t < k->nterms; t++) {
        const term *tm = &k->terms[t];
        gpc_term_pair(tm, k->etheta + tm->offset, xa, xb, jb, same, g + tm->offset);
    }
    gpc_kernel_simplex_correct(k, g);
}
